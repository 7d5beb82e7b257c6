import { sql, type Selectable } from "kysely";
import type { Db } from "./database.ts";
import type { ConnectorSessionsTable } from "./schema.ts";

export type ConnectorSessionRow = Selectable<ConnectorSessionsTable>;
/** What a session's transition may write besides its phase (connector/session/phases.ts). */
export type SessionChanges = Partial<
  Omit<ConnectorSessionRow, "ticket_hash" | "connection_id" | "created_at" | "state" | "phase">
>;

export async function insertSession(
  db: Db,
  row: Omit<ConnectorSessionRow, "ledger_answered_at" | "state" | "personal_data_allowed"> & {
    ledger_answered_at?: Date | null;
    personal_data_allowed?: boolean | null;
  },
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

/**
 * Moves a session from one of `from` to `to` with `changes`, in one compare-and-set statement: the
 * connector session machine's one writer (connector/session/phases.ts). A session no longer in
 * one of `from` is left as it is and null returned — a closed session is final, so a call that
 * raced its close (a hold ending on its timer, a late answer) never rewrites what its connector is
 * told, and a second close never replaces the first one's reason.
 */
export async function moveSessionPhase(
  db: Db,
  ticketHash: string,
  from: readonly ConnectorSessionRow["phase"][],
  to: ConnectorSessionRow["phase"] | null,
  changes: SessionChanges,
): Promise<ConnectorSessionRow | null> {
  const row = await db
    .updateTable("connector_sessions")
    .set({ ...changes, ...(to === null ? {} : { phase: to }) })
    .where("ticket_hash", "=", ticketHash)
    .where("phase", "in", [...from])
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

/** One activity stamp: a session's ticket, its connection and when the connector last called. */
export interface ActivityStamp {
  ticketHash: string;
  connectionId: string;
  at: Date;
}

/**
 * Writes a batch of activity stamps (store/activity-stamps.ts) in one statement: each session's
 * `last_activity_at` and each connection's `last_seen_at`, never moved backwards (a check-in written
 * meanwhile, or another instance's newer stamp, wins).
 */
export async function writeActivityStamps(db: Db, stamps: readonly ActivityStamp[]): Promise<void> {
  if (stamps.length === 0) return;
  const latest = new Map<string, Date>();
  for (const s of stamps) {
    const seen = latest.get(s.connectionId);
    if (!seen || seen < s.at) latest.set(s.connectionId, s.at);
  }
  const iso = (d: Date): string => d.toISOString();
  await sql`
    with session as (
      update connector_sessions c set last_activity_at = v.at
      from unnest(${stamps.map((s) => s.ticketHash)}::text[], ${stamps.map((s) => iso(s.at))}::timestamptz[])
        as v(ticket_hash, at)
      where c.ticket_hash = v.ticket_hash and c.last_activity_at < v.at
      returning c.ticket_hash
    )
    update connections c set last_seen_at = v.at
    from unnest(${[...latest.keys()]}::text[], ${[...latest.values()].map(iso)}::timestamptz[]) as v(id, at)
    where c.id = v.id and (c.last_seen_at is null or c.last_seen_at < v.at)
  `.execute(db);
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
