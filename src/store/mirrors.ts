import { sql, type Selectable, type Transaction } from "kysely";
import { json, type Db } from "./database.ts";
import type { DatabaseSchema, MirrorsTable } from "./schema.ts";
import { isTestTenant, type Tenant } from "./tenant.ts";

/**
 * The mirrors of end users' company files (migration 0036, mirror/). Settings are scoped by tenant;
 * the engine's claims are compare-and-set on `work_started_at` (row locks skipped), so several
 * instances may run the engine on one store and each piece of work runs once. Writes to the copy
 * bump the mirror's `version` and stamp the rows they touch with it, so an instance's in-memory copy
 * reads only what changed since the version it holds.
 */
export type MirrorRow = Selectable<MirrorsTable>;
type Executor = Db | Transaction<DatabaseSchema>;

export async function listMirrors(db: Executor, tenant: Tenant, endUserId: string): Promise<MirrorRow[]> {
  return db
    .selectFrom("mirrors")
    .selectAll()
    .where("end_user_id", "=", endUserId)
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .orderBy("resource")
    .execute();
}

/**
 * Makes the end user's mirrored groups exactly `resources`: a group no longer named is deleted with
 * its copy; a new one starts filling at once. Groups kept are left as they are.
 */
export async function setMirroredGroups(
  db: Db,
  tenant: Tenant,
  endUserId: string,
  resources: readonly string[],
  now: Date,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    let removal = trx
      .deleteFrom("mirrors")
      .where("end_user_id", "=", endUserId)
      .where("project_id", "=", tenant.projectId)
      .where("is_test", "=", isTestTenant(tenant));
    if (resources.length > 0) removal = removal.where("resource", "not in", [...resources]);
    await removal.execute();
    if (resources.length === 0) return;
    await trx
      .insertInto("mirrors")
      .values(
        resources.map((resource) => ({
          end_user_id: endUserId,
          resource,
          project_id: tenant.projectId,
          is_test: isTestTenant(tenant),
          state: "filling" as const,
          next_work_at: now,
          writes_through: now,
          request_ids: json([]),
          created_at: now,
          updated_at: now,
        })),
      )
      .onConflict((oc) => oc.columns(["end_user_id", "resource"]).doNothing())
      .execute();
  });
}

/** A mirror as a read sees it: its row and whether writes completed since `writes_through`. */
export interface MirrorForRead extends MirrorRow {
  /** A succeeded write of the end user completed after `writes_through` (read-your-writes). */
  writes_pending: boolean;
}

/** Every mirror of an end user as a read sees them (the group read, and the list groups whose names it shows). */
export async function findMirrorsForRead(
  db: Db,
  tenant: Tenant,
  endUserId: string,
): Promise<MirrorForRead[]> {
  const r = await sql<MirrorForRead>`
    select m.*, exists (
      select 1 from requests r
      where r.end_user_id = m.end_user_id and r.is_write and r.status = 'succeeded'
        and (r.completed_at, r.id) > (m.writes_through, m.writes_through_id)
    ) as writes_pending
    from mirrors m
    where m.end_user_id = ${endUserId}
      and m.project_id = ${tenant.projectId} and m.is_test = ${isTestTenant(tenant)}`.execute(db);
  return r.rows;
}

/** A write of the end user completed after the mirror's `writes_through`, in completion order. */
export interface CompletedWrite {
  id: string;
  operation_id: string;
  result: unknown;
  batch: unknown;
  input: unknown;
  completed_at: Date;
}

/** The end user's succeeded writes after (`completed_at`, `id`) `after`, in that order. */
export async function writesSince(
  db: Executor,
  endUserId: string,
  after: { at: Date; id: string },
): Promise<CompletedWrite[]> {
  const r = await sql<CompletedWrite>`
    select id, operation_id, result, batch, input, completed_at from requests
    where end_user_id = ${endUserId} and is_write and status = 'succeeded'
      and (completed_at, id) > (${after.at}, ${after.id})
    order by completed_at, id`.execute(db);
  return r.rows;
}

/** Moves the read-your-writes checkpoint forward (never back). */
export async function advanceWritesThrough(
  db: Executor,
  key: MirrorKey,
  through: { at: Date; id: string },
): Promise<void> {
  await sql`
    update mirrors set writes_through = ${through.at}, writes_through_id = ${through.id}
    where end_user_id = ${key.end_user_id} and resource = ${key.resource}
      and (writes_through, writes_through_id) < (${through.at}, ${through.id})`.execute(db);
}

export interface MirrorKey {
  end_user_id: string;
  resource: string;
}

/** A mirror with what the engine needs of its end user's connection. */
export interface MirrorWork extends MirrorRow {
  connection_id: string | null;
  connection_status: string | null;
}

/**
 * Claims up to `limit` due mirrors whose work is not running: `work_started_at` is set (one
 * statement with row locks skipped, so two instances never claim the same mirror).
 */
export async function claimDueMirrors(db: Db, now: Date, limit: number): Promise<MirrorWork[]> {
  const r = await sql<MirrorWork>`
    with due as (
      select m.end_user_id, m.resource from mirrors m
      where m.work_started_at is null and m.next_work_at <= ${now}
      order by m.next_work_at limit ${limit}
      for update of m skip locked
    ), claimed as (
      update mirrors m set work_started_at = ${now}, request_ids = '[]'::jsonb, work_kind = null
      from due where m.end_user_id = due.end_user_id and m.resource = due.resource
      returning m.*
    )
    select claimed.*, c.id as connection_id, c.status as connection_status from claimed
    left join connections c on c.end_user_id = claimed.end_user_id`.execute(db);
  return r.rows;
}

/** Mirrors whose work is running (its Requests submitted, or about to be). */
export async function runningMirrors(db: Db, limit: number): Promise<MirrorWork[]> {
  const r = await sql<MirrorWork>`
    select m.*, c.id as connection_id, c.status as connection_status from mirrors m
    left join connections c on c.end_user_id = m.end_user_id
    where m.work_started_at is not null
    order by m.work_started_at limit ${limit}`.execute(db);
  return r.rows;
}

/** The claim a worker holds. */
export interface MirrorClaim extends MirrorKey {
  work_started_at: Date;
}

type MirrorChanges = Partial<
  Pick<
    MirrorRow,
    | "state"
    | "generation"
    | "as_of"
    | "last_change_applied_at"
    | "utc_offset"
    | "fill_started_at"
    | "fill_cursor"
    | "fill_pages"
    | "polled_until"
    | "next_work_at"
    | "work_kind"
  >
> & { error?: { code: string; message: string } | null; request_ids?: string[]; release?: boolean };

/**
 * Changes a mirror while the caller's claim holds (`release` ends the claim). False when the claim
 * no longer holds: the mirror was deleted, or another worker took over.
 */
export async function updateClaimed(
  db: Executor,
  claim: MirrorClaim,
  changes: MirrorChanges,
  now: Date,
): Promise<boolean> {
  const { error, request_ids, release, ...rest } = changes;
  const r = await db
    .updateTable("mirrors")
    .set({
      ...rest,
      ...(error === undefined ? {} : { error: error === null ? null : json(error) }),
      ...(request_ids === undefined ? {} : { request_ids: json(request_ids) }),
      ...(release ? { work_started_at: null } : {}),
      updated_at: now,
    })
    .where("end_user_id", "=", claim.end_user_id)
    .where("resource", "=", claim.resource)
    .where("work_started_at", "=", claim.work_started_at)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Asks for the mirror's next poll at once (a write it could not apply from its answer). */
export async function pollSoon(db: Executor, key: MirrorKey, now: Date): Promise<void> {
  await db
    .updateTable("mirrors")
    .set({ next_work_at: now })
    .where("end_user_id", "=", key.end_user_id)
    .where("resource", "=", key.resource)
    .where("state", "=", "ready")
    .where("next_work_at", ">", now)
    .execute();
}

/** A record to write into the copy: its JSON, or null for a deletion. */
export interface MirroredRecord {
  id: string;
  data: string | null;
  updatedMs: number;
}

/**
 * Writes records into the copy and bumps the mirror's version, inside `trx`. A record replaces the
 * stored one only when it is not older (`updated_ms`); a tombstone is never replaced (record IDs
 * are never reused). Every row written is stamped with the mirror's generation (a fill's page
 * proves the record still exists). Returns how many rows changed and the mirror's new version.
 */
export async function writeRecords(
  trx: Executor,
  key: MirrorKey,
  generation: number,
  records: readonly MirroredRecord[],
): Promise<{ changed: number; version: number }> {
  // The mirror's row is locked for the transaction: its writers take versions one after another.
  const current = await trx
    .selectFrom("mirrors")
    .select("version")
    .where("end_user_id", "=", key.end_user_id)
    .where("resource", "=", key.resource)
    .forUpdate()
    .executeTakeFirst();
  if (!current) return { changed: 0, version: 0 };
  const version = Number(current.version) + 1;
  let changed = 0;
  // Unique by ID (a page holds a record once; a poll may list one twice): a deletion wins, then
  // the newest.
  const newest = new Map<string, MirroredRecord>();
  for (const record of records) {
    const known = newest.get(record.id);
    if (known?.data === null) continue;
    if (!known || record.data === null || record.updatedMs >= known.updatedMs) newest.set(record.id, record);
  }
  const all = [...newest.values()];
  for (let i = 0; i < all.length; i += 500) {
    const rows = all
      .slice(i, i + 500)
      .map(
        (record) =>
          sql`(${key.end_user_id}, ${key.resource}, ${record.id}, ${record.data}, ${record.updatedMs}::bigint, ${generation}::integer, ${version}::bigint)`,
      );
    // The stored row changes only when the record is not older, never when it is a tombstone; the
    // generation always moves (the fill saw the record), so a fill never drops a newer write.
    const r = await sql`
      insert into mirror_records as m (end_user_id, resource, id, data, updated_ms, generation, version)
      values ${sql.join(rows)}
      on conflict (end_user_id, resource, id) do update set
        data = case when m.data is null then null
                    when excluded.data is null or excluded.updated_ms >= m.updated_ms then excluded.data
                    else m.data end,
        updated_ms = greatest(m.updated_ms, excluded.updated_ms),
        generation = greatest(m.generation, excluded.generation),
        version = excluded.version
      where m.data is not null and (
        excluded.data is null
        or (excluded.updated_ms >= m.updated_ms and excluded.data is distinct from m.data)
        or excluded.generation > m.generation
      )`.execute(trx);
    changed += Number(r.numAffectedRows ?? 0n);
  }
  if (changed === 0) return { changed, version: version - 1 };
  await trx
    .updateTable("mirrors")
    .set({ version })
    .where("end_user_id", "=", key.end_user_id)
    .where("resource", "=", key.resource)
    .execute();
  await countRecords(trx, key);
  return { changed, version };
}

/** Recounts the live records of the copy (the mirror's `records`). */
async function countRecords(trx: Executor, key: MirrorKey): Promise<void> {
  await sql`
    update mirrors m set records = (
      select count(*) from mirror_records r
      where r.end_user_id = m.end_user_id and r.resource = m.resource
        and r.generation = m.generation and r.data is not null
    )
    where m.end_user_id = ${key.end_user_id} and m.resource = ${key.resource}`.execute(trx);
}

/**
 * Ends a fill: records of older generations the fill did not see are gone from the application
 * (deleted before the fill reached them), so they leave the copy as tombstones.
 */
export async function dropOlderGenerations(trx: Executor, key: MirrorKey, generation: number): Promise<void> {
  const bumped = await trx
    .updateTable("mirrors")
    .set({ version: sql<string>`version + 1` })
    .where("end_user_id", "=", key.end_user_id)
    .where("resource", "=", key.resource)
    .returning("version")
    .executeTakeFirst();
  if (!bumped) return;
  await trx
    .updateTable("mirror_records")
    .set({ data: null, generation, version: bumped.version })
    .where("end_user_id", "=", key.end_user_id)
    .where("resource", "=", key.resource)
    .where("generation", "<", generation)
    .where("data", "is not", null)
    .execute();
  await countRecords(trx, key);
}

/** What changed in the copy after `version` (all of it for 0), tombstones included. */
export async function recordsChangedSince(
  db: Db,
  key: MirrorKey,
  version: number,
): Promise<Array<{ id: string; data: string | null; generation: number }>> {
  return db
    .selectFrom("mirror_records")
    .select(["id", "data", "generation"])
    .where("end_user_id", "=", key.end_user_id)
    .where("resource", "=", key.resource)
    .where("version", ">", String(version))
    .execute();
}

/** The stored size of a mirror's copy in bytes (the bench's bytes per record). */
export async function mirrorBytes(db: Db, key: MirrorKey): Promise<number> {
  const r = await sql<{ bytes: string | number | null }>`
    select sum(pg_column_size(r.*)) as bytes from mirror_records r
    where r.end_user_id = ${key.end_user_id} and r.resource = ${key.resource}`.execute(db);
  return Number(r.rows[0]?.bytes ?? 0);
}

/** Whether another group of the end user is in the middle of a fill (its pages still to come). */
export async function otherFillRunning(db: Executor, key: MirrorKey): Promise<boolean> {
  const row = await db
    .selectFrom("mirrors")
    .select("resource")
    .where("end_user_id", "=", key.end_user_id)
    .where("resource", "<>", key.resource)
    .where("state", "=", "filling")
    .where("fill_started_at", "is not", null)
    .where((eb) => eb.or([eb("fill_cursor", "is", null), eb("fill_cursor", "<>", "done")]))
    .executeTakeFirst();
  return row !== undefined;
}

/** How long a mirror cursor can be continued. */
const MIRROR_CURSOR_TTL_MS = 24 * 3600 * 1000;

/** Keeps the filters of a mirrored list whose next page is to come; forgets cursors older than a day. */
export async function insertMirrorCursor(
  db: Db,
  row: {
    id: string;
    endUserId: string;
    resource: string;
    filters: Array<[string, unknown]>;
    linked: boolean;
  },
  now: Date,
): Promise<void> {
  await db
    .deleteFrom("mirror_cursors")
    .where("created_at", "<", new Date(now.getTime() - MIRROR_CURSOR_TTL_MS))
    .execute();
  await db
    .insertInto("mirror_cursors")
    .values({
      id: row.id,
      end_user_id: row.endUserId,
      resource: row.resource,
      filters: json(row.filters),
      linked: row.linked,
      created_at: now,
    })
    .execute();
}

/** A mirror cursor of this end user and group, while it may still be continued. */
export async function findMirrorCursor(
  db: Db,
  key: { id: string; endUserId: string; resource: string },
  now: Date,
): Promise<{ filters: Array<[string, unknown]>; linked: boolean } | null> {
  const row = await db
    .selectFrom("mirror_cursors")
    .select(["filters", "linked"])
    .where("id", "=", key.id)
    .where("end_user_id", "=", key.endUserId)
    .where("resource", "=", key.resource)
    .where("created_at", ">=", new Date(now.getTime() - MIRROR_CURSOR_TTL_MS))
    .executeTakeFirst();
  return row ?? null;
}
