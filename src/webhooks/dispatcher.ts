import type { Deps } from "../deps.ts";
import { systemClock } from "../platform/clock.ts";
import { newId } from "../platform/ids.ts";
import { randomFraction, randomToken } from "../platform/random.ts";
import { EVENTS_CHANNEL } from "../store/events.ts";
import {
  claimDueDeliveries,
  deleteExpiredWebhookData,
  fanOutEvents,
  nextWorkAt,
  recordAttempt,
  releaseLease,
  type DeliveryWork,
  type EventRow,
  type Lease,
} from "../store/webhook-dispatch.ts";
import type { WebhookEndpointRow } from "../store/webhooks.ts";
import { attemptDelivery, type AttemptEnvironment } from "./attempt.ts";
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
 *   due delivery ──claim (SKIP LOCKED, lease)──▶ attempt ──record──▶ succeeded | pending (next attempt) | failed
 *
 * It wakes when an event is committed (the notifier: in-process, and LISTEN/NOTIFY across
 * instances), when an attempt finishes and frees a slot, and on the injected clock when the next
 * retry falls due. A lease lasts twice the attempt timeout; an instance that dies mid-attempt loses
 * its leases when they expire, and the delivery is attempted again (at least once; receivers
 * deduplicate on `webhook-id`). The delivery state machine:
 *
 *   pending ──2xx──▶ succeeded
 *   pending ──failure, attempts left──▶ pending (nextAttemptAt per the schedule)
 *   pending ──failure, last attempt──▶ failed
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
  /** Resolves when no attempt is in flight and nothing is due now (tests, benchmarks). */
  idle(): Promise<void>;
}

/** Idle waits are capped so that work scheduled by other instances is seen within this clock time. */
const IDLE_RECHECK_MS = 30_000;
const RETENTION_BATCH = 500;
const BUSY_ELSEWHERE_RECHECK_MS = 50;

export function startDispatcher(deps: Deps, options: DispatcherOptions = {}): Dispatcher {
  const config = deps.config;
  const concurrency = config.WEBHOOK_CONCURRENCY;
  const schedule = config.WEBHOOK_RETRY_SCHEDULE_MS;
  const random = options.random ?? randomFraction;
  const ownsTransport = options.transport === undefined;
  const transport =
    options.transport ??
    undiciTransport({
      socketTimeoutMs: config.WEBHOOK_ATTEMPT_TIMEOUT_MS * 2,
      connectionsPerOrigin: Math.min(concurrency, 64),
    });
  const env: AttemptEnvironment = {
    clock: deps.clock,
    resolve: options.resolve ?? systemResolver,
    transport,
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK === "on",
    timeoutMs: config.WEBHOOK_ATTEMPT_TIMEOUT_MS,
    userAgent: "ledger-bridge-webhooks/1",
  };
  const shutdown = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let wakeUp: (() => void) | null = null;
  let wakes = 0;
  const wake = (): void => {
    wakes++;
    wakeUp?.();
  };
  const unlisten = deps.store.notifier.listen(EVENTS_CHANNEL, wake);
  const idleWaiters: Array<() => void> = [];

  const newLease = (): Lease => ({
    token: randomToken(12),
    until: new Date(deps.clock.now() + config.WEBHOOK_ATTEMPT_TIMEOUT_MS * 2),
  });
  const takes = (event: EventRow, endpoint: WebhookEndpointRow): boolean =>
    endpoint.enabled &&
    endpoint.mode === event.mode &&
    subscribes(endpoint.event_types, event.type) &&
    (endpoint.include_sync_requests || !event.caller_received_result);

  const run = (work: DeliveryWork): void => {
    const task = attemptAndRecord(work).catch((error: unknown) => {
      deps.logger.error({ err: error, deliveryId: work.deliveryId }, "webhook attempt failed to record");
    });
    inFlight.add(task);
    void task.finally(() => {
      inFlight.delete(task);
      wake();
    });
  };

  const attemptAndRecord = async (work: DeliveryWork): Promise<void> => {
    const outcome = await attemptDelivery(env, work, shutdown.signal);
    if (outcome === null) {
      await releaseLease(deps.db, work.deliveryId, work.leaseToken);
      return;
    }
    const attempt = work.attemptCount + 1;
    const now = deps.clock.now();
    const ok = outcome.record.error === null;
    const next = ok ? null : nextAttemptAt(schedule, attempt, now, random(), outcome.retryAfterMs);
    const { disabled } = await recordAttempt(deps.db, {
      deliveryId: work.deliveryId,
      leaseToken: work.leaseToken,
      endpointId: work.endpointId,
      record: { attempt, ...outcome.record },
      status: ok ? "succeeded" : next === null ? "failed" : "pending",
      nextAttemptAt: next === null ? null : new Date(next),
      now: new Date(now),
      disableIfFailingSince: new Date(now - AUTO_DISABLE_AFTER_MS),
      disabledReason: AUTO_DISABLED_REASON,
    });
    if (disabled)
      deps.logger.warn({ endpointId: work.endpointId }, "webhook endpoint disabled after 5 days of failures");
  };

  /** Starts what can start now; true when anything was found. */
  const pump = async (): Promise<boolean> => {
    let found = false;
    const free = (): number => concurrency - inFlight.size;
    if (free() > 0) {
      const fanned = await fanOutEvents(deps.db, {
        now: new Date(deps.clock.now()),
        batchSize: options.fanOutBatch ?? 200,
        lease: newLease(),
        leaseLimit: free(),
        takes,
        newDeliveryId: () => newId("webhookDelivery"),
      });
      for (const work of fanned.work) run(work);
      found ||= fanned.events > 0;
    }
    if (free() > 0) {
      const claimed = await claimDueDeliveries(deps.db, new Date(deps.clock.now()), free(), newLease());
      for (const work of claimed) run(work);
      found ||= claimed.length > 0;
    }
    return found;
  };

  const loop = (async (): Promise<void> => {
    while (!shutdown.signal.aborted) {
      const seen = wakes;
      let found = false;
      try {
        found = await pump();
      } catch (error) {
        deps.logger.error({ err: error }, "webhook dispatch failed; retrying");
      }
      if (found) continue;
      const hasRoom = inFlight.size < concurrency;
      const nextAt = hasRoom ? await nextWorkAt(deps.db).catch(() => null) : null;
      const now = deps.clock.now();
      const dueNow = nextAt !== null && nextAt.getTime() <= now;
      if (inFlight.size === 0 && !dueNow) for (const resolve of idleWaiters.splice(0)) resolve();
      if (wakes !== seen || shutdown.signal.aborted) continue;
      const pause = new AbortController();
      const waits = [
        new Promise<void>((resolve) => {
          wakeUp = resolve;
        }),
      ];
      // Due work that could not be taken is being fanned out or attempted by another instance:
      // look again shortly (real time: it does not depend on the business clock).
      if (dueNow) waits.push(systemClock.sleep(BUSY_ELSEWHERE_RECHECK_MS, pause.signal));
      else if (hasRoom) {
        const delay = nextAt === null ? IDLE_RECHECK_MS : Math.min(IDLE_RECHECK_MS, nextAt.getTime() - now);
        waits.push(deps.clock.sleep(delay, pause.signal));
      }
      await Promise.race(waits);
      wakeUp = null;
      pause.abort();
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
      wake();
      await loop;
      await housekeeping;
      await Promise.all([...inFlight]);
      if (ownsTransport) await transport.close();
    },
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        wake();
      }),
  };
}
