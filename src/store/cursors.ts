import { sql, type Selectable, type Updateable } from "kysely";
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

/**
 * A cursor of the tenant with the state of the connector session its pages came from (null when
 * it has none yet, or the session is gone), in one statement: a continuation checks both.
 */
export async function findCursorWithSession(
  db: Db,
  tenant: Tenant,
  id: string,
): Promise<{ cursor: CursorRow; sessionState: string | null } | null> {
  const row = await db
    .selectFrom("ledger_cursors as c")
    .leftJoin("connector_sessions as s", "s.ticket_hash", "c.ticket_hash")
    .selectAll("c")
    .select("s.state as session_state")
    .where("c.project_id", "=", tenant.projectId)
    .where("c.is_test", "=", isTestTenant(tenant))
    .where("c.id", "=", id)
    .executeTakeFirst();
  if (!row) return null;
  const { session_state: sessionState, ...cursor } = row;
  return { cursor, sessionState: sessionState ?? null };
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
  return (
    db
      .selectFrom("ledger_cursors")
      .selectAll()
      .where("connection_id", "=", connectionId)
      .where("state", "=", "open")
      .orderBy("last_used_at", "asc")
      // Pages booked in the same millisecond: the older cursor counts as less recently used.
      .orderBy("created_at", "asc")
      .execute()
  );
}

/** Deletes cursors unused since `before` (bounded batch; the sweep repeats). */
export async function deleteStaleCursors(db: Db, before: Date, limit: number): Promise<number> {
  const stale = db.selectFrom("ledger_cursors").select("id").where("last_used_at", "<", before).limit(limit);
  const result = await db.deleteFrom("ledger_cursors").where("id", "in", stale).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** What a page the application answered changes on its cursor (ledger/cursors.ts `recordPage`). */
export interface PageBooking {
  state: "open" | "finished";
  /** The iterator the answer names; null keeps the cursor's. */
  iteratorId: string | null;
  /** The session that carried the page; kept only when the cursor has none yet. */
  ticketHash: string;
  pagesServed: number;
  /** Added to the cursor's count. */
  records: number;
  remaining: number | null;
  lastRequestId: string;
  at: Date;
}

/**
 * Books a page on the tenant's cursor in one statement (decision 0035: it was a read, then a
 * compare-and-set on the state read): the row is locked, read and changed together. Returns the
 * cursor as it is now and the state it had before; null when there is no such cursor.
 */
export async function bookPage(
  db: Db,
  tenant: Tenant,
  id: string,
  page: PageBooking,
): Promise<{ cursor: CursorRow; previousState: CursorRow["state"] } | null> {
  const result = await sql<CursorRow & { previous_state: CursorRow["state"] }>`
    with old as (
      select * from ledger_cursors
      where project_id = ${tenant.projectId} and is_test = ${isTestTenant(tenant)} and id = ${id}
      for update
    ), booked as (
      update ledger_cursors c set
        state = ${page.state},
        iterator_id = coalesce(${page.iteratorId}::text, old.iterator_id),
        ticket_hash = coalesce(old.ticket_hash, ${page.ticketHash}::text),
        pages_served = ${page.pagesServed}::integer,
        records_served = old.records_served + ${page.records}::integer,
        remaining = ${page.remaining}::integer,
        last_request_id = ${page.lastRequestId},
        repeats = 0,
        last_used_at = ${page.at}::timestamptz
      from old where c.id = old.id
      returning c.*
    )
    select booked.*, old.state as previous_state from old, booked
  `.execute(db);
  const row = result.rows[0];
  if (!row) return null;
  const { previous_state: previousState, ...cursor } = row;
  return { cursor, previousState };
}
