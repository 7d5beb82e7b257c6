import assert from "node:assert/strict";
import { test } from "node:test";
import { findRequest } from "../../src/store/requests.ts";
import { startSystem } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  READ,
  bringOnline,
  eventually,
  json,
  passthroughPath,
  stopConnector,
  type RequestResource,
} from "./helpers.ts";

/**
 * The background sweep in the composed system (testing/system.ts starts it as main.ts does): async
 * requests for a connector that never checks in again end on time, without anyone reading them.
 * State is read from the store, because an API read would expire the request itself.
 */
/** The code of a stored error body (a JSON column). */
function errorCode(error: unknown): unknown {
  return error !== null && typeof error === "object" && "code" in error ? error.code : null;
}

test("async requests whose connector never checks in expire through the sweep, unread", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const clock = sys.fakeClock;
  assert.ok(clock, "the system runs on a FakeClock");
  const interval = sys.deps.config.SWEEP_INTERVAL_MS;
  const eu = await sys.connectEndUser({ companyName: "Never Again Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  const projectId = sys.project.project.id;
  const sweeps = async (): Promise<number> =>
    (await sys.deps.metrics.sweepRuns.get()).values.reduce((n, v) => n + v.value, 0);
  assert.equal(await sweeps(), 0, "no sweep before the clock moves");
  const stored = async (id: string): Promise<{ status: string; error: unknown; timeline: unknown[] }> => {
    const row = await findRequest(sys.deps.db, { projectId, mode: "live" }, id);
    assert.ok(row, `request ${id} is stored`);
    return row;
  };

  // Recently seen connector: the request queues. TTL 200 s.
  const queued = await json<RequestResource>(
    await sys.call("POST", passthroughPath(eu.endUserId), {
      body: READ,
      headers: { prefer: "respond-async", "svc-queue-ttl-seconds": "200" },
    }),
  );
  assert.equal(queued.status, "queued");

  // The connector is now offline: the next request waits for the connection. TTL 10 s.
  await clock.advance(sys.deps.config.CONNECTION_OFFLINE_AFTER_MS + 1000);
  // That advance ran a sweep; the sweeper's next wait starts when the sweep ends. (Other loops sleep
  // on the clock too, so a pending sleeper does not say the sweep has ended; its count does.)
  await eventually(
    "the sweep ended and the sweeper waits for its next interval",
    async () => (await sweeps()) >= 1,
  );
  const waiting = await json<RequestResource>(
    await sys.call("POST", passthroughPath(eu.endUserId), {
      body: READ,
      headers: { prefer: "respond-async", "svc-queue-ttl-seconds": "10" },
    }),
  );
  assert.equal(waiting.status, "waiting_for_connection");

  // Both TTLs have passed, the next sweep has not run: nothing else ends them.
  const sinceSweep = 200_000 - (sys.deps.config.CONNECTION_OFFLINE_AFTER_MS + 1000) + 1000;
  assert.ok(sinceSweep < interval, "the TTLs end before the next sweep");
  await clock.advance(sinceSweep);
  assert.equal((await stored(queued.id)).status, "queued");
  assert.equal((await stored(waiting.id)).status, "waiting_for_connection");

  await clock.advance(interval - sinceSweep);
  for (const id of [queued.id, waiting.id]) {
    const row = await eventually(`request ${id} expired by the sweep`, async () => {
      const current = await stored(id);
      return current.status === "canceled" ? current : null;
    });
    assert.equal(errorCode(row.error), "REQUEST_EXPIRED");
  }

  // The API reports what the sweep stored: never sent, one canceled entry at the end of the timeline.
  for (const id of [queued.id, waiting.id]) {
    const request = await json<RequestResource>(await sys.call("GET", `/v1/requests/${id}`));
    assert.equal(request.status, "canceled");
    assert.equal(request.error?.code, "REQUEST_EXPIRED");
    assert.equal(request.sentAt, null);
    assert.equal(request.timeline.at(-1)?.status, "canceled");
    assert.equal(request.timeline.filter((e) => e.status === "canceled").length, 1);
  }
});
