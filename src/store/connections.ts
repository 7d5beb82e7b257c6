import type { Selectable } from "kysely";
import type { Db } from "./database.ts";
import type { ConnectionsTable } from "./schema.ts";

export type ConnectionRow = Selectable<ConnectionsTable>;

export async function insertConnection(db: Db, row: ConnectionRow): Promise<void> {
  await db.insertInto("connections").values(row).execute();
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

export type ConnectionChanges = Partial<
  Omit<ConnectionRow, "id" | "project_id" | "end_user_id" | "created_at">
>;

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
