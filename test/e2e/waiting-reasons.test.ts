import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem } from "../../src/testing/system.ts";
import {
  advanceUntil,
  bringOnline,
  customerAdd,
  eventually,
  json,
  passthroughPath,
  queueAsync,
  stopConnector,
} from "./helpers.ts";
import {
  WAITING_CONFIG,
  causesOf,
  queueRead,
  readRequest,
  statusEvents,
  subscribeConnectionEvents,
  untilConnection,
  untilSessionOpen,
  untilStatus,
} from "./waiting-helpers.ts";
import { checkEveryAnswer } from "./openapi-contract.ts";

/**
 * `waitingReason`, `queuePosition` and `diagnosis` (spec: Request) through the HTTP API and the
 * simulated connector: each reason is produced by what the connector really does (faults of the
 * simulated application and connector), and read back from the Request.
 */
test("waiting reasons and diagnosis from connector evidence", async (t) => {
  const sys = await startSystem(t, WAITING_CONFIG);
  checkEveryAnswer(sys);
  const clock = sys.fakeClock;
  assert.ok(clock);
  await subscribeConnectionEvents(sys);
  const eu = await sys.connectEndUser({ companyName: "Waiting Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  const answerWait = sys.deps.config.LEDGER_ANSWER_WAIT_MS;

  await t.test("awaiting_check_in and behind_other_requests; queuePosition follows the queue", async () => {
    const [a, b, c] = [await queueRead(sys, eu), await queueRead(sys, eu), await queueRead(sys, eu)];
    const first = await readRequest(sys, a);
    assert.equal(first.queuePosition, 1);
    assert.equal(first.waitingReason, "awaiting_check_in");
    assert.equal(first.diagnosis?.probableCauses[0]?.code, "awaiting_check_in");
    assert.equal(first.diagnosis?.connector.sessionOpen, false);
    assert.equal(first.diagnosis?.connector.ledgerAnswered, null);
    assert.equal(
      first.diagnosis?.connector.checkInIntervalSeconds,
      sys.deps.config.CONNECTOR_CHECK_IN_SECONDS,
    );
    assert.equal((await readRequest(sys, b)).queuePosition, 2);
    assert.equal((await readRequest(sys, b)).waitingReason, "behind_other_requests");
    assert.equal((await causesOf(sys, b))[0], "behind_other_requests");
    assert.equal((await readRequest(sys, c)).queuePosition, 3);
    await sys.call("POST", `/v1/requests/${a}/cancel`);
    assert.equal((await readRequest(sys, b)).queuePosition, 1);
    assert.equal((await readRequest(sys, b)).waitingReason, "awaiting_check_in");
    assert.equal((await readRequest(sys, c)).queuePosition, 2);
    void eu.connector.checkInNow();
    const done = await untilStatus(sys, c, "succeeded");
    assert.equal(done.waitingReason, null);
    assert.equal(done.queuePosition, null);
    assert.equal(done.diagnosis, null, "no diagnosis once finished");
    assert.equal((await readRequest(sys, a)).diagnosis, null, "canceled by the caller: no diagnosis");
    await stopConnector(sys, eu);
  });

  await t.test("a sync call that times out before sending keeps the diagnosis of that moment", async () => {
    const call = sys.call("POST", passthroughPath(eu.endUserId), {
      body: "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>",
      headers: { "svc-timeout-seconds": "2" },
    });
    const res = await advanceUntil(sys, call, 500);
    assert.equal(res.status, 504);
    const { error } = await json<{ error: { code: string; requestId: string } }>(res);
    assert.equal(error.code, "REQUEST_TIMEOUT_NOT_SENT");
    const timedOut = await readRequest(sys, error.requestId);
    assert.equal(timedOut.waitingReason, null);
    assert.equal(timedOut.diagnosis?.probableCauses[0]?.code, "awaiting_check_in");
    await clock.advance(5_000);
    assert.deepEqual((await readRequest(sys, error.requestId)).diagnosis, timedOut.diagnosis, "frozen");
  });

  await t.test("opening_company_file, then ledger_not_responding with a silent session", async () => {
    sys.ledger.setFault({ kind: "hang_on_open" });
    const id = await queueRead(sys, eu);
    void eu.connector.checkInNow();
    await untilSessionOpen(sys, eu);
    const opening = await readRequest(sys, id);
    assert.equal(opening.waitingReason, "opening_company_file");
    assert.equal(opening.diagnosis?.connector.sessionOpen, true);
    assert.equal(opening.diagnosis?.connector.ledgerAnswered, false);
    assert.equal(opening.diagnosis?.connector.silentSessions, 0, "too young to count");
    await clock.advance(answerWait + 1000);
    const silent = await readRequest(sys, id);
    assert.equal(silent.waitingReason, "ledger_not_responding");
    assert.equal(silent.diagnosis?.connector.silentSessions, 1);
    assert.equal(silent.diagnosis?.probableCauses[0]?.code, "ledger_modal_dialog");
    sys.ledger.setFault(null);
    assert.equal((await untilStatus(sys, id, "succeeded")).diagnosis, null);
  });

  await t.test(
    "a request handed over and unanswered: the next waits behind it, then not responding",
    async () => {
      sys.ledger.setFault({ kind: "not_responding" });
      const ahead = await queueRead(sys, eu);
      await untilStatus(sys, ahead, "sent");
      const next = await queueRead(sys, eu);
      assert.equal((await readRequest(sys, next)).waitingReason, "behind_other_requests");
      assert.equal((await readRequest(sys, ahead)).diagnosis, null, "sent, not yet long");
      await clock.advance(answerWait + 1000);
      assert.equal((await readRequest(sys, next)).waitingReason, "ledger_not_responding");
      const running = await readRequest(sys, ahead);
      assert.equal(running.diagnosis?.probableCauses[0]?.code, "ledger_processing", "runs long");
      sys.ledger.setFault(null);
      await untilStatus(sys, next, "succeeded");
      await stopConnector(sys, eu);
    },
  );

  await t.test("write_recovery_pending while a lost write's outcome is confirmed first", async () => {
    void eu.connector.checkInNow();
    await untilSessionOpen(sys, eu);
    eu.connector.setFault({ kind: "lose_answer_after_write" });
    const write = await queueAsync(sys, eu.endUserId, customerAdd("Recovered Later"));
    await eventually("the answer was lost", async () =>
      eu.connector.events.some((e) => e.type === "answer_dropped"),
    );
    sys.ledger.setFault({ kind: "hang_on_open" });
    void eu.connector.checkInNow();
    await untilStatus(sys, write, "outcome_unknown");
    const read = await queueRead(sys, eu);
    assert.equal((await readRequest(sys, read)).waitingReason, "write_recovery_pending");
    assert.equal((await causesOf(sys, read))[0], "write_recovery_pending");
    sys.ledger.setFault(null);
    const recovered = await untilStatus(sys, write, "succeeded");
    assert.equal(recovered.recovered, true);
    await untilStatus(sys, read, "succeeded");
    await stopConnector(sys, eu);
  });

  await t.test("connection errors: reason, cause and error code; the connection status follows", async () => {
    const cases = [
      {
        fault: "app_not_running",
        reason: "ledger_unavailable",
        cause: "ledger_closed_no_unattended_access",
        hresult: "0x80040408",
        statusReason: "LEDGER_CANNOT_START",
      },
      {
        fault: "starting",
        reason: "ledger_starting",
        cause: "ledger_starting",
        hresult: "0x80040424",
        statusReason: "LEDGER_STARTING",
      },
      {
        fault: "modal_dialog",
        reason: "ledger_not_responding",
        cause: "ledger_modal_dialog",
        hresult: "0x80040414",
        statusReason: "LEDGER_MODAL_DIALOG_OPEN",
      },
      {
        fault: "file_mode_conflict",
        reason: "file_mode_conflict",
        cause: "file_mode_conflict",
        hresult: "0x80040410",
        statusReason: "LEDGER_FILE_MODE_CONFLICT",
      },
    ] as const;
    for (const c of cases) {
      sys.ledger.setFault({ kind: c.fault });
      const id = await queueRead(sys, eu);
      const report = await eu.connector.checkInNow();
      assert.equal(report.outcome, "connection_failed", c.fault);
      const connection = await untilConnection(sys, eu, "ledger_unavailable");
      assert.equal(connection.statusReason, c.statusReason, c.fault);
      const waiting = await readRequest(sys, id);
      assert.equal(waiting.waitingReason, c.reason, c.fault);
      assert.equal(waiting.diagnosis?.probableCauses[0]?.code, c.cause, c.fault);
      assert.equal(waiting.diagnosis?.connector.lastConnectionErrorCode, c.hresult, c.fault);
      if (c.cause === "file_mode_conflict")
        assert.ok(Date.parse(waiting.diagnosis?.probableCauses[0]?.retryAt ?? "") > 0, "retryAt");
      await sys.call("POST", `/v1/requests/${id}/cancel`);
    }
    sys.ledger.setFault(null);
    const id = await queueRead(sys, eu);
    void eu.connector.checkInNow();
    await untilStatus(sys, id, "succeeded");
    await untilConnection(sys, eu, "online");
    await stopConnector(sys, eu);
    const events = await statusEvents(sys, eu.connectionId);
    assert.deepEqual(events, [
      "pending_setup→online",
      "online→ledger_unavailable",
      "ledger_unavailable→online",
    ]);
  });

  await t.test(
    "silence: connector_offline, stored offline by the sweep, back online at the next check-in",
    async () => {
      await clock.advance(sys.deps.config.CONNECTION_OFFLINE_AFTER_MS + sys.deps.config.SWEEP_INTERVAL_MS);
      const id = await queueRead(sys, eu);
      const waiting = await readRequest(sys, id);
      assert.equal(waiting.waitingReason, "connector_offline");
      assert.deepEqual(await causesOf(sys, id), ["computer_offline", "web_connector_closed"]);
      assert.equal(
        (await untilConnection(sys, eu, "offline")).statusReason,
        "INTEGRATION_CONNECTION_NOT_ACTIVE",
      );
      await eventually("the sweep stored offline", async () =>
        (await statusEvents(sys, eu.connectionId)).includes("online→offline"),
      );
      void eu.connector.checkInNow();
      await untilStatus(sys, id, "succeeded");
      assert.deepEqual((await statusEvents(sys, eu.connectionId)).slice(-2), [
        "online→offline",
        "offline→online",
      ]);
      await stopConnector(sys, eu);
    },
  );
});
