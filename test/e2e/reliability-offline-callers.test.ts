import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { Agent, request } from "undici";
import { LocalNotifier } from "../../src/store/notifier.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  READ,
  bringOnline,
  connectionOf,
  customerAdd,
  eventually,
  passthroughPath,
} from "./helpers.ts";
import { memoryAfterGc, plan, reportCounts, soakSeed, soakSize } from "./soak.ts";

/**
 * R6 (issue 8 §5): many concurrent sync callers on a connection whose connector is away. Each caller
 * gets the error the spec's table gives it, by its own deadline on the service's (fake) clock, and
 * nothing reaches the application:
 *
 * - while the connection still counts as online (the connector went silent within the offline
 *   window), each call waits and, at its own `Svc-Timeout-Seconds`, ends with 504
 *   REQUEST_TIMEOUT_NOT_SENT, its Request canceled: never before its deadline, never after it;
 * - once the connection is offline, each call is refused at once with 503
 *   INTEGRATION_CONNECTION_NOT_ACTIVE.
 *
 * Memory returns to its baseline: the same round runs twice, and after the second the service holds
 * no more clock sleepers or wake-up waiters than when idle, and its heap (after a full collection)
 * is within a small bound of what it was after the first, which absorbed one-off growth (compiled
 * code, caches). `npm test` runs 150 callers per phase, `npm run soak` 1,000 (or SOAK_CALLERS).
 */
const CALLERS = soakSize("SOAK_CALLERS", 150, 1000);
/** Callers' timeouts are drawn from 1..TIMEOUT_MAX seconds. */
const TIMEOUT_MAX = 8;
/**
 * Heap a second round may leave above the first, in MB: a fixed slack plus 1 KB per caller, well
 * below what each caller's Request row, closures and response (several KB) would cost if kept.
 */
const heapSlackMb = (callers: number): number => 4 + callers / 1024;

interface Caller {
  timeoutSeconds: number;
  write: boolean;
  answer?: { status: number; code: string; outcome: string };
  /** Whole seconds of service clock after the round's start at which the answer was seen. */
  answeredAt?: number;
}

interface ErrorBody {
  error?: { code: string; outcome: string };
}

interface Round {
  waiting: Caller[];
  refused: Caller[];
}

/**
 * Stops the connector between two calls (in its NoOp pause), so that no call of it is held by the
 * service: stopping it during a held call races the call's arrival, and a call that never arrived
 * leaves an open session behind that nothing closes.
 */
async function goAway(eu: ConnectedEndUser): Promise<void> {
  await eventually("the connector pauses between calls", async () => {
    if (eu.connector.callInFlight !== null) return false;
    // Same tick as the check: no call can start in between.
    void eu.connector.stop();
    return true;
  });
  await eu.connector.stop();
}

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

async function statusesOf(sys: System, connectionId: string): Promise<{ status: string; sent: boolean }[]> {
  const rows = await sys.deps.db
    .selectFrom("requests")
    .select(["status", "sent_at"])
    .where("connection_id", "=", connectionId)
    .execute();
  return rows.map((r) => ({ status: r.status, sent: r.sent_at !== null }));
}

/**
 * One round: the connector checks in, goes away, CALLERS callers wait out their timeouts, the
 * connection goes offline, CALLERS more are refused. The callers use their own HTTP client, closed
 * at the end, so that idle keep-alive sockets (both ends live in this process) are not measured.
 */
async function round(sys: System, eu: ConnectedEndUser, seed: number, label: string): Promise<Round> {
  const clock = sys.fakeClock;
  assert.ok(clock);
  const client = new Agent({ connections: CALLERS * 2 });
  const call = (caller: Caller, name: string): Promise<void> =>
    send(caller, name).catch((error: unknown) => {
      // Recorded, not thrown: the assertions below name the caller that got no answer.
      caller.answer = { status: 0, code: `client error: ${String(error)}`, outcome: "(none)" };
    });
  const send = async (caller: Caller, name: string): Promise<void> => {
    const res = await request(`${sys.url}${passthroughPath(eu.endUserId)}`, {
      method: "POST",
      dispatcher: client,
      headers: {
        authorization: `Bearer ${sys.project.keys.secretLive}`,
        "content-type": "application/xml",
        "svc-timeout-seconds": String(caller.timeoutSeconds),
      },
      body: caller.write ? customerAdd(name) : READ,
      // Real-time limits of the client do not apply: the deadline under test is the service's.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    const body = (await res.body.json()) as ErrorBody;
    caller.answer = {
      status: res.statusCode,
      code: body.error?.code ?? "(none)",
      outcome: body.error?.outcome ?? "(none)",
    };
  };
  await bringOnline(sys, eu);
  await goAway(eu);
  const sleepersIdle = clock.sleeperCount;
  const queuedBefore = (await statusesOf(sys, eu.connectionId)).length;

  // Phase 1: the connection still counts as online; every caller waits out its own timeout.
  const timeouts = plan(fc.integer({ min: 1, max: TIMEOUT_MAX }), seed, CALLERS);
  const kinds = plan(fc.boolean(), seed + 1, CALLERS);
  const waiting: Caller[] = timeouts.map((timeoutSeconds, i) => ({
    timeoutSeconds,
    write: kinds[i] ?? false,
  }));
  const started = waiting.map((c, i) => call(c, `${label} waiting ${i}`));
  await eventually(
    "every caller is queued and waiting on the clock",
    async () =>
      clock.sleeperCount >= sleepersIdle + CALLERS &&
      (await statusesOf(sys, eu.connectionId)).filter((r) => r.status === "queued").length === CALLERS,
    // A bound for a loaded 2-core machine, not a timing claim.
    60_000 + CALLERS * 300,
  );
  assert.equal((await connectionOf(sys, eu.endUserId)).status, "online", "within the offline window");
  for (let second = 1; second <= TIMEOUT_MAX; second++) {
    await clock.advance(1000);
    const due = waiting.filter((c) => c.timeoutSeconds <= second);
    await eventually(
      `the callers whose ${second} s timeout passed are answered`,
      async () => due.every((c) => c.answer),
      60_000,
    );
    for (const c of due) c.answeredAt ??= second;
    const early = waiting.filter((c) => c.answer && c.timeoutSeconds > second);
    assert.equal(early.length, 0, `answered before its deadline at ${second} s: ${JSON.stringify(early[0])}`);
  }
  await Promise.all(started);
  for (const c of waiting) {
    assert.equal(c.answeredAt, c.timeoutSeconds, `answered at its own deadline: ${JSON.stringify(c)}`);
    assert.equal(c.answer?.status, 504, JSON.stringify(c));
    assert.equal(c.answer?.code, "REQUEST_TIMEOUT_NOT_SENT", JSON.stringify(c));
    if (c.write) assert.equal(c.answer?.outcome, "not_applied", JSON.stringify(c));
  }

  // Phase 2: past the offline window the connection is offline; every caller is refused at once
  // (the clock does not move while they call).
  await clock.advance(sys.deps.config.CONNECTION_OFFLINE_AFTER_MS + 1);
  assert.equal((await connectionOf(sys, eu.endUserId)).status, "offline");
  const refused: Caller[] = plan(fc.boolean(), seed + 2, CALLERS).map((write) => ({
    timeoutSeconds: 300,
    write,
  }));
  await Promise.all(refused.map((c, i) => call(c, `${label} refused ${i}`)));
  for (const c of refused) {
    assert.equal(c.answer?.status, 503, JSON.stringify(c));
    assert.equal(c.answer?.code, "INTEGRATION_CONNECTION_NOT_ACTIVE", JSON.stringify(c));
    if (c.write) assert.equal(c.answer?.outcome, "not_applied", JSON.stringify(c));
  }
  const rows = (await statusesOf(sys, eu.connectionId)).slice(queuedBefore);
  assert.equal(rows.length, CALLERS * 2, "one Request per caller");
  assert.equal(rows.filter((r) => r.sent).length, 0, "nothing was sent");
  // The sweep and the lease renewal fired by the advances above sleep again once their work is
  // done; a leaked sleeper would keep the count above idle for good.
  await eventually("clock sleepers back to idle", async () => clock.sleeperCount === sleepersIdle);
  await client.close();
  return { waiting, refused };
}

test(`R6: ${CALLERS} + ${CALLERS} concurrent sync callers on a connection whose connector is away, twice`, async (t) => {
  const seed = soakSeed(t, "R6");
  const sys = await startSystem(t, {
    // Long pauses between the connector's calls: it is stopped in one of them.
    noOpPauseMs: 400,
    config: {
      ...E2E_CONFIG.config,
      // Every caller is admitted: the queue's capacity is not what this suite measures.
      CONNECTION_QUEUE_CAPACITY: String(CALLERS * 4 + 100),
    },
  });
  const notifier = sys.deps.store.notifier;
  assert.ok(notifier instanceof LocalNotifier);
  const eu = await sys.connectEndUser({ companyName: "Away Co" });
  const file = sys.ledger.companyFile(eu.companyFilePath);
  const customersBefore = file.count("Customer");
  const processed = (): number => eu.connector.events.filter((e) => e.type === "request_processed").length;
  await bringOnline(sys, eu);
  const processedBefore = processed();

  const first = await round(sys, eu, seed, "first");
  const waitersIdle = notifier.waiterCount;
  const baseline = memoryAfterGc();
  const second = await round(sys, eu, seed + 3, "second");
  const after = memoryAfterGc();

  // Nothing reached the application; no caller left a wake-up waiter behind.
  assert.equal(processed(), processedBefore, "the application received nothing");
  assert.equal(file.count("Customer"), customersBefore);
  assert.equal(notifier.waiterCount, waitersIdle, "wake-up waiters back to idle");
  const callers = [first, second].flatMap((r) => [...r.waiting, ...r.refused]);
  reportCounts(t, "R6", {
    store: sys.deps.store.engine,
    callers: callers.length,
    errors: countBy(callers, (c) => `${c.answer?.status} ${c.answer?.code}`),
    answeredByDeadline: callers.filter((c) => c.answer && (c.answeredAt ?? 0) <= c.timeoutSeconds).length,
    heapMb: { afterFirstRound: baseline.heapMb, afterSecondRound: after.heapMb },
    rssMb: { afterFirstRound: baseline.rssMb, afterSecondRound: after.rssMb },
  });
  assert.ok(
    after.heapMb - baseline.heapMb < heapSlackMb(CALLERS * 2),
    `heap grew by ${(after.heapMb - baseline.heapMb).toFixed(1)} MB over a round ` +
      `(allowed ${heapSlackMb(CALLERS * 2).toFixed(1)} MB)`,
  );
});
