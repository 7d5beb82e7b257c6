import assert from "node:assert/strict";
import { test } from "node:test";
import { openSessions } from "../../src/store/connector-sessions.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  bringOnline,
  eventually,
  json,
  passthroughPath,
  READ,
  stopConnector,
  type RequestResource,
} from "./helpers.ts";
import { queueRead, readRequest, untilStatus } from "./waiting-helpers.ts";

/**
 * LEDGER_NOT_RESPONDING (decision 0019): the connector reached the application (a session is open)
 * but the application owes an answer for longer than `LEDGER_NOT_RESPONDING_MS` — a request handed
 * over and not answered (the simulated application's `not_responding` fault), or a company file
 * that never opened (`hang_on_open`). A sync call is then refused at admission with 503
 * LEDGER_NOT_RESPONDING, `Retry-After` and nothing queued; an async call is queued and runs once
 * the application answers again. Time is the service's fake clock.
 */
const LIMIT_MS = 120_000;

function processed(eu: ConnectedEndUser, marker: string): number {
  return eu.connector.events.filter((e) => e.type === "request_processed" && e.requestXml.includes(marker))
    .length;
}

const probe = (name: string): string => `<CustomerQueryRq><FullName>${name}</FullName></CustomerQueryRq>`;

async function assertNotResponding(sys: System, eu: ConnectedEndUser, marker: string): Promise<void> {
  const response = await sys.call("POST", passthroughPath(eu.endUserId), { body: probe(marker) });
  const text = await response.clone().text();
  assert.equal(response.status, 503, text);
  assert.equal(response.headers.get("svc-should-retry"), "true");
  assert.ok(Number(response.headers.get("retry-after")) > 0, "Retry-After");
  const { error } = await json<{
    error: { code: string; type: string; requestId: string; details: { silentSeconds: number } };
  }>(response);
  assert.equal(error.code, "LEDGER_NOT_RESPONDING", text);
  assert.equal(error.type, "INTEGRATION_CONNECTION_ERROR");
  assert.ok(error.details.silentSeconds > LIMIT_MS / 1000, text);
  const recorded = await json<RequestResource>(await sys.call("GET", `/v1/requests/${error.requestId}`));
  assert.equal(recorded.status, "failed");
  assert.deepEqual(
    recorded.timeline.map((e) => e.status),
    ["failed"],
    "refused at admission: never queued",
  );
}

test("a sync call is refused with 503 LEDGER_NOT_RESPONDING while the application owes an answer", async (t) => {
  const sys = await startSystem(t, {
    config: { ...E2E_CONFIG.config, LEDGER_NOT_RESPONDING_MS: String(LIMIT_MS) },
  });
  const clock = sys.fakeClock ?? assert.fail("a fake clock");
  const eu = await sys.connectEndUser({ companyName: "Hung Co" });
  await bringOnline(sys, eu);

  await t.test("a request handed over and never answered", async () => {
    sys.ledger.setFault({ kind: "not_responding" });
    const hung = await queueRead(sys, eu);
    await untilStatus(sys, hung, "sent");
    await clock.advance(LIMIT_MS - 1000);
    const young = sys.call("POST", passthroughPath(eu.endUserId), {
      body: probe("Young"),
      headers: { prefer: "respond-async" },
    });
    assert.equal((await young).status, 202, "an async call is queued");
    await clock.advance(2000);
    await assertNotResponding(sys, eu, "Refused-Hung");
    const queued = await sys.call("POST", passthroughPath(eu.endUserId), {
      body: probe("Queued-Hung"),
      headers: { prefer: "respond-async" },
    });
    assert.equal(queued.status, 202, "async calls still queue");
    const queuedId = (await json<RequestResource>(queued)).id;
    assert.equal((await readRequest(sys, queuedId)).waitingReason, "ledger_not_responding");

    sys.ledger.setFault(null);
    await untilStatus(sys, hung, "succeeded");
    await untilStatus(sys, queuedId, "succeeded");
    const answered = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
    assert.equal(answered.status, 200, `answering again: ${await answered.clone().text()}`);
    assert.equal(processed(eu, "Refused-Hung"), 0, "the refused call never reached the application");
  });

  await t.test("a company file that never opens", async () => {
    await stopConnector(sys, eu);
    sys.ledger.setFault({ kind: "hang_on_open" });
    void eu.connector.checkInNow();
    // The new session, whose company file report never comes (not an older session still closing).
    await eventually("a session waiting for its company file", async () =>
      (await openSessions(sys.deps.db, eu.connectionId)).some((session) => session.phase === "opened"),
    );
    await clock.advance(LIMIT_MS + 1000);
    await assertNotResponding(sys, eu, "Refused-Opening");
    // The dialog closes: the company file opens and its report arrives in the same session.
    sys.ledger.setFault(null);
    await eventually("the company file reported", async () =>
      (await openSessions(sys.deps.db, eu.connectionId)).every((session) => session.phase !== "opened"),
    );
    const answered = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
    assert.equal(answered.status, 200, await answered.clone().text());
    assert.equal(processed(eu, "Refused-Opening"), 0);
  });
});
