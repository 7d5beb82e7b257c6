import type { Selectable, Updateable } from "kysely";
import type { Db } from "./database.ts";
import type { LedgerCursorsTable } from "./schema.ts";
import { isTestTenant, type Tenant } from "./tenant.ts";

export type CursorRow = Selectable<LedgerCursorsTable>;
export type NewCursorRow = Omit<CursorRow, "filters"> & { filters: Record<string, unknown> };
export type CursorChanges = Updateable<LedgerCursorsTable>;

/** Application cursors (`ledger/cursors.ts`); every read is scoped to the tenant (project and mode). */
export async function insertCursor(db: Db, row: NewCursorRow): Promise<void> {
  await db
    .insertInto("ledger_cursors")
    .values({ ...row, filters: JSON.stringify(row.filters) })
    .execute();
}

export async function findCursor(db: Db, tenant: Tenant, id: string): Promise<CursorRow | null> {
  const row = await db
    .selectFrom("ledger_cursors")
    .selectAll()
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("id", "=", id)
    .executeTakeFirst();
  return row ?? null;
}

/** Updates a cursor when it is still in `state` (compare-and-set); false when something else changed it. */
export async function updateCursor(
  db: Db,
  id: string,
  state: CursorRow["state"],
  changes: CursorChanges,
): Promise<boolean> {
  const result = await db
    .updateTable("ledger_cursors")
    .set(changes)
    .where("id", "=", id)
    .where("state", "=", state)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Open cursors of a connection, least recently used first. */
export async function openCursors(db: Db, connectionId: string): Promise<CursorRow[]> {
  return db
    .selectFrom("ledger_cursors")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .where("state", "=", "open")
    .orderBy("last_used_at", "asc")
    .execute();
}

/** Deletes cursors unused since `before` (bounded batch; the sweep repeats). */
export async function deleteStaleCursors(db: Db, before: Date, limit: number): Promise<number> {
  const stale = db.selectFrom("ledger_cursors").select("id").where("last_used_at", "<", before).limit(limit);
  const result = await db.deleteFrom("ledger_cursors").where("id", "in", stale).executeTakeFirst();
  return Number(result.numDeletedRows);
}
