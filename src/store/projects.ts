import type { Db } from "./database.ts";
import type { Selectable } from "kysely";
import type { ApiKeysTable, ProjectsTable } from "./schema.ts";

/** What the operator decided about a project (decision 0019). */
export interface ProjectStanding {
  /** Live application Requests per calendar month (UTC); null: no quota. */
  monthlyRequestQuota: number | null;
  /** Live application operations are refused with PAYMENT_FAILED since then. */
  paymentFailedAt: Date | null;
  /** Every call of the project's keys is refused with PERMISSION_DENIED since then. */
  disabledAt: Date | null;
  disabledReason: string | null;
}

/** Projects and API keys. Keys are stored as digests only. */
export interface ProjectRow extends ProjectStanding {
  id: string;
  name: string;
  organization: string;
  createdAt: Date;
}

function standingOf(
  r: Pick<
    Selectable<ProjectsTable>,
    "monthly_request_quota" | "payment_failed_at" | "disabled_at" | "disabled_reason"
  >,
): ProjectStanding {
  return {
    monthlyRequestQuota: r.monthly_request_quota === null ? null : Number(r.monthly_request_quota),
    paymentFailedAt: r.payment_failed_at,
    disabledAt: r.disabled_at,
    disabledReason: r.disabled_reason,
  };
}

function toProject(r: Selectable<ProjectsTable>): ProjectRow {
  return {
    id: r.id,
    name: r.name,
    organization: r.organization,
    createdAt: r.created_at,
    ...standingOf(r),
  };
}

export async function insertProject(
  db: Db,
  project: Pick<ProjectRow, "id" | "name" | "organization" | "createdAt">,
): Promise<void> {
  await db
    .insertInto("projects")
    .values({
      id: project.id,
      name: project.name,
      organization: project.organization,
      created_at: project.createdAt,
    })
    .execute();
}

export async function listProjects(db: Db): Promise<ProjectRow[]> {
  const rows = await db.selectFrom("projects").selectAll().orderBy("id", "desc").execute();
  return rows.map(toProject);
}

export async function findProject(db: Db, projectId: string): Promise<ProjectRow | null> {
  const r = await db.selectFrom("projects").selectAll().where("id", "=", projectId).executeTakeFirst();
  return r ? toProject(r) : null;
}

/** The operator's changes to a project's standing; returns the project, or null when there is none. */
export async function updateProjectStanding(
  db: Db,
  projectId: string,
  changes: Partial<ProjectStanding>,
): Promise<ProjectRow | null> {
  const r = await db
    .updateTable("projects")
    .set({
      ...(changes.monthlyRequestQuota === undefined
        ? {}
        : { monthly_request_quota: changes.monthlyRequestQuota }),
      ...(changes.paymentFailedAt === undefined ? {} : { payment_failed_at: changes.paymentFailedAt }),
      ...(changes.disabledAt === undefined ? {} : { disabled_at: changes.disabledAt }),
      ...(changes.disabledReason === undefined ? {} : { disabled_reason: changes.disabledReason }),
    })
    .where("id", "=", projectId)
    .returningAll()
    .executeTakeFirst();
  return r ? toProject(r) : null;
}

export interface ApiKeyRow {
  id: string;
  projectId: string;
  kind: ApiKeysTable["kind"];
  mode: ApiKeysTable["mode"];
  readOnly: boolean;
  hint: string;
  createdAt: Date;
  revokedAt: Date | null;
}

function toApiKey(r: Selectable<ApiKeysTable>): ApiKeyRow {
  return {
    id: r.id,
    projectId: r.project_id,
    kind: r.kind,
    mode: r.mode,
    readOnly: r.read_only,
    hint: r.hint,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  };
}

export async function insertApiKey(db: Db, key: ApiKeyRow & { hash: string }): Promise<void> {
  await db
    .insertInto("api_keys")
    .values({
      id: key.id,
      project_id: key.projectId,
      kind: key.kind,
      mode: key.mode,
      read_only: key.readOnly,
      hash: key.hash,
      hint: key.hint,
      created_at: key.createdAt,
      revoked_at: null,
    })
    .execute();
}

/** A key as authentication reads it: with its digest and its project's standing. */
export type AuthenticatingKey = ApiKeyRow & { hash: string; standing: ProjectStanding };

/**
 * Looks a key up by its digest (index lookup; the digest comparison is the constant-time part),
 * with its project's standing in the same statement (decision 0019).
 */
export async function findApiKeyByHash(db: Db, hash: string): Promise<AuthenticatingKey | null> {
  const r = await db
    .selectFrom("api_keys as k")
    .innerJoin("projects as p", "p.id", "k.project_id")
    .selectAll("k")
    .select(["p.monthly_request_quota", "p.payment_failed_at", "p.disabled_at", "p.disabled_reason"])
    .where("k.hash", "=", hash)
    .executeTakeFirst();
  return r ? { ...toApiKey(r), hash: r.hash, standing: standingOf(r) } : null;
}

export async function listApiKeys(db: Db, projectId: string): Promise<ApiKeyRow[]> {
  const rows = await db
    .selectFrom("api_keys")
    .selectAll()
    .where("project_id", "=", projectId)
    .orderBy("id")
    .execute();
  return rows.map(toApiKey);
}

export async function revokeApiKey(db: Db, projectId: string, keyId: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable("api_keys")
    .set({ revoked_at: at })
    .where("project_id", "=", projectId)
    .where("id", "=", keyId)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
