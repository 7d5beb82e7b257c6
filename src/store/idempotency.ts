import type { Selectable, Transaction } from "kysely";
import type { Db } from "./database.ts";
import type { DatabaseSchema, IdempotencyKeysTable } from "./schema.ts";
import { isTestTenant, type Tenant } from "./tenant.ts";

type Executor = Db | Transaction<DatabaseSchema>;

export type IdempotencyRow = Selectable<IdempotencyKeysTable>;

/** A key to claim: the row without its scope columns (the tenant gives them). */
export type NewIdempotencyKey = Omit<IdempotencyRow, "project_id" | "is_test">;

/**
 * Claims a key for a new attempt: inserts the row unless a live one exists. Returns the existing
 * row when the key is already held (expired rows are replaced: keys are retained 7 days). Keys are
 * scoped per project and mode (decision 0005).
 */
export async function claimIdempotencyKey(
  db: Executor,
  tenant: Tenant,
  key: NewIdempotencyKey,
  now: Date,
): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyRow }> {
  const row: IdempotencyRow = { ...key, project_id: tenant.projectId, is_test: isTestTenant(tenant) };
  await db
    .deleteFrom("idempotency_keys")
    .where("project_id", "=", row.project_id)
    .where("is_test", "=", row.is_test)
    .where("key", "=", row.key)
    .where("expires_at", "<=", now)
    .execute();
  const inserted = await db
    .insertInto("idempotency_keys")
    .values(row)
    .onConflict((oc) => oc.columns(["project_id", "is_test", "key"]).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) return { claimed: true };
  const existing = await findIdempotencyKey(db, tenant, row.key);
  if (!existing) return claimIdempotencyKey(db, tenant, key, now);
  return { claimed: false, existing };
}

export async function findIdempotencyKey(
  db: Executor,
  tenant: Tenant,
  key: string,
): Promise<IdempotencyRow | null> {
  const r = await db
    .selectFrom("idempotency_keys")
    .selectAll()
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("key", "=", key)
    .executeTakeFirst();
  return r ?? null;
}

/**
 * Where a platform write's replay copy is stored (decision 0032): the associated data that binds
 * the sealed copy to its key's row (project, mode and key), so that it opens nowhere else.
 */
export function replayCopyPlace(tenant: Tenant, key: string): string {
  return `idempotency_keys.response_box:${tenant.projectId}:${isTestTenant(tenant) ? "test" : "live"}:${key}`;
}

export async function saveIdempotentResponse(
  db: Db,
  tenant: Tenant,
  key: string,
  status: number,
  box: string,
): Promise<void> {
  await db
    .updateTable("idempotency_keys")
    .set({ response_status: status, response_box: box })
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("key", "=", key)
    .execute();
}

/** Points the key at a (new) Request. */
export async function linkIdempotencyKey(
  db: Executor,
  tenant: Tenant,
  key: string,
  requestId: string,
): Promise<void> {
  await db
    .updateTable("idempotency_keys")
    .set({ request_id: requestId })
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("key", "=", key)
    .execute();
}

export async function releaseIdempotencyKey(db: Db, tenant: Tenant, key: string): Promise<void> {
  await db
    .deleteFrom("idempotency_keys")
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("key", "=", key)
    .execute();
}

/**
 * Deletes a platform claim that never got its answer (its attempt failed and could not release it),
 * only if it is still that claim: same creation time, no answer, no Request.
 */
export async function releaseUnansweredClaim(
  db: Db,
  tenant: Tenant,
  key: string,
  createdAt: Date,
): Promise<void> {
  await db
    .deleteFrom("idempotency_keys")
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("key", "=", key)
    .where("created_at", "=", createdAt)
    .where("response_box", "is", null)
    .where("request_id", "is", null)
    .execute();
}
