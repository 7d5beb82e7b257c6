import type { Db } from "./database.ts";

/**
 * The service's index of `externalId`s (migration 0037, decision 0046): per end user and typed
 * group, the record each externalId it wrote or read belongs to. An upsert keyed by `externalId`
 * finds its record here (the caller's word is never taken for it).
 */

export interface SeenExternalId {
  readonly externalId: string;
  readonly recordId: string;
}

/** Notes the records read or written with an externalId (the latest sighting wins). */
export async function noteExternalIds(
  db: Db,
  endUserId: string,
  resource: string,
  seen: readonly SeenExternalId[],
  at: Date,
): Promise<void> {
  if (seen.length === 0) return;
  // One row per externalId: within one answer the last record holding it wins.
  const rows = new Map<string, string>();
  for (const { externalId, recordId } of seen) rows.set(externalId.toLowerCase(), recordId);
  await db
    .insertInto("external_ids")
    .values(
      [...rows].map(([external_id, record_id]) => ({
        end_user_id: endUserId,
        resource,
        external_id,
        record_id,
        seen_at: at,
      })),
    )
    .onConflict((oc) =>
      oc.columns(["end_user_id", "resource", "external_id"]).doUpdateSet((eb) => ({
        record_id: eb.ref("excluded.record_id"),
        seen_at: eb.ref("excluded.seen_at"),
      })),
    )
    .execute();
}

/** The record an externalId belongs to in an end user's group, as the service last saw it. */
export async function findExternalId(
  db: Db,
  endUserId: string,
  resource: string,
  externalId: string,
): Promise<string | null> {
  const row = await db
    .selectFrom("external_ids")
    .select("record_id")
    .where("end_user_id", "=", endUserId)
    .where("resource", "=", resource)
    .where("external_id", "=", externalId.toLowerCase())
    .executeTakeFirst();
  return row?.record_id ?? null;
}
