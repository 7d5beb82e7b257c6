import type { Db } from "./database.ts";
import type { RequestRow } from "./requests.ts";

/**
 * SQL of the background sweep (requests/sweeper.ts). These are the only store functions that read
 * across projects: the sweep is maintenance on behalf of every project, like crash recovery
 * (`allSentRequests`). Each query is bounded instead: it touches only rows past a deadline, in
 * batches of at most `limit`, through the indexes of migration 0002. Nothing here needs a lock:
 * request transitions are compare-and-set (store/requests.ts `transitionRequest`) and deleting an
 * expired row twice deletes it once, so several instances may sweep one database at the same time.
 */

/**
 * Requests not yet sent (`queued`, `waiting_for_connection`) whose queue TTL ended at or before
 * `now`, earliest deadline first, at most `limit`.
 */
export async function expiredWaitingRequests(db: Db, now: Date, limit: number): Promise<RequestRow[]> {
  return db
    .selectFrom("requests")
    .selectAll()
    .where("status", "in", ["queued", "waiting_for_connection"])
    .where("queue_ttl_expires_at", "is not", null)
    .where("queue_ttl_expires_at", "<=", now)
    .orderBy("queue_ttl_expires_at")
    .limit(limit)
    .execute();
}

/**
 * Deletes at most `limit` idempotency keys whose retention ended at or before `now` (the same rule
 * as `claimIdempotencyKey`, which replaces such a key when it is reused). The outer condition is
 * repeated so that a key re-claimed meanwhile (a new row, with a new `expires_at`) is never deleted.
 * Returns the number of rows deleted.
 */
export async function deleteExpiredIdempotencyKeys(db: Db, now: Date, limit: number): Promise<number> {
  const result = await db
    .deleteFrom("idempotency_keys")
    .where("expires_at", "<=", now)
    .where((eb) =>
      eb(
        eb.refTuple("project_id", "is_test", "key"),
        "in",
        eb
          .selectFrom("idempotency_keys")
          .select(["project_id", "is_test", "key"])
          .where("expires_at", "<=", now)
          .limit(limit)
          .$asTuple("project_id", "is_test", "key"),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Connections in one of `statuses` whose connector was last seen at or before `seenBefore` (silent
 * beyond the offline window), at most `limit`. The sweep moves each through the status machine,
 * which checks the silence again under the row lock.
 */
export async function silentConnections(
  db: Db,
  statuses: readonly string[],
  seenBefore: Date,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom("connections")
    .select("id")
    .where("status", "in", [...statuses])
    .where("last_seen_at", "<", seenBefore)
    .orderBy("last_seen_at")
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Deletes at most `limit` finished requests (succeeded, failed, canceled) completed at or before
 * `completedBefore`. Requests still waiting, sent or `outcome_unknown` are never deleted.
 */
export async function deleteFinishedRequests(db: Db, completedBefore: Date, limit: number): Promise<number> {
  const finished = ["succeeded", "failed", "canceled"];
  const result = await db
    .deleteFrom("requests")
    .where("status", "in", finished)
    .where("completed_at", "<=", completedBefore)
    .where("id", "in", (eb) =>
      eb
        .selectFrom("requests")
        .select("id")
        .where("status", "in", finished)
        .where("completed_at", "<=", completedBefore)
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes at most `limit` connector sessions closed at or before `closedBefore`; open ones never. */
export async function deleteClosedSessions(db: Db, closedBefore: Date, limit: number): Promise<number> {
  const result = await db
    .deleteFrom("connector_sessions")
    .where("state", "=", "closed")
    .where("closed_at", "<=", closedBefore)
    .where("ticket_hash", "in", (eb) =>
      eb
        .selectFrom("connector_sessions")
        .select("ticket_hash")
        .where("state", "=", "closed")
        .where("closed_at", "<=", closedBefore)
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes the stamps of writes to records older than `before` (they hold nothing back any more). */
export async function deleteRecordWritesBefore(db: Db, before: Date): Promise<number> {
  const result = await db.deleteFrom("record_writes").where("written_at", "<", before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
