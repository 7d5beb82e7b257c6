import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem } from "../../src/testing/system.ts";
import { E2E_CONFIG, advanceUntil, bringOnline, json, stopConnector, type ErrorBody } from "./helpers.ts";
import { readRequest, untilStatus } from "./waiting-helpers.ts";

/**
 * The Request resource's fields, row by row (spec: Request): `durationMs` and `timings` measured on
 * the service's clock, which only the test moves, so every figure is known exactly; `ledger` from
 * the hand-over and the answer; `warnings` from a Warn status; `outcome` while a write is sent.
 * Also pins decision 0041 (the outcome a timed-out read carries).
 */

interface Resource {
  id: string;
  status: string;
  outcome: string;
  createdAt: string;
  sentAt: string | null;
  completedAt: string | null;
  durationMs: number | null;
  timings: {
    queuedMs: number | null;
    connectorMs: number | null;
    ledgerMs: number | null;
    totalMs: number | null;
  };
  ledger: {
    xmlVersion: string | null;
    messageSetId: string | null;
    statusCode: number | null;
    statusSeverity: string | null;
  };
  warnings: { code: string; statusCode: number | null; message: string; path: string | null }[];
}

const get = async (sys: Awaited<ReturnType<typeof startSystem>>, id: string): Promise<Resource> =>
  (await readRequest(sys, id)) as unknown as Resource;

test("a write queued 7 s and answered 3 s after it was sent: durationMs, timings, ledger; outcome pending while sent", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const clock = sys.fakeClock ?? assert.fail("a fake clock");
  const eu = await sys.connectEndUser({ companyName: "Timings Co", application: { xmlVersion: "15.0" } });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  const accepted = await sys.call("POST", "/v1/ledger-desktop/customers", {
    endUserId: eu.endUserId,
    body: { name: "Timed Ltd" },
    headers: { prefer: "respond-async" },
  });
  assert.equal(accepted.status, 202, await accepted.clone().text());
  const { id } = await json<Resource>(accepted);
  const queued = await get(sys, id);
  assert.deepEqual(queued.timings, { queuedMs: null, connectorMs: null, ledgerMs: null, totalMs: null });
  assert.equal(queued.durationMs, null);
  assert.equal(queued.ledger.messageSetId, null, "no message set before the hand-over");

  await clock.advance(7000);
  eu.ledger.setFault({ kind: "not_responding" });
  // The session stays open after the answer (the service keeps a warm session), so it is not awaited.
  void eu.connector.runSession();
  const sent = await untilStatus(sys, id, "sent");
  assert.equal(sent.outcome, "pending", "a sent write's outcome is pending");
  const whileSent = await get(sys, id);
  assert.equal(Date.parse(whileSent.sentAt ?? "") - Date.parse(whileSent.createdAt), 7000);
  assert.equal(whileSent.timings.queuedMs, 7000);
  assert.equal(whileSent.timings.connectorMs, 7000, "the connector was stopped: it waited for it to ask");
  assert.equal(whileSent.timings.ledgerMs, null, "not answered yet");
  assert.match(whileSent.ledger.messageSetId ?? "", /\S/, "a write carries a message set ID");
  assert.equal(whileSent.ledger.xmlVersion, "15.0", "the version negotiated with this application");

  await clock.advance(3000);
  eu.ledger.setFault(null);
  const done = await untilStatus(sys, id, "succeeded");
  const final = await get(sys, done.id);
  assert.equal(final.outcome, "applied");
  assert.equal(final.durationMs, 10_000);
  assert.deepEqual(final.timings, { queuedMs: 7000, connectorMs: 7000, ledgerMs: 3000, totalMs: 10_000 });
  assert.equal(final.ledger.messageSetId, whileSent.ledger.messageSetId, "kept once answered");
  assert.equal(final.ledger.statusCode, 0);
  assert.equal(final.ledger.statusSeverity, "Info");
  assert.deepEqual(final.warnings, []);
});

test("a read: no message set ID, outcome not_applicable; a Warn status becomes a LEDGER_WARNING with its status code", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Warnings Co" });
  await bringOnline(sys, eu);
  const created = await sys.call("POST", "/v1/ledger-desktop/customers", {
    endUserId: eu.endUserId,
    body: { name: "Present Ltd" },
  });
  assert.equal(created.status, 201, await created.text());
  // One name exists and one does not: the application answers 500 (Warn) with the one it found.
  const res = await sys.call(
    "GET",
    "/v1/ledger-desktop/customers?fullNames=Present%20Ltd&fullNames=Absent%20Ltd",
    {
      endUserId: eu.endUserId,
    },
  );
  const text = await res.clone().text();
  assert.equal(res.status, 200, text);
  const page = await json<{ data: { fullName: string }[] }>(res);
  assert.deepEqual(
    page.data.map((c) => c.fullName),
    ["Present Ltd"],
  );
  const requestId = res.headers.get("svc-request-id") ?? "";
  const stored = await get(sys, requestId);
  assert.equal(stored.outcome, "not_applicable");
  assert.equal(stored.ledger.messageSetId, null, "a read carries no message set ID");
  assert.equal(stored.ledger.statusCode, 500);
  assert.equal(stored.ledger.statusSeverity, "Warn");
  assert.equal(stored.warnings.length, 1, JSON.stringify(stored.warnings));
  const [warning] = stored.warnings;
  assert.equal(warning?.code, "LEDGER_WARNING");
  assert.equal(warning?.statusCode, 500);
  assert.match(warning?.message ?? "", /Absent Ltd/);
});

test("decision 0041: a timed-out sync write says outcome pending, a timed-out read not_applicable, each as its Request", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Slow Co" });
  await bringOnline(sys, eu);
  for (const [what, method, path, body, outcome] of [
    ["write", "POST", "/v1/ledger-desktop/customers", { name: "Slow Ltd" }, "pending"],
    ["read", "GET", "/v1/ledger-desktop/customers?limit=1", undefined, "not_applicable"],
  ] as const) {
    eu.ledger.setFault({ kind: "not_responding" });
    const pending = sys.call(method, path, {
      endUserId: eu.endUserId,
      headers: { "svc-timeout-seconds": "5" },
      ...(body === undefined ? {} : { body }),
    });
    const res = await advanceUntil(sys, pending, 1000, 60);
    const text = await res.clone().text();
    assert.equal(res.status, 504, `${what}: ${text}`);
    const { error } = await json<ErrorBody & { error: { details: { requestId: string } } }>(res);
    assert.equal(error.code, "LEDGER_REQUEST_TIMEOUT", text);
    assert.equal(error.outcome, outcome, `${what}: ${text}`);
    assert.equal(error.retryable, false, "poll, never resend");
    const stored = await get(sys, error.details.requestId);
    assert.equal(stored.status, "sent", "it keeps running");
    assert.equal(stored.outcome, error.outcome, "the error says what the Request says");
    eu.ledger.setFault(null);
    await untilStatus(sys, stored.id, "succeeded");
  }
});
