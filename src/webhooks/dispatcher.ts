import { setMaxListeners } from "node:events";
import type { Deps } from "../deps.ts";
import { systemClock } from "../platform/clock.ts";
import { newId } from "../platform/ids.ts";
import { traceDelivery } from "../platform/tracing.ts";
import { findRequestTraceparent } from "../store/requests.ts";
import { randomFraction, randomToken } from "../platform/random.ts";
import { EVENTS_CHANNEL } from "../store/events.ts";
import {
  claimDueDeliveries,
  deleteExpiredWebhookData,
  fanOutEvents,
  nextWorkAt,
  recordAttempts,
  releaseLease,
  type DeliveryWork,
  type EventRow,
  type Lease,
} from "../store/webhook-dispatch.ts";
import { signingSecretPlace, type WebhookEndpointRow } from "../store/webhooks.ts";
import { attemptDelivery, type AttemptEnvironment } from "./attempt.ts";
import { BatchRecorder } from "./batch-recorder.ts";
import { systemResolver, type Resolver } from "./destination-guard.ts";
import { subscribes } from "./event-types.ts";
import {
  AUTO_DISABLE_AFTER_MS,
  AUTO_DISABLED_REASON,
  DELIVERY_RETENTION_MS,
  nextAttemptAt,
} from "./schedule.ts";
import { undiciTransport, type Transport } from "./transport.ts";

/**
 * The webhook dispatcher (architecture §4–5). One loop per instance:
 *
 *   outbox event ──fan-out (SKIP LOCKED)──▶ deliveries (pending, due now; some leased to us at once)
 *   due delivery ──claim (SKIP LOCKED, lease)──▶ local queue ──slot──▶ attempt ──record (batched)──▶
 *       succeeded | pending (next attempt per the schedule) | failed (after the last attempt)
 *
 * It wakes when an event is committed or a delivery created (the notifier: in-process, and
 * LISTEN/NOTIFY across instances), when an attempt ends, and on the injected clock when the next
 * retry falls due. Claims come in batches and attempts are recorded in batches, so the store sees
 * a few statements per batch, not per delivery. A lease covers the wait in the local queue and the
 * attempt; an instance that dies mid-attempt loses its leases when they expire and the delivery is
 * attempted again (at least once; receivers deduplicate on `webhook-id`). Two instances never hold
 * the same lease, so never attempt one delivery at once.
 */
export interface DispatcherOptions {
  resolve?: Resolver;
  transport?: Transport;
  /** Jitter source in [0, 1). */
  random?: () => number;
  /** Events fanned out per transaction. */
  fanOutBatch?: number;
}

export interface Dispatcher {
  /** Stops: cuts in-flight attempts (their deliveries are released, not recorded) and waits for the loop. */
  stop(): Promise<void>;
  /**
   * Resolves once the dispatcher rests: what it knew of is fanned out and claimed, nothing is leased,
   * in flight or being recorded, and its loop waits for a wake-up (an event, a re-enabled endpoint,
   * or the clock reaching the next due attempt). Every attempt it would make without one has then
   * been made and recorded, which is how a test concludes that something was not sent. At once when
   * it rests already or has stopped.
   */
  settled(): Promise<void>;
}

/** Idle waits are capped so that work scheduled by other instances is seen within this clock time. */
const IDLE_RECHECK_MS = 30_000;
const RETENTION_BATCH = 500;
/** Due work found locked by another instance is looked at again after this (real time). */
const BUSY_ELSEWHERE_RECHECK_MS = 50;
/** Margin of a lease beyond the longest a leased delivery can wait and run (clock time). */
const LEASE_MARGIN_MS = 10_000;
/** Abort reason for timers no longer needed (a shared value: an abort without one builds a DOMException). */
const CANCELED = new Error("canceled");

export function startDispatcher(deps: Deps, options: DispatcherOptions = {}): Dispatcher {
  const config = deps.config;
  const concurrency = config.WEBHOOK_CONCURRENCY;
  const schedule = config.WEBHOOK_RETRY_SCHEDULE_MS;
  const timeoutMs = config.WEBHOOK_ATTEMPT_TIMEOUT_MS;
  const random = options.random ?? randomFraction;
  const ownsTransport = options.transport === undefined;
  const transport =
    options.transport ??
    undiciTransport({ socketTimeoutMs: timeoutMs * 2, connectionsPerOrigin: Math.min(concurrency, 64) });
  const env: AttemptEnvironment = {
    clock: deps.clock,
    resolve: options.resolve ?? systemResolver,
    transport,
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK === "on",
    timeoutMs,
    userAgent: "ledger-bridge-webhooks/1",
  };
  const shutdown = new AbortController();
  // Every attempt in flight listens for the shutdown.
  setMaxListeners(0, shutdown.signal);

  // Leased work waits in `queue` for one of `concurrency` slots. At most `concurrency` wait, and every
  // attempt ends within the attempt timeout, so a leased delivery starts within one timeout and ends
  // within two: the lease covers both, with a margin.
  const queue: DeliveryWork[] = [];
  const inFlight = new Set<Promise<void>>();
  const room = (): number => 2 * concurrency - inFlight.size - queue.length;
  const newLease = (): Lease => ({
    token: randomToken(12),
    until: new Date(deps.clock.now() + 2 * timeoutMs + LEASE_MARGIN_MS),
  });

  // What may have work: the outbox (an event was committed), due deliveries (a delivery was created
  // or re-enabled, a retry fell due). Cleared when a look finds less than it asked for.
  let outboxDirty = true;
  let claimDirty = true;
  let wakeUp: (() => void) | null = null;
  let wakes = 0;
  // Whether the loop rests (see `settled`), and who waits for it to.
  let resting = false;
  const restWaiters: Array<() => void> = [];
  const wake = (): void => {
    wakes++;
    resting = false;
    wakeUp?.();
  };
  const unlisten = deps.store.notifier.listen(EVENTS_CHANNEL, () => {
    outboxDirty = true;
    claimDirty = true;
    wake();
  });

  // The earliest known time a delivery falls due, with a timer on the injected clock.
  let dueAt: number | null = null;
  let dueTimer: AbortController | null = null;
  const noteDue = (at: number): void => {
    if (at <= deps.clock.now()) {
      claimDirty = true;
      wake();
      return;
    }
    if (dueAt !== null && dueAt <= at) return;
    dueTimer?.abort(CANCELED);
    dueAt = at;
    const timer = new AbortController();
    dueTimer = timer;
    void deps.clock.sleep(Math.max(0, at - deps.clock.now()), timer.signal).then(() => {
      if (timer.signal.aborted) return;
      dueAt = null;
      dueTimer = null;
      outboxDirty = true;
      claimDirty = true;
      wake();
    });
  };

  const takes = (event: EventRow, endpoint: WebhookEndpointRow): boolean =>
    endpoint.enabled &&
    endpoint.is_test === event.is_test &&
    subscribes(endpoint.event_types, event.type) &&
    (endpoint.include_sync_requests || !event.caller_received_result);

  const startQueued = (): void => {
    while (inFlight.size < concurrency && !shutdown.signal.aborted) {
      const work = queue.shift();
      if (!work) return;
      const task = attemptAndRecord(work).catch((error: unknown) => {
        deps.logger.error({ err: error, deliveryId: work.deliveryId }, "webhook attempt failed to record");
      });
      inFlight.add(task);
      void task.finally(() => {
        inFlight.delete(task);
        wake();
      });
    }
  };

  // Attempts are recorded in batches: what finishes while a batch is being written goes in the next.
  const recorder = new BatchRecorder(async (batch) => {
    const now = deps.clock.now();
    const { disabledEndpoints } = await recordAttempts(deps.db, batch, {
      now: new Date(now),
      disableIfFailingSince: new Date(now - AUTO_DISABLE_AFTER_MS),
      disabledReason: AUTO_DISABLED_REASON,
    });
    for (const endpointId of disabledEndpoints)
      deps.logger.warn({ endpointId }, "webhook endpoint disabled after 5 days of failures");
  });

  const attemptAndRecord = async (stored: DeliveryWork): Promise<void> => {
    // The endpoint's secrets are stored sealed (decision 0032). One that no configured key opens is
    // a configuration error: nothing is attempted, and the lease lets the delivery wait.
    const work = openedSecrets(deps, stored);
    if (work === null) return;
    const outcome = await traceDelivery(
      deps,
      work,
      () => requestTraceOf(deps, work.event),
      (headers) => attemptDelivery(env, work, shutdown.signal, headers),
      (done) => done && { statusCode: done.record.statusCode, error: done.record.error },
    );
    if (outcome === null) {
      await releaseLease(deps.db, work.deliveryId, work.leaseToken);
      return;
    }
    const attempt = work.attemptCount + 1;
    const now = deps.clock.now();
    const ok = outcome.record.error === null;
    const next = ok ? null : nextAttemptAt(schedule, attempt, now, random(), outcome.retryAfterMs);
    await recorder.record({
      deliveryId: work.deliveryId,
      leaseToken: work.leaseToken,
      record: { attempt, ...outcome.record },
      status: ok ? "succeeded" : next === null ? "failed" : "pending",
      nextAttemptAt: next === null ? null : new Date(next),
      at: new Date(now),
    });
    if (next !== null) noteDue(next);
  };

  /** Leases what can be taken now (fan-out first, then due deliveries); true when anything was found. */
  const refill = async (): Promise<boolean> => {
    let found = false;
    if (outboxDirty && room() > 0) {
      outboxDirty = false;
      const batchSize = options.fanOutBatch ?? 200;
      const fanned = await fanOutEvents(deps.db, {
        now: new Date(deps.clock.now()),
        batchSize,
        lease: newLease(),
        leaseLimit: room(),
        takes,
        newDeliveryId: () => newId("webhookDelivery"),
      });
      queue.push(...fanned.work);
      if (fanned.events >= batchSize) outboxDirty = true;
      // Deliveries beyond the lease limit were created unleased: claim them.
      if (fanned.events > 0) claimDirty = true;
      found ||= fanned.events > 0;
    }
    // Claims come in batches: wait until half the room is free, unless nothing is running.
    const busy = inFlight.size + queue.length > 0;
    if (claimDirty && room() > 0 && (!busy || room() >= concurrency)) {
      const want = room();
      const claimed = await claimDueDeliveries(deps.db, new Date(deps.clock.now()), want, newLease());
      queue.push(...claimed);
      if (claimed.length < want) claimDirty = false;
      found ||= claimed.length > 0;
    }
    return found;
  };

  const loop = (async (): Promise<void> => {
    while (!shutdown.signal.aborted) {
      const seen = wakes;
      let found = false;
      try {
        found = await refill();
      } catch (error) {
        deps.logger.error({ err: error }, "webhook dispatch failed; retrying");
        claimDirty = true;
        outboxDirty = true;
        noteDue(deps.clock.now() + 1000);
      }
      startQueued();
      if (found) continue;
      let pause = 0;
      if (!outboxDirty && !claimDirty && inFlight.size + queue.length === 0) {
        // Idle: learn when the next work falls due (other instances' work included).
        const nextAt = await nextWorkAt(deps.db).catch(() => null);
        const now = deps.clock.now();
        if (nextAt !== null && nextAt.getTime() <= now) {
          // Due, yet not taken: another instance holds it right now. Look again shortly.
          outboxDirty = true;
          claimDirty = true;
          pause = BUSY_ELSEWHERE_RECHECK_MS;
        } else {
          noteDue(
            nextAt === null ? now + IDLE_RECHECK_MS : Math.min(nextAt.getTime(), now + IDLE_RECHECK_MS),
          );
        }
      }
      if (wakes !== seen || shutdown.signal.aborted) continue;
      const stopPause = new AbortController();
      const waits = [
        new Promise<void>((resolve) => {
          wakeUp = resolve;
        }),
      ];
      if (pause > 0) waits.push(systemClock.sleep(pause, stopPause.signal));
      if (pause === 0 && !outboxDirty && !claimDirty && inFlight.size + queue.length === 0) {
        resting = true;
        for (const settle of restWaiters.splice(0)) settle();
      }
      await Promise.race(waits);
      resting = false;
      wakeUp = null;
      stopPause.abort(CANCELED);
    }
  })();

  const housekeeping = (async (): Promise<void> => {
    while (!shutdown.signal.aborted) {
      await deps.clock.sleep(config.SWEEP_INTERVAL_MS, shutdown.signal);
      if (shutdown.signal.aborted) return;
      try {
        const before = new Date(deps.clock.now() - DELIVERY_RETENTION_MS);
        while ((await deleteExpiredWebhookData(deps.db, before, RETENTION_BATCH)) >= RETENTION_BATCH) {
          if (shutdown.signal.aborted) return;
        }
      } catch (error) {
        deps.logger.error({ err: error }, "webhook retention sweep failed");
      }
    }
  })();

  return {
    stop: async () => {
      shutdown.abort();
      unlisten();
      dueTimer?.abort(CANCELED);
      wake();
      await loop;
      await housekeeping;
      await Promise.all([...inFlight]);
      // Leased but never started: give them back so another instance need not wait for the lease.
      for (const work of queue.splice(0)) await releaseLease(deps.db, work.deliveryId, work.leaseToken);
      if (ownsTransport) await transport.close();
      for (const settle of restWaiters.splice(0)) settle();
    },
    settled: () =>
      resting || shutdown.signal.aborted
        ? Promise.resolve()
        : new Promise<void>((resolve) => restWaiters.push(resolve)),
  };
}

/**
 * A delivery's work with its endpoint's signing secrets opened (decision 0032); null, logged, when
 * the current one does not open with the configured keys (the delivery is attempted again once its
 * lease runs out, so it goes out after `SECRETS_KEY_PREVIOUS` is fixed). A previous secret that does
 * not open only loses its second signature (a rotation after a lost key replaces the current one).
 */
function openedSecrets(deps: Deps, work: DeliveryWork): DeliveryWork | null {
  const place = signingSecretPlace(work.endpointId);
  let secret: string;
  try {
    secret = deps.sealing.open(work.secret, place);
  } catch (error) {
    deps.logger.error(
      { err: error, endpointId: work.endpointId, deliveryId: work.deliveryId },
      "a webhook endpoint's signing secret does not open: delivery held",
    );
    return null;
  }
  let previousSecret: string | null = null;
  try {
    previousSecret = work.previousSecret === null ? null : deps.sealing.open(work.previousSecret, place);
  } catch (error) {
    deps.logger.warn(
      { err: error, endpointId: work.endpointId },
      "a webhook endpoint's previous signing secret does not open: signed with the current one only",
    );
  }
  return { ...work, secret, previousSecret };
}

/**
 * The trace of the Request a `request.*` event is about (its `data.id`; decision 0048), read only
 * while tracing is on: its deliveries continue that trace.
 */
async function requestTraceOf(deps: Deps, event: DeliveryWork["event"]): Promise<string | null> {
  if (!event.type.startsWith("request.")) return null;
  const id = (JSON.parse(event.data) as { id?: unknown }).id;
  return typeof id === "string" ? findRequestTraceparent(deps.db, id) : null;
}
