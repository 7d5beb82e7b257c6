import type { Db } from "./database.ts";
import { isTestTenant, type Tenant } from "./tenant.ts";

export interface EndUserRow {
  id: string;
  projectId: string;
  /** The mode of the key that created it; only keys of that mode see it (decision 0005). */
  mode: Tenant["mode"];
  companyName: string;
  sourceId: string;
  email: string | null;
  createdAt: Date;
}

type Raw = {
  id: string;
  project_id: string;
  is_test: boolean;
  company_name: string;
  source_id: string;
  email: string | null;
  created_at: Date;
};
const map = (r: Raw): EndUserRow => ({
  id: r.id,
  projectId: r.project_id,
  mode: r.is_test ? "test" : "live",
  companyName: r.company_name,
  sourceId: r.source_id,
  email: r.email,
  createdAt: r.created_at,
});

/** Inserts an end user; returns false when `sourceId` is already used in the project and mode. */
export async function insertEndUser(db: Db, row: EndUserRow): Promise<boolean> {
  const result = await db
    .insertInto("end_users")
    .values({
      id: row.id,
      project_id: row.projectId,
      is_test: row.mode === "test",
      company_name: row.companyName,
      source_id: row.sourceId,
      email: row.email,
      created_at: row.createdAt,
    })
    .onConflict((oc) => oc.columns(["project_id", "is_test", "source_id"]).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function findEndUser(db: Db, tenant: Tenant, endUserId: string): Promise<EndUserRow | null> {
  const r = await db
    .selectFrom("end_users")
    .selectAll()
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("id", "=", endUserId)
    .executeTakeFirst();
  return r ? map(r) : null;
}

/** Newest first; `beforeId` continues after the last row of the previous page. Fetches `limit + 1`. */
export async function listEndUsers(
  db: Db,
  tenant: Tenant,
  limit: number,
  beforeId: string | null,
): Promise<EndUserRow[]> {
  let query = db
    .selectFrom("end_users")
    .selectAll()
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant));
  if (beforeId) query = query.where("id", "<", beforeId);
  const rows = await query
    .orderBy("id", "desc")
    .limit(limit + 1)
    .execute();
  return rows.map(map);
}

export interface EndUserChanges {
  companyName?: string | undefined;
  sourceId?: string | undefined;
  email?: string | null | undefined;
}

/** Applies changes; returns "conflict" when the new `sourceId` is taken, null when missing. */
export async function updateEndUser(
  db: Db,
  tenant: Tenant,
  endUserId: string,
  changes: EndUserChanges,
): Promise<EndUserRow | null | "conflict"> {
  const set: { company_name?: string; source_id?: string; email?: string | null } = {};
  if (changes.companyName !== undefined) set.company_name = changes.companyName;
  if (changes.sourceId !== undefined) set.source_id = changes.sourceId;
  if (changes.email !== undefined) set.email = changes.email;
  if (Object.keys(set).length === 0) return findEndUser(db, tenant, endUserId);
  if (changes.sourceId !== undefined) {
    const clash = await db
      .selectFrom("end_users")
      .select("id")
      .where("project_id", "=", tenant.projectId)
      .where("is_test", "=", isTestTenant(tenant))
      .where("source_id", "=", changes.sourceId)
      .where("id", "!=", endUserId)
      .executeTakeFirst();
    if (clash) return "conflict";
  }
  const r = await db
    .updateTable("end_users")
    .set(set)
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("id", "=", endUserId)
    .returningAll()
    .executeTakeFirst();
  return r ? map(r) : null;
}

/** Deletes the end user with its connection, credentials, sessions and stored requests (cascade). */
export async function deleteEndUser(db: Db, tenant: Tenant, endUserId: string): Promise<boolean> {
  const result = await db
    .deleteFrom("end_users")
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("id", "=", endUserId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
