import type { Selectable } from "kysely";
import type { Db } from "./database.ts";
import type { ConnectionStatusChangesTable } from "./schema.ts";

/**
 * A connection's status history (migration 0021, decision 0028): one row per change of its stored
 * `status`, written by store/connection-events.ts in the transaction that changes it.
 */
export type StatusChangeRow = Selectable<ConnectionStatusChangesTable>;

/** The changes of `connectionId` from `since` on, oldest first. */
export async function statusChangesFrom(
  db: Db,
  connectionId: string,
  since: Date,
): Promise<StatusChangeRow[]> {
  return db
    .selectFrom("connection_status_changes")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .where("changed_at", ">=", since)
    .orderBy("changed_at")
    .orderBy("id")
    .execute();
}

/** Deletes at most `limit` changes made at or before `before` (the sweep's retention). */
export async function deleteStatusChangesBefore(db: Db, before: Date, limit: number): Promise<number> {
  const result = await db
    .deleteFrom("connection_status_changes")
    .where("id", "in", (eb) =>
      eb.selectFrom("connection_status_changes").select("id").where("changed_at", "<=", before).limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
