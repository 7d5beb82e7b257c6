import type { Deps } from "../deps.ts";
import {
  deleteClosedSessions,
  deleteExpiredIdempotencyKeys,
  deleteFinishedRequests,
  deleteRecordWritesBefore,
  expiredWaitingRequests,
  silentConnections,
} from "../store/sweeps.ts";
import { deleteStatusChangesBefore } from "../store/connection-history.ts";
import { GOES_OFFLINE_WHEN_SILENT } from "../connections/seen.ts";
import { markOfflineIfSilent } from "../connections/status.ts";
import { requestsGone } from "../store/requests.ts";
import { expireUnsent } from "./engine.ts";

/**
 * The background sweep: every `SWEEP_INTERVAL_MS` of the injected clock it
 *
 * 1. ends the requests whose queue TTL passed before they could be sent as `canceled` with
 *    REQUEST_EXPIRED (spec: States, "Queue TTL elapses"), through the engine's `endUnsent`, so the
 *    timeline entry and the wake-up of waiters are those of every other transition. Reads apply the
 *    same rule lazily (api/routes/requests.ts) and a connector claim skips and ends such requests
 *    (engine `nextWork`); the sweep makes the request end on time when nobody reads it and its
 *    connector never checks in again;
 * 2. moves connections whose connector has been silent beyond `CONNECTION_OFFLINE_AFTER_MS` to
 *    `offline` through the connection status machine (connections/status.ts), which writes
 *    `connection.status_changed`; reads already show such a connection offline (derived);
 * 3. deletes idempotency keys past their 7-day retention (spec: Limits; `IDEMPOTENCY_RETENTION_MS`);
 * 4. retention: deletes finished Requests (succeeded, failed, canceled) `REQUEST_RETENTION_MS`
 *    after they completed, and closed connector sessions `CONNECTOR_SESSION_RETENTION_MS` after
 *    they closed, and connections' status history `CONNECTION_HISTORY_RETENTION_MS` after each
 *    change. Waiting, sent and `outcome_unknown` requests and open sessions are never deleted;
 * 5. deletes the stamps of the service's writes to records once they can hold no write back.
 *
 * Open connector sessions are not closed here: their tickets have no stored expiry (it is derived
 * from `last_activity_at` and `CONNECTOR_TICKET_TTL_MS`), and an expired open session must be
 * closed by the connector layer, which also interrupts its in-flight requests.
 *
 * Several instances may sweep one PostgreSQL at once: each transition is a compare-and-set, so a
 * request another instance (or a reader, or a claim) ended first is skipped; deletes are idempotent.
 */

/** Write stamps older than this hold nothing back (writes are spaced by a second): the sweep deletes them. */
export const RECORD_WRITES_KEPT_MS = 60_000;

/** Rows handled per batch (each a bounded query). */
export const SWEEP_BATCH_SIZE = 500;
/** A sweep repeats full batches at most this often, so a large backlog cannot hold the store for long. */
export const SWEEP_BATCHES_MAX = 10;

export interface SweepResult {
  /** Requests this sweep ended with REQUEST_EXPIRED (ones ended meanwhile by others are not counted). */
  expiredRequests: number;
  /** Idempotency keys deleted. */
  idempotencyKeysDeleted: number;
  /** Connections this sweep moved to `offline`. */
  connectionsOffline: number;
  /** Finished requests deleted after their retention. */
  requestsDeleted: number;
  /** Closed connector sessions deleted after their retention. */
  sessionsDeleted: number;
  /** Rows of connections' status history past `CONNECTION_HISTORY_RETENTION_MS`. */
  statusChangesDeleted: number;
  /** Stamps of the service's writes to records, old enough to hold nothing back. */
  recordWritesDeleted: number;
}

export interface SweepOptions {
  batchSize?: number;
  /** Stops between rows and batches (shutdown). */
  signal?: AbortSignal;
}

/** One sweep; the times are read from `deps.clock`. */
export async function sweepOnce(deps: Deps, options: SweepOptions = {}): Promise<SweepResult> {
  const batchSize = options.batchSize ?? SWEEP_BATCH_SIZE;
  const signal = options.signal;
  let expiredRequests = 0;
  for (let batch = 0; batch < SWEEP_BATCHES_MAX && !signal?.aborted; batch++) {
    const rows = await expiredWaitingRequests(deps.db, new Date(deps.clock.now()), batchSize);
    for (const row of rows) {
      if (signal?.aborted) break;
      const ended = await expireUnsent(deps, row);
      if (ended) expiredRequests += 1;
    }
    if (rows.length < batchSize) break;
  }
  let connectionsOffline = 0;
  // This instance's connector calls not yet written count as seen (activity stamps, decision 0023);
  // another instance's are written within ACTIVITY_FLUSH_MS, far inside the offline window.
  await deps.activity.flush(deps.db);
  for (let batch = 0; batch < SWEEP_BATCHES_MAX && !signal?.aborted; batch++) {
    const seenBefore = new Date(deps.clock.now() - deps.config.CONNECTION_OFFLINE_AFTER_MS);
    const ids = await silentConnections(deps.db, GOES_OFFLINE_WHEN_SILENT, seenBefore, batchSize);
    for (const id of ids) {
      if (signal?.aborted) break;
      if (await markOfflineIfSilent(deps, id)) connectionsOffline += 1;
    }
    if (ids.length < batchSize) break;
  }
  const now = (): number => deps.clock.now();
  const idempotencyKeysDeleted = await deleteInBatches(signal, batchSize, (limit) =>
    deleteExpiredIdempotencyKeys(deps.db, new Date(now()), limit),
  );
  const requestsDeleted = await deleteInBatches(signal, batchSize, (limit) =>
    deleteFinishedRequests(deps.db, new Date(now() - deps.config.REQUEST_RETENTION_MS), limit),
  );
  // Every instance's cache of settled Requests forgets them (it keeps none this old on its own clock).
  if (requestsDeleted > 0) await requestsGone(deps.store);
  const sessionsDeleted = await deleteInBatches(signal, batchSize, (limit) =>
    deleteClosedSessions(deps.db, new Date(now() - deps.config.CONNECTOR_SESSION_RETENTION_MS), limit),
  );
  const statusChangesDeleted = await deleteInBatches(signal, batchSize, (limit) =>
    deleteStatusChangesBefore(deps.db, new Date(now() - deps.config.CONNECTION_HISTORY_RETENTION_MS), limit),
  );
  const recordWritesDeleted = await deleteRecordWritesBefore(
    deps.db,
    new Date(now() - RECORD_WRITES_KEPT_MS),
  );
  return {
    expiredRequests,
    idempotencyKeysDeleted,
    connectionsOffline,
    requestsDeleted,
    sessionsDeleted,
    statusChangesDeleted,
    recordWritesDeleted,
  };
}

/** Repeats a bounded delete while batches come back full, at most {@link SWEEP_BATCHES_MAX} times. */
async function deleteInBatches(
  signal: AbortSignal | undefined,
  batchSize: number,
  deleteBatch: (limit: number) => Promise<number>,
): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < SWEEP_BATCHES_MAX && !signal?.aborted; batch++) {
    const deleted = await deleteBatch(batchSize);
    total += deleted;
    if (deleted < batchSize) break;
  }
  return total;
}

/** A running sweeper. */
export interface Sweeper {
  /** Stops the sweeper: cancels its wait, lets a sweep in progress finish its current row, and resolves after. */
  stop(): Promise<void>;
}

/**
 * Starts sweeping every `SWEEP_INTERVAL_MS` (the first sweep one interval after the start). A failed
 * sweep is logged and retried at the next interval. Call `stop()` before closing the store.
 */
export function startSweeper(deps: Deps): Sweeper {
  const intervalMs = deps.config.SWEEP_INTERVAL_MS;
  const controller = new AbortController();
  const { signal } = controller;
  const loop = (async (): Promise<void> => {
    while (!signal.aborted) {
      await deps.clock.sleep(intervalMs, signal);
      if (signal.aborted) return;
      const started = deps.clock.now();
      try {
        const result = await sweepOnce(deps, { signal });
        deps.metrics.sweepRuns.inc({ result: "ok" });
        deps.metrics.sweepRows.inc({ action: "expired_requests" }, result.expiredRequests);
        deps.metrics.sweepRows.inc({ action: "idempotency_keys_deleted" }, result.idempotencyKeysDeleted);
        deps.metrics.sweepRows.inc({ action: "connections_offline" }, result.connectionsOffline);
        deps.metrics.sweepRows.inc({ action: "requests_deleted" }, result.requestsDeleted);
        deps.metrics.sweepRows.inc({ action: "connector_sessions_deleted" }, result.sessionsDeleted);
        deps.metrics.sweepRows.inc({ action: "record_writes_deleted" }, result.recordWritesDeleted);
        if (Object.values(result).some((n) => n > 0)) deps.logger.info(result, "background sweep");
      } catch (error) {
        deps.metrics.sweepRuns.inc({ result: "error" });
        deps.logger.error({ err: error }, "sweep failed; retrying at the next interval");
      }
      deps.metrics.sweepSeconds.observe((deps.clock.now() - started) / 1000);
    }
  })();
  return {
    stop: async () => {
      controller.abort();
      await loop;
    },
  };
}
