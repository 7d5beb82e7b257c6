import assert from "node:assert/strict";
import { test } from "node:test";
import type { ConnectionResource } from "../../src/connections/resource.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { bringOnline, json, stopConnector } from "./helpers.ts";
import { WAITING_CONFIG, checkInsEvery, queueRead, readRequest, untilStatus } from "./waiting-helpers.ts";

/**
 * "When will it run?": the connector's observed schedule, read from its check-ins over SOAP, gives
 * a waiting Request's `diagnosis.connector.expectedCheckInAt` and each connection's own. The service
 * clock is a FakeClock; check-ins are made by hand at chosen times, then by the simulated connector.
 */
const MINUTE = 60_000;

async function connectionOf(sys: System, eu: ConnectedEndUser): Promise<ConnectionResource> {
  const endUser = await json<{ integrationConnections: ConnectionResource[] }>(
    await sys.call("GET", `/v1/end-users/${eu.endUserId}`),
  );
  const connection = endUser.integrationConnections[0];
  assert.ok(connection);
  return connection;
}

test("a waiting Request and its connection say when the connector is expected, and say so no longer once it stops", async (t) => {
  const sys = await startSystem(t, WAITING_CONFIG);
  const clock = sys.fakeClock;
  assert.ok(clock);
  const eu = await sys.connectEndUser({ companyName: "Schedule Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);

  // Every five minutes, four times: a schedule of its own (the .qwc asks for one minute).
  await checkInsEvery(sys, eu, 5 * MINUTE, 4);
  const lastCheckIn = clock.now();
  await clock.advance(MINUTE);
  const waiting = await queueRead(sys, eu);
  const read = await readRequest(sys, waiting);
  assert.equal(read.status, "queued");
  const expected = new Date(lastCheckIn + 5 * MINUTE).toISOString();
  assert.equal(read.diagnosis?.connector.expectedCheckInAt, expected);
  assert.deepEqual(
    {
      basis: read.diagnosis?.connector.checkInEstimate.basis,
      confidence: read.diagnosis?.connector.checkInEstimate.confidence,
      intervalSeconds: read.diagnosis?.connector.checkInEstimate.intervalSeconds,
    },
    { basis: "observed_schedule", confidence: "high", intervalSeconds: 300 },
  );
  const connection = await connectionOf(sys, eu);
  assert.equal(connection.expectedCheckInAt, expected);
  assert.equal(connection.checkInEstimate.basis, "observed_schedule");

  // Twenty minutes of silence: the schedule has stopped, and no time is promised.
  await clock.advance(20 * MINUTE);
  const stopped = await readRequest(sys, waiting);
  assert.equal(stopped.diagnosis?.connector.expectedCheckInAt, null);
  assert.equal(stopped.diagnosis?.connector.checkInEstimate.basis, "schedule_stopped");
  assert.ok((stopped.diagnosis?.connector.checkInEstimate.overdueSeconds ?? 0) > 0);
  assert.equal((await connectionOf(sys, eu)).checkInEstimate.basis, "schedule_stopped");

  // The connector comes back: the Request runs; while its session is open the connector is here.
  void eu.connector.checkInNow();
  const done = await untilStatus(sys, waiting, "succeeded");
  assert.equal(done.diagnosis, null, "no diagnosis once the Request ran");
  await stopConnector(sys, eu);
  const after = await connectionOf(sys, eu);
  // Six check-ins (bringing it online, four by hand, the late one): the late gap is one of five and
  // does not move the interval.
  assert.equal(after.checkInEstimate.gapsObserved, 5);
  assert.equal(after.checkInEstimate.intervalSeconds, 300);
  assert.equal(after.checkInEstimate.basis, "observed_schedule");
});
