import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import type { Deps } from "../deps.ts";
import type { FakeClock } from "../platform/clock.ts";
import { newId } from "../platform/ids.ts";
import { claimIdempotencyKey, findIdempotencyKey } from "../store/idempotency.ts";
import { findRequest, insertRequest, type RequestRow } from "../store/requests.ts";
import { createEndUser } from "../tenancy/end-users.ts";
import { buildTestApp } from "../testing/harness.ts";
import { IDEMPOTENCY_RETENTION_MS } from "./idempotency-key.ts";
import { newRequestRow } from "./new-request.ts";
import type { Tenant } from "../store/tenant.ts";
import { startSweeper, sweepOnce } from "./sweeper.ts";
import { timelineEntry } from "./timeline.ts";

/**
 * The background sweep (sweeper.ts). Time is a FakeClock: a sweep runs only when the clock passes
 * SWEEP_INTERVAL_MS, and every assertion reads the store directly, never through the API (whose
 * reads expire requests lazily and would hide a sweep that did nothing).
 */
const DAY_MS = 24 * 60 * 60 * 1000;

const NOTHING_SWEPT = {
  expiredRequests: 0,
  idempotencyKeysDeleted: 0,
  connectionsOffline: 0,
  requestsDeleted: 0,
  sessionsDeleted: 0,
  statusChangesDeleted: 0,
  recordWritesDeleted: 0,
};

async function setUp(t: TestContext): Promise<{ deps: Deps; clock: FakeClock; projectId: string }> {
  const h = await buildTestApp(t);
  assert.ok(h.fakeClock);
  return { deps: h.deps, clock: h.fakeClock, projectId: h.project.project.id };
}

/** Waits (at most 10 s of real time) until the sweeper sleeps, that is, until no sweep is running. */
async function sweeperAsleep(clock: FakeClock): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error("the sweeper is not waiting for its next interval")), 10_000);
  });
  try {
    await Promise.race([clock.untilSleepers(1), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The live tenant of a project (these tests work with live keys' objects). */
const live = (projectId: string): Tenant => ({ projectId, mode: "live" });

/** Moves the clock and waits until the sweeper woken by it has finished and sleeps again. */
async function advanceAndSweep(clock: FakeClock, ms: number): Promise<void> {
  await clock.advance(ms);
  await sweeperAsleep(clock);
}

async function keyAt(deps: Deps, projectId: string, key: string, createdAtMs: number): Promise<void> {
  const claim = await claimIdempotencyKey(
    deps.db,
    live(projectId),
    {
      key,
      fingerprint: "f",
      request_id: null,
      response_box: null,
      response_status: null,
      created_at: new Date(createdAtMs),
      expires_at: new Date(createdAtMs + IDEMPOTENCY_RETENTION_MS),
    },
    new Date(deps.clock.now()),
  );
  assert.equal(claim.claimed, true);
}

/** A request that was never sent: `queueTtlMs` from now (null: a sync request, without a queue TTL). */
async function unsentRequest(
  deps: Deps,
  projectId: string,
  endUserId: string,
  status: "queued" | "waiting_for_connection",
  queueTtlMs: number | null,
): Promise<string> {
  const now = deps.clock.now();
  const id = newId("request");
  await insertRequest(
    deps.db,
    newRequestRow(
      {
        id,
        project_id: projectId,
        is_test: false,
        end_user_id: endUserId,
        connection_id: null,
        operation_id: "endUsers.passthrough",
        method: "POST",
        path: `/v1/end-users/${endUserId}/passthrough/ledger_desktop`,
        mode: queueTtlMs === null ? "sync" : "async",
        status,
        is_write: false,
        request_xml: "<QBXML/>",
        queue_ttl_expires_at: queueTtlMs === null ? null : new Date(now + queueTtlMs),
        idempotency_key_present: false,
        previous_request_id: null,
      },
      now,
    ),
  );
  return id;
}

/** The code of a stored error body (a JSON column). */
function errorCode(error: unknown): unknown {
  return error !== null && typeof error === "object" && "code" in error ? error.code : null;
}

async function stored(deps: Deps, projectId: string, id: string): Promise<RequestRow> {
  const row = await findRequest(deps.db, live(projectId), id);
  assert.ok(row, `request ${id} exists`);
  return row;
}

test("an idempotency key is kept for its 7-day retention and deleted by the first sweep after it", async (t) => {
  const { deps, clock, projectId } = await setUp(t);
  const sweeper = startSweeper(deps);
  t.after(() => sweeper.stop());
  const interval = deps.config.SWEEP_INTERVAL_MS;
  await keyAt(deps, projectId, "old", clock.now());
  await keyAt(deps, projectId, "young", clock.now() + DAY_MS);
  await sweeperAsleep(clock);

  // Just inside the retention of the older key: the sweep runs and keeps both.
  await advanceAndSweep(clock, IDEMPOTENCY_RETENTION_MS - interval / 2);
  assert.ok(await findIdempotencyKey(deps.db, live(projectId), "old"), "a key within its retention is kept");
  assert.ok(await findIdempotencyKey(deps.db, live(projectId), "young"));

  // The next sweep is past it: only the older key goes.
  await advanceAndSweep(clock, interval);
  assert.equal(
    await findIdempotencyKey(deps.db, live(projectId), "old"),
    null,
    "a key past retention is deleted",
  );
  assert.ok(
    await findIdempotencyKey(deps.db, live(projectId), "young"),
    "a key within its retention is kept",
  );
});

test("a sweep ends unsent requests past their queue TTL as canceled REQUEST_EXPIRED, and nothing else", async (t) => {
  const { deps, clock, projectId } = await setUp(t);
  const endUser = await createEndUser(deps, live(projectId), { companyName: "Sweep Co", sourceId: "sweep" });
  const queued = await unsentRequest(deps, projectId, endUser.id, "queued", 10_000);
  const waiting = await unsentRequest(deps, projectId, endUser.id, "waiting_for_connection", 20_000);
  const later = await unsentRequest(deps, projectId, endUser.id, "queued", 10 * 60_000);
  const sync = await unsentRequest(deps, projectId, endUser.id, "queued", null);
  const sweeper = startSweeper(deps);
  t.after(() => sweeper.stop());
  await sweeperAsleep(clock);

  // Past both TTLs but before the first sweep: nothing ends them on its own.
  await clock.advance(30_000);
  assert.equal((await stored(deps, projectId, queued)).status, "queued");
  assert.equal((await stored(deps, projectId, waiting)).status, "waiting_for_connection");

  await advanceAndSweep(clock, deps.config.SWEEP_INTERVAL_MS - 30_000);
  for (const id of [queued, waiting]) {
    const row = await stored(deps, projectId, id);
    assert.equal(row.status, "canceled");
    assert.equal(row.outcome, "not_applicable", "they are reads");
    assert.equal(row.sent_at, null);
    assert.equal(row.waiting_reason, null);
    assert.equal(row.completed_at?.getTime(), clock.now());
    assert.equal(errorCode(row.error), "REQUEST_EXPIRED");
    assert.deepEqual(
      row.timeline.at(-1),
      timelineEntry(
        "canceled",
        "Queue TTL elapsed before the request could be sent",
        clock.now(),
        row.created_at,
      ),
    );
  }
  assert.equal((await stored(deps, projectId, later)).status, "queued", "a TTL still running is kept");
  assert.equal((await stored(deps, projectId, sync)).status, "queued", "a sync request has no queue TTL");
});

test("a sweep works through a backlog in batches and never ends a request twice", async (t) => {
  const { deps, clock, projectId } = await setUp(t);
  const endUser = await createEndUser(deps, live(projectId), { companyName: "Batch Co", sourceId: "batch" });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await unsentRequest(deps, projectId, endUser.id, "queued", 10_000));
  await clock.advance(11_000);

  const result = await sweepOnce(deps, { batchSize: 2 });
  assert.deepEqual(result, { ...NOTHING_SWEPT, expiredRequests: 5 });
  for (const id of ids) assert.equal((await stored(deps, projectId, id)).status, "canceled");
  const again = await sweepOnce(deps, { batchSize: 2 });
  assert.deepEqual(again, NOTHING_SWEPT);
  for (const id of ids) {
    const timeline = (await stored(deps, projectId, id)).timeline;
    assert.equal(timeline.filter((e) => e.status === "canceled").length, 1, "ended once");
  }
});

test("concurrent sweeps (several instances) end each request exactly once", async (t) => {
  const { deps, clock, projectId } = await setUp(t);
  const endUser = await createEndUser(deps, live(projectId), { companyName: "Race Co", sourceId: "race" });
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push(await unsentRequest(deps, projectId, endUser.id, "queued", 10_000));
  await keyAt(deps, projectId, "stale", clock.now() - IDEMPOTENCY_RETENTION_MS - 1);
  await clock.advance(11_000);

  const results = await Promise.all([sweepOnce(deps), sweepOnce(deps), sweepOnce(deps)]);
  assert.equal(
    results.reduce((sum, r) => sum + r.expiredRequests, 0),
    4,
    JSON.stringify(results),
  );
  assert.equal(
    results.reduce((sum, r) => sum + r.idempotencyKeysDeleted, 0),
    1,
    JSON.stringify(results),
  );
  for (const id of ids) {
    const timeline = (await stored(deps, projectId, id)).timeline;
    assert.deepEqual(
      timeline.map((e) => e.status),
      ["queued", "canceled"],
    );
  }
});

test("stop() ends the sweeper: no timer is left and no sweep runs afterwards", async (t) => {
  const { deps, clock, projectId } = await setUp(t);
  await keyAt(deps, projectId, "stale", clock.now() - IDEMPOTENCY_RETENTION_MS - 1);
  const sweeper = startSweeper(deps);
  await sweeperAsleep(clock);
  await sweeper.stop();
  assert.equal(clock.sleeperCount, 0);
  await sweeper.stop();
  await clock.advance(deps.config.SWEEP_INTERVAL_MS * 2);
  assert.ok(await findIdempotencyKey(deps.db, live(projectId), "stale"), "no sweep ran after stop()");
});
