import type { Selectable, Transaction } from "kysely";
import type { Db } from "./database.ts";
import type { DatabaseSchema, IdempotencyKeysTable } from "./schema.ts";

type Executor = Db | Transaction<DatabaseSchema>;

export type IdempotencyRow = Selectable<IdempotencyKeysTable>;

/**
 * Claims a key for a new attempt: inserts the row unless a live one exists. Returns the existing
 * row when the key is already held (expired rows are replaced: keys are retained 7 days).
 */
export async function claimIdempotencyKey(
  db: Executor,
  row: IdempotencyRow,
  now: Date,
): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyRow }> {
  await db
    .deleteFrom("idempotency_keys")
    .where("project_id", "=", row.project_id)
    .where("key", "=", row.key)
    .where("expires_at", "<=", now)
    .execute();
  const inserted = await db
    .insertInto("idempotency_keys")
    .values(row)
    .onConflict((oc) => oc.columns(["project_id", "key"]).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) return { claimed: true };
  const existing = await findIdempotencyKey(db, row.project_id, row.key);
  if (!existing) return claimIdempotencyKey(db, row, now);
  return { claimed: false, existing };
}

export async function findIdempotencyKey(
  db: Executor,
  projectId: string,
  key: string,
): Promise<IdempotencyRow | null> {
  const r = await db
    .selectFrom("idempotency_keys")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("key", "=", key)
    .executeTakeFirst();
  return r ?? null;
}

export async function saveIdempotentResponse(
  db: Db,
  projectId: string,
  key: string,
  status: number,
  box: string,
): Promise<void> {
  await db
    .updateTable("idempotency_keys")
    .set({ response_status: status, response_box: box })
    .where("project_id", "=", projectId)
    .where("key", "=", key)
    .execute();
}

/** Points the key at a (new) Request. */
export async function linkIdempotencyKey(
  db: Executor,
  projectId: string,
  key: string,
  requestId: string,
): Promise<void> {
  await db
    .updateTable("idempotency_keys")
    .set({ request_id: requestId })
    .where("project_id", "=", projectId)
    .where("key", "=", key)
    .execute();
}

export async function releaseIdempotencyKey(db: Db, projectId: string, key: string): Promise<void> {
  await db
    .deleteFrom("idempotency_keys")
    .where("project_id", "=", projectId)
    .where("key", "=", key)
    .execute();
}
