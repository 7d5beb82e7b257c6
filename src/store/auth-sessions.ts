import type { Selectable } from "kysely";
import { recordSetupCompleted, wakeDispatcher } from "./connection-events.ts";
import type { Db } from "./database.ts";
import type { AuthSessionsTable } from "./schema.ts";

export type AuthSessionRow = Selectable<AuthSessionsTable>;

export async function insertAuthSession(db: Db, row: AuthSessionRow): Promise<void> {
  await db.insertInto("auth_sessions").values(row).execute();
}

/** The hosted page finds a session by its ID; the client secret is checked by the caller. */
export async function findAuthSessionById(db: Db, authSessionId: string): Promise<AuthSessionRow | null> {
  const r = await db
    .selectFrom("auth_sessions")
    .selectAll()
    .where("id", "=", authSessionId)
    .executeTakeFirst();
  return r ?? null;
}

/** Earlier pending sessions of a connection are superseded when a new link is made (new password). */
export async function supersedePendingSessions(
  db: Db,
  connectionId: string,
  exceptId: string,
): Promise<void> {
  await db
    .updateTable("auth_sessions")
    .set({ status: "superseded" })
    .where("connection_id", "=", connectionId)
    .where("status", "=", "pending")
    .where("id", "!=", exceptId)
    .execute();
}

/**
 * Moves a pending session to a final status; returns the updated row, or null if it was not pending.
 * Completing it writes `connection.setup_completed` in the same transaction.
 */
export async function finishAuthSession(
  db: Db,
  authSessionId: string,
  status: "completed" | "canceled",
  at: Date,
): Promise<AuthSessionRow | null> {
  const { rows, written } = await db.transaction().execute(async (trx) => {
    const done = await trx
      .updateTable("auth_sessions")
      .set({ status, completed_at: at })
      .where("id", "=", authSessionId)
      .where("status", "=", "pending")
      .returningAll()
      .execute();
    return { rows: done, written: status === "completed" && (await recordSetupCompleted(trx, done)) };
  });
  if (written) await wakeDispatcher(db);
  return rows[0] ?? null;
}

/**
 * Completes every pending, unexpired session of a connection (first successful check-in), with a
 * `connection.setup_completed` event per session in the same transaction.
 */
export async function completePendingSessions(db: Db, connectionId: string, at: Date): Promise<void> {
  const written = await db.transaction().execute(async (trx) => {
    const done = await trx
      .updateTable("auth_sessions")
      .set({ status: "completed", completed_at: at })
      .where("connection_id", "=", connectionId)
      .where("status", "=", "pending")
      .where("expires_at", ">", at)
      .returningAll()
      .execute();
    return done.length > 0 && (await recordSetupCompleted(trx, done));
  });
  if (written) await wakeDispatcher(db);
}
