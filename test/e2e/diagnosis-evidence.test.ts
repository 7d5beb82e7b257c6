import assert from "node:assert/strict";
import { test } from "node:test";
import { findConnectionById } from "../../src/store/connections.ts";
import { openSessions } from "../../src/store/connector-sessions.ts";
import { SimulatedWebConnector } from "../../src/simulator/web-connector.ts";
import { startSystem } from "../../src/testing/system.ts";
import { bringOnline, eventually, stopConnector } from "./helpers.ts";
import {
  WAITING_CONFIG,
  causesOf,
  queueRead,
  readRequest,
  untilCompanyFileReported,
  untilConnection,
  untilStatus,
} from "./waiting-helpers.ts";
import { checkEveryAnswer } from "./openapi-contract.ts";

/**
 * Probable causes that need more than one check-in to show: a connector whose schedule was
 * changed (the observed silence before its check-ins), and two computers running the same
 * connector registration (a replaced session's ticket still in use). Through the HTTP API and
 * the simulated connector; the service clock is a FakeClock.
 */
test("schedule drift: web_connector_schedule_changed ranks first, and a normal check-in clears it", async (t) => {
  const sys = await startSystem(t, WAITING_CONFIG);
  checkEveryAnswer(sys);
  const clock = sys.fakeClock;
  assert.ok(clock);
  const eu = await sys.connectEndUser({ companyName: "Drift Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  const offline = sys.deps.config.CONNECTION_OFFLINE_AFTER_MS + sys.deps.config.SWEEP_INTERVAL_MS;

  // The connector comes back after half an hour although its .qwc says every minute. The sweep
  // the advance set off stores the silence first: a check-in that raced it would find the
  // connection still stored online with nothing to do, and open no session ("none").
  await clock.advance(30 * 60_000);
  await eventually(
    "the sweep stored the silence",
    async () => (await findConnectionById(sys.deps.db, eu.connectionId))?.status === "offline",
  );
  void eu.connector.checkInNow();
  await untilConnection(sys, eu, "online");
  await untilCompanyFileReported(sys, eu);
  await stopConnector(sys, eu);
  const late = await queueRead(sys, eu);
  assert.equal((await readRequest(sys, late)).waitingReason, "awaiting_check_in");
  assert.deepEqual(await causesOf(sys, late), ["web_connector_schedule_changed", "awaiting_check_in"]);
  await sys.call("POST", `/v1/requests/${late}/cancel`);

  await clock.advance(offline);
  const silent = await queueRead(sys, eu);
  assert.equal((await readRequest(sys, silent)).waitingReason, "connector_offline");
  assert.deepEqual(await causesOf(sys, silent), [
    "web_connector_schedule_changed",
    "computer_offline",
    "web_connector_closed",
  ]);

  // Back on schedule: the next silence points at the computer again.
  void eu.connector.checkInNow();
  await untilStatus(sys, silent, "succeeded");
  await stopConnector(sys, eu);
  await clock.advance(20_000);
  const onTime = await queueRead(sys, eu);
  void eu.connector.checkInNow();
  await untilStatus(sys, onTime, "succeeded");
  await eventually(
    "the on-schedule check-in was recorded",
    async () =>
      ((await findConnectionById(sys.deps.db, eu.connectionId))?.check_in_gap_ms ?? Infinity) < 60_000,
  );
  await stopConnector(sys, eu);
  await clock.advance(offline);
  const again = await queueRead(sys, eu);
  assert.deepEqual(await causesOf(sys, again), ["computer_offline", "web_connector_closed"]);
});

test("two computers with one registration: same_connector_two_computers", async (t) => {
  const sys = await startSystem(t, WAITING_CONFIG);
  checkEveryAnswer(sys);
  const eu = await sys.connectEndUser({ companyName: "Twin Co" });
  await bringOnline(sys, eu);
  // The same .qwc and password on a second computer (here: the same simulated application).
  const twin = new SimulatedWebConnector({
    qwc: eu.connectorQwc,
    password: eu.password,
    application: sys.ledger,
    noOpPauseMs: 20,
  });
  t.after(() => twin.stop());
  assert.equal((await findConnectionById(sys.deps.db, eu.connectionId))?.shared_connector_at, null);
  void twin.checkInNow();
  await eventually(
    "the replaced session's ticket was used again",
    async () => (await findConnectionById(sys.deps.db, eu.connectionId))?.shared_connector_at != null,
    30_000,
  );
  await eu.connector.stop();
  await twin.stop();
  await eventually(
    "the service saw both connectors hang up",
    async () => (await openSessions(sys.deps.db, eu.connectionId)).length === 0,
    30_000,
  );
  const id = await queueRead(sys, eu);
  assert.equal((await readRequest(sys, id)).waitingReason, "awaiting_check_in");
  assert.equal((await causesOf(sys, id))[0], "same_connector_two_computers");
});

test("one connector that checks in again after its session ended leaves no two-computer evidence", async (t) => {
  const sys = await startSystem(t, WAITING_CONFIG);
  checkEveryAnswer(sys);
  const eu = await sys.connectEndUser({ companyName: "Single Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  for (let i = 0; i < 3; i++) {
    const id = await queueRead(sys, eu);
    void eu.connector.checkInNow();
    await untilStatus(sys, id, "succeeded");
    await stopConnector(sys, eu);
  }
  assert.equal((await findConnectionById(sys.deps.db, eu.connectionId))?.shared_connector_at, null);
  const id = await queueRead(sys, eu);
  assert.ok(!(await causesOf(sys, id)).includes("same_connector_two_computers"));
});
