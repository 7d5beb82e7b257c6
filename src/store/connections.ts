import { sql, type Selectable } from "kysely";
import type { Db } from "./database.ts";
import type { ConnectionsTable } from "./schema.ts";
import { isTestTenant, type Tenant } from "./tenant.ts";

export type ConnectionRow = Selectable<ConnectionsTable>;

/**
 * Inserts a connection unless its end user has one already (one connection per end user; two
 * concurrent setups race here). Returns whether the row was inserted.
 */
export async function insertConnection(db: Db, row: ConnectionRow): Promise<boolean> {
  const inserted = await db
    .insertInto("connections")
    .values(row)
    .onConflict((oc) => oc.column("end_user_id").doNothing())
    .returning("id")
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function findConnectionForEndUser(
  db: Db,
  projectId: string,
  endUserId: string,
): Promise<ConnectionRow | null> {
  const r = await db
    .selectFrom("connections")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("end_user_id", "=", endUserId)
    .executeTakeFirst();
  return r ?? null;
}

export async function findConnectionsForEndUsers(
  db: Db,
  projectId: string,
  endUserIds: string[],
): Promise<ConnectionRow[]> {
  if (endUserIds.length === 0) return [];
  return db
    .selectFrom("connections")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("end_user_id", "in", endUserIds)
    .execute();
}

/** The connector endpoint knows a connection only by its connector user name (not project-scoped by nature). */
export async function findConnectionByUsername(db: Db, username: string): Promise<ConnectionRow | null> {
  const r = await db
    .selectFrom("connections")
    .selectAll()
    .where("username", "=", username)
    .executeTakeFirst();
  return r ?? null;
}

export async function findConnectionById(db: Db, connectionId: string): Promise<ConnectionRow | null> {
  const r = await db.selectFrom("connections").selectAll().where("id", "=", connectionId).executeTakeFirst();
  return r ?? null;
}

/**
 * Changes of anything but `status`: the status moves only through the connection status machine
 * (connections/status.ts → store/connection-events.ts `changeConnectionStatus`).
 */
export type ConnectionChanges = Partial<
  Omit<ConnectionRow, "id" | "project_id" | "end_user_id" | "created_at" | "status">
>;

/** Updates a connection's fields other than its status. */
export async function updateConnection(
  db: Db,
  connectionId: string,
  changes: ConnectionChanges,
): Promise<ConnectionRow | null> {
  const r = await db
    .updateTable("connections")
    .set(changes)
    .where("id", "=", connectionId)
    .returningAll()
    .executeTakeFirst();
  return r ?? null;
}

/**
 * Another connection of the same project and mode that adopted the company file identity
 * `fileIdentity` (the FileID marker a connector stamped into it), if any (decision 0019).
 */
export async function findOtherConnectionWithFile(
  db: Db,
  connection: Pick<ConnectionRow, "id" | "project_id" | "is_test">,
  fileIdentity: string,
): Promise<Pick<ConnectionRow, "id" | "end_user_id"> | null> {
  const r = await db
    .selectFrom("connections")
    .select(["id", "end_user_id"])
    .where("project_id", "=", connection.project_id)
    .where("is_test", "=", connection.is_test)
    .where("file_identity", "=", fileIdentity)
    .where("id", "<>", connection.id)
    .orderBy("id")
    .executeTakeFirst();
  return r ?? null;
}

/** Test connections of an organisation (spec: test company files are capped per organisation). */
export async function countTestConnections(db: Db, organization: string): Promise<number> {
  const r = await db
    .selectFrom("connections")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("organization", "=", organization)
    .where("is_test", "=", true)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Updates without reading back (hot path). */
export async function touchConnection(
  db: Db,
  connectionId: string,
  changes: ConnectionChanges,
): Promise<void> {
  await db.updateTable("connections").set(changes).where("id", "=", connectionId).execute();
}

/**
 * Everything an application call needs about its end user, in one statement: whether the end user
 * exists in the project and mode (decision 0005), its connection (if set up), how many requests wait on it (counted up
 * to `countUpTo`, enough to enforce the queue capacity), and since when the application has owed
 * an answer: the oldest request handed over and not answered, or the oldest open connector session
 * whose company file report never came (LEDGER_NOT_RESPONDING, decision 0019). Null when the end
 * user does not exist.
 */
export async function findCallTarget(
  db: Db,
  tenant: Tenant,
  endUserId: string,
  countUpTo: number,
): Promise<{ connection: ConnectionRow | null; waiting: number; unansweredSince: Date | null } | null> {
  const row = await db
    .selectFrom("end_users as eu")
    .leftJoin("connections as c", (join) =>
      join.onRef("c.end_user_id", "=", "eu.id").onRef("c.project_id", "=", "eu.project_id"),
    )
    .selectAll("c")
    .select(
      sql<string>`(select count(*) from (
        select 1 from requests w
        where w.connection_id = c.id and w.status in ('queued', 'waiting_for_connection')
        limit ${countUpTo}) as waiting)`.as("waiting_count"),
    )
    .select(
      sql<Date | null>`least(
        (select min(r.sent_at) from requests r where r.connection_id = c.id and r.status = 'sent'),
        (select min(s.created_at) from connector_sessions s
          where s.connection_id = c.id and s.phase = 'opened'))`.as("unanswered_since"),
    )
    .where("eu.project_id", "=", tenant.projectId)
    .where("eu.is_test", "=", isTestTenant(tenant))
    .where("eu.id", "=", endUserId)
    .executeTakeFirst();
  if (!row) return null;
  const { waiting_count: waiting, unanswered_since: unansweredSince, ...connection } = row;
  // Left-join columns are all null without a connection; otherwise they form a whole row.
  return {
    connection: connection.id === null ? null : (connection as ConnectionRow),
    waiting: Number(waiting),
    unansweredSince,
  };
}
