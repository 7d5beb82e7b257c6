import type { Db } from "./database.ts";
import type { Selectable } from "kysely";
import type { ApiKeysTable } from "./schema.ts";

/** Projects and API keys. Keys are stored as digests only. */
export interface ProjectRow {
  id: string;
  name: string;
  organization: string;
  createdAt: Date;
}

export async function insertProject(db: Db, project: ProjectRow): Promise<void> {
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
  return rows.map((r) => ({ id: r.id, name: r.name, organization: r.organization, createdAt: r.created_at }));
}

export async function findProject(db: Db, projectId: string): Promise<ProjectRow | null> {
  const r = await db.selectFrom("projects").selectAll().where("id", "=", projectId).executeTakeFirst();
  return r ? { id: r.id, name: r.name, organization: r.organization, createdAt: r.created_at } : null;
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

/** Looks a key up by its digest (index lookup; the digest comparison is the constant-time part). */
export async function findApiKeyByHash(db: Db, hash: string): Promise<(ApiKeyRow & { hash: string }) | null> {
  const r = await db.selectFrom("api_keys").selectAll().where("hash", "=", hash).executeTakeFirst();
  return r ? { ...toApiKey(r), hash: r.hash } : null;
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
