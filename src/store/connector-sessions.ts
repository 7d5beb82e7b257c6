import type { Selectable } from "kysely";
import type { Db } from "./database.ts";
import type { ConnectorSessionsTable } from "./schema.ts";

export type ConnectorSessionRow = Selectable<ConnectorSessionsTable>;
export type SessionChanges = Partial<
  Omit<ConnectorSessionRow, "ticket_hash" | "connection_id" | "created_at">
>;

export async function insertSession(
  db: Db,
  row: Omit<ConnectorSessionRow, "ledger_answered_at"> & { ledger_answered_at?: Date | null },
): Promise<void> {
  await db.insertInto("connector_sessions").values(row).execute();
}

export async function findSession(db: Db, ticketHash: string): Promise<ConnectorSessionRow | null> {
  const r = await db
    .selectFrom("connector_sessions")
    .selectAll()
    .where("ticket_hash", "=", ticketHash)
    .executeTakeFirst();
  return r ?? null;
}

export async function updateSession(db: Db, ticketHash: string, changes: SessionChanges): Promise<void> {
  await db.updateTable("connector_sessions").set(changes).where("ticket_hash", "=", ticketHash).execute();
}

/**
 * Stamps a live session's activity and its connection's `last_seen_at` in one statement (the hot
 * path of every connector call: an idle session re-asks each hold period).
 */
export async function touchSessionAndConnection(
  db: Db,
  ticketHash: string,
  connectionId: string,
  at: Date,
): Promise<void> {
  await db
    .with("session", (w) =>
      w
        .updateTable("connector_sessions")
        .set({ last_activity_at: at })
        .where("ticket_hash", "=", ticketHash)
        .returning("ticket_hash"),
    )
    .updateTable("connections")
    .set({ last_seen_at: at })
    .where("id", "=", connectionId)
    .execute();
}

/** Which of these connections have an open session now (the connector is checked in). */
export async function connectionsInSession(db: Db, connectionIds: readonly string[]): Promise<Set<string>> {
  if (connectionIds.length === 0) return new Set();
  const rows = await db
    .selectFrom("connector_sessions")
    .select("connection_id")
    .where("connection_id", "in", connectionIds)
    .where("state", "=", "open")
    .execute();
  return new Set(rows.map((r) => r.connection_id));
}

export async function openSessions(db: Db, connectionId: string): Promise<ConnectorSessionRow[]> {
  return db
    .selectFrom("connector_sessions")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .where("state", "=", "open")
    .execute();
}

/** Recent sessions (for diagnosis: how many sessions ended without the application answering). */
export async function recentSessions(
  db: Db,
  connectionId: string,
  limit: number,
): Promise<ConnectorSessionRow[]> {
  return db
    .selectFrom("connector_sessions")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .orderBy("created_at", "desc")
    .limit(limit)
    .execute();
}
