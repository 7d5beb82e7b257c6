import assert from "node:assert/strict";
import { test } from "node:test";
import { SimulatedWebConnector } from "../../src/simulator/web-connector.ts";
import { startSystem } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  READ,
  newestRequestIs,
  stopConnector,
  advanceUntil,
  bringOnline,
  connectionOf,
  customerAdd,
  eventually,
  json,
  passthroughPath,
  type RequestResource,
} from "./helpers.ts";

async function requestById(
  sys: Awaited<ReturnType<typeof startSystem>>,
  id: string,
): Promise<RequestResource> {
  return json<RequestResource>(await sys.call("GET", `/v1/requests/${id}`));
}

test("a write whose answer is lost becomes outcome_unknown and is recovered, applied exactly once", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Lost Answer Co" });
  await bringOnline(sys, eu);
  const file = sys.ledger.companyFile(eu.companyFilePath);
  const before = file.count("Customer");
  eu.connector.setFault({ kind: "lose_answer_after_write" });
  // The connector applies the write, drops the answer and stays away until its next update.
  const pending = sys.call("POST", passthroughPath(eu.endUserId), { body: customerAdd("Lost Answer Ltd") });
  await eventually("the application applied the write", async () => file.count("Customer") === before + 1);
  // Next check-in: the service learns the session broke, then asks for the stored result first.
  void eu.connector.checkInNow();
  const res = await pending;
  const text = await res.clone().text();
  let id: string;
  if (res.status === 502) {
    const body = await json<{
      error: { code: string; details: { requestId: string }; retryable: boolean; outcome: string };
    }>(res);
    assert.equal(body.error.code, "LEDGER_WRITE_OUTCOME_UNKNOWN");
    assert.equal(body.error.retryable, false);
    assert.equal(body.error.outcome, "unknown");
    assert.equal(res.headers.get("svc-should-retry"), "false");
    id = body.error.details.requestId;
  } else {
    // The recovery finished before the caller looked: the caller gets the recovered result.
    assert.equal(res.status, 200, text);
    const list = await json<{ data: RequestResource[] }>(await sys.call("GET", "/v1/requests?limit=1"));
    id = list.data[0]?.id ?? "";
  }
  const recovered = await eventually("recovered", async () => {
    const r = await requestById(sys, id);
    return r.status === "succeeded" ? r : null;
  });
  assert.equal(recovered.recovered, true);
  assert.equal(recovered.outcome, "applied");
  assert.match(recovered.result?.xml ?? "", /<CustomerAddRs [^>]*statusCode="0"/);
  assert.equal(file.count("Customer"), before + 1, "never re-sent");
  assert.deepEqual(
    recovered.timeline.map((e) => e.status),
    ["queued", "sent", "outcome_unknown", "succeeded"],
  );
});

test("a write interrupted before the application saw it is reported not applied after recovery", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Not Applied Co" });
  await bringOnline(sys, eu);
  const file = sys.ledger.companyFile(eu.companyFilePath);
  const before = file.count("Customer");
  eu.connector.setFault({ kind: "crash_before_write" });
  const accepted = await json<RequestResource>(
    await sys.call("POST", passthroughPath(eu.endUserId), {
      body: customerAdd("Never Ltd"),
      headers: { prefer: "respond-async" },
    }),
  );
  await eventually("sent", async () => (await requestById(sys, accepted.id)).status === "sent");
  // The end user restarts the Web Connector: the new session reveals the broken one.
  void eu.connector.checkInNow();
  const done = await eventually("resolved", async () => {
    const r = await requestById(sys, accepted.id);
    return r.status === "failed" ? r : null;
  });
  assert.equal(done.outcome, "not_applied");
  assert.equal(done.recovered, false);
  assert.equal(file.count("Customer"), before);
});

test("service killed mid-flight and restarted: the write is recovered, no duplicate", async (t) => {
  const first = await startSystem(null, E2E_CONFIG);
  const eu = await first.connectEndUser({ companyName: "Crash Co" });
  await bringOnline(first, eu);
  const file = first.ledger.companyFile(eu.companyFilePath);
  const before = file.count("Customer");
  first.ledger.setFault({ kind: "slow_processing", ms: 400 });
  const accepted = await json<RequestResource>(
    await first.call("POST", passthroughPath(eu.endUserId), {
      body: customerAdd("Crash Ltd"),
      headers: { prefer: "respond-async" },
    }),
  );
  await eventually("sent", async () => (await requestById(first, accepted.id)).status === "sent");
  // Crash: the HTTP server disappears without a graceful close of sessions and the lease is no
  // longer renewed (nor released); the store survives.
  await first.instance.stop({ release: false });
  await first.app.close();
  await eu.connector.stop();
  first.ledger.setFault(null);
  assert.equal(
    file.count("Customer"),
    before + 1,
    "the application applied the write before the crash was noticed",
  );

  // Teardown order matters: the connector first (a polling connector keeps the server's
  // keep-alive connection busy, so closing the server before it waits ~60 s), then the server,
  // then the store both systems share.
  const restarted = await startSystem(null, { ...E2E_CONFIG, store: first.deps.store });
  let connector: SimulatedWebConnector | null = null;
  t.after(async () => {
    await connector?.stop();
    await restarted.close();
    await first.deps.store.close();
  });
  // At start the crashed instance's lease still runs (it might be a live neighbour): nothing is
  // touched. Once the lease ran out, the restarted instance recovers the crashed one's session: the
  // request that was in flight is interrupted, not re-sent.
  assert.equal(restarted.instance.startup.requestsInterrupted, 0);
  const stillSent = await json<RequestResource>(
    await restarted.call("GET", `/v1/requests/${accepted.id}`, { key: first.project.keys.secretLive }),
  );
  assert.equal(stillSent.status, "sent");
  await restarted.fakeClock?.advance(restarted.deps.config.INSTANCE_LEASE_MS + 1);
  const interrupted = await eventually("the crashed instance's session is recovered", async () => {
    const r = await json<RequestResource>(
      await restarted.call("GET", `/v1/requests/${accepted.id}`, { key: first.project.keys.secretLive }),
    );
    return r.status === "outcome_unknown" ? r : null;
  });
  assert.equal(interrupted.recovered, false);
  // The same end user's connector, pointed at the restarted service (same .qwc, same password).
  connector = new SimulatedWebConnector({
    qwc: eu.connectorQwc.replace(first.url, restarted.url),
    password: eu.password,
    application: first.ledger,
    noOpPauseMs: 20,
    fileIdStamped: true,
  });
  connector.start();
  const done = await eventually("recovered after restart", async () => {
    const r = await json<RequestResource>(
      await restarted.call("GET", `/v1/requests/${accepted.id}`, { key: first.project.keys.secretLive }),
    );
    return r.status === "succeeded" ? r : null;
  });
  assert.equal(done.recovered, true);
  assert.equal(file.count("Customer"), before + 1, "no duplicate");
});

// A file mode conflict is not among them: its requests wait for `retryAt` (file-mode-conflict.test.ts).
test("every injected fault reaches the caller as its error code", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Faulty Co" });
  await bringOnline(sys, eu);
  const other = "C:\\Company Files\\Someone Else.qbw";
  sys.ledger.createCompanyFile(other, { companyName: "Someone Else", seed: "empty" });
  sys.ledger.openCompanyFile(eu.companyFilePath);

  const cases: {
    name: string;
    fault: Parameters<typeof sys.ledger.setFault>[0];
    code: string;
    status: number;
    connection: string;
  }[] = [
    {
      name: "application not running",
      fault: { kind: "app_not_running" },
      code: "LEDGER_CANNOT_START",
      status: 503,
      connection: "ledger_unavailable",
    },
    {
      name: "modal dialog",
      fault: { kind: "modal_dialog" },
      code: "LEDGER_MODAL_DIALOG_OPEN",
      status: 503,
      connection: "ledger_unavailable",
    },
    {
      name: "access not granted",
      fault: { kind: "access_not_granted" },
      code: "LEDGER_ACCESS_NOT_GRANTED",
      status: 403,
      connection: "ledger_unavailable",
    },
    {
      name: "wrong company file",
      fault: { kind: "wrong_company_file", path: other },
      code: "LEDGER_WRONG_COMPANY_FILE_OPEN",
      status: 409,
      connection: "company_file_mismatch",
    },
  ];
  for (const c of cases) {
    await t.test(`${c.name} → ${c.code}`, async () => {
      await stopConnector(sys, eu);
      sys.ledger.setFault(c.fault);
      const pending = sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
      await eventually("queued", async () => {
        const list = await json<{ data: RequestResource[] }>(await sys.call("GET", "/v1/requests?limit=1"));
        return list.data[0]?.status === "queued";
      });
      await eu.connector.runSession();
      const res = await pending;
      assert.equal(res.status, c.status, await res.clone().text());
      const body = await json<{
        error: { code: string; userFacingMessage: string; fixes: { actor: string }[] };
      }>(res);
      assert.equal(body.error.code, c.code);
      assert.ok(
        body.error.fixes.some((f) => f.actor === "end_user"),
        "the end user is told what to do",
      );
      assert.equal((await connectionOf(sys, eu.endUserId)).status, c.connection);
      sys.ledger.setFault(null);
      // The next successful check-in brings the connection back.
      await bringOnline(sys, eu);
    });
  }

  await t.test("slow application → LEDGER_REQUEST_TIMEOUT, then the answer arrives", async () => {
    sys.ledger.setFault({ kind: "slow_processing", ms: 1500 });
    const pending = sys.call("POST", passthroughPath(eu.endUserId), {
      body: READ,
      headers: { "svc-timeout-seconds": "1" },
    });
    await newestRequestIs(sys, "sent");
    const res = await advanceUntil(sys, pending, 1000, 20);
    sys.ledger.setFault(null);
    assert.equal(res.status, 504, await res.clone().text());
    const body = await json<{ error: { code: string; details: { requestId: string } } }>(res);
    assert.equal(body.error.code, "LEDGER_REQUEST_TIMEOUT");
    const done = await eventually("the slow answer arrived", async () => {
      const r = await requestById(sys, body.error.details.requestId);
      return r.status === "succeeded" ? r : null;
    });
    assert.equal(done.outcome, "not_applicable");
  });

  await t.test("connector offline → INTEGRATION_CONNECTION_NOT_ACTIVE for sync calls", async () => {
    await stopConnector(sys, eu);
    eu.connector.setFault({ kind: "offline" });
    await sys.fakeClock?.advance(sys.deps.config.CONNECTION_OFFLINE_AFTER_MS + 1);
    const res = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
    assert.equal(res.status, 503);
    assert.equal(
      (await json<{ error: { code: string } }>(res)).error.code,
      "INTEGRATION_CONNECTION_NOT_ACTIVE",
    );
    assert.equal((await connectionOf(sys, eu.endUserId)).status, "offline");
  });
});
