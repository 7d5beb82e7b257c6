import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { newId } from "../platform/ids.ts";
import { randomAlphanumeric } from "../platform/random.ts";
import { hashSecret, secretMatches } from "../platform/secrets.ts";
import { API_KEYS_CHANNEL, type ApiKeyCache } from "./api-key-cache.ts";
import { pageOf, type PlatformPage } from "./pagination.ts";
import {
  findApiKeyByHash,
  insertApiKey,
  insertProject,
  listApiKeys,
  revokeApiKey,
  type ApiKeyRow,
  type ProjectRow,
  type ProjectStanding,
} from "../store/projects.ts";

/**
 * Projects and their keys (architecture §5). Secret keys are `sk_live_`/`sk_test_` + 32
 * alphanumerics (a read-only key has the same shape and a flag); publishable keys are
 * `pk_live_`/`pk_test_` + 24 alphanumerics (spec). Secrets are shown once and stored as digests.
 */
export type KeyKind = "secret" | "publishable";
export type KeyMode = "live" | "test";

export const PUBLISHABLE_KEY_PATTERN = /^pk_(live|test)_[A-Za-z0-9]{24}$/;
const SECRET_KEY_PATTERN = /^sk_(live|test)_[A-Za-z0-9]{32}$/;

/** Who is calling: resolved once per HTTP request from the Bearer key. */
export interface Principal {
  projectId: string;
  organization: string;
  keyId: string;
  mode: KeyMode;
  readOnly: boolean;
  /**
   * The project's standing as the key lookup read it (decision 0019): quota, failed payment,
   * disabled. Absent on principals the service makes itself; admission then reads the store.
   */
  standing?: ProjectStanding;
}

export interface CreatedKey {
  key: ApiKeyRow;
  /** The key itself: shown once, never stored. */
  secret: string;
}

export async function createApiKey(
  deps: Deps,
  projectId: string,
  options: { kind: KeyKind; mode: KeyMode; readOnly?: boolean },
): Promise<CreatedKey> {
  const prefix = options.kind === "secret" ? "sk" : "pk";
  const secret = `${prefix}_${options.mode}_${randomAlphanumeric(options.kind === "secret" ? 32 : 24)}`;
  const key: ApiKeyRow = {
    id: newId("apiKey"),
    projectId,
    kind: options.kind,
    mode: options.mode,
    readOnly: options.kind === "secret" && options.readOnly === true,
    hint: secret.slice(-4),
    createdAt: new Date(deps.clock.now()),
    revokedAt: null,
  };
  await insertApiKey(deps.db, { ...key, hash: hashSecret(secret) });
  return { key, secret };
}

export interface CreatedProject {
  project: ProjectRow;
  keys: { secretLive: string; secretTest: string; publishableLive: string; publishableTest: string };
}

/** Creates a project with a full set of keys (live + test, secret + publishable). */
export async function createProject(
  deps: Deps,
  options: { name: string; organization?: string },
): Promise<CreatedProject> {
  const id = newId("project");
  const project: ProjectRow = {
    id,
    name: options.name,
    organization: options.organization ?? id,
    createdAt: new Date(deps.clock.now()),
    monthlyRequestQuota: null,
    paymentFailedAt: null,
    disabledAt: null,
    disabledReason: null,
  };
  await insertProject(deps.db, project);
  const secretLive = await createApiKey(deps, id, { kind: "secret", mode: "live" });
  const secretTest = await createApiKey(deps, id, { kind: "secret", mode: "test" });
  const publishableLive = await createApiKey(deps, id, { kind: "publishable", mode: "live" });
  const publishableTest = await createApiKey(deps, id, { kind: "publishable", mode: "test" });
  return {
    project,
    keys: {
      secretLive: secretLive.secret,
      secretTest: secretTest.secret,
      publishableLive: publishableLive.secret,
      publishableTest: publishableTest.secret,
    },
  };
}

/** Resolves a Bearer secret key; 401 API_KEY_INVALID for anything unknown, revoked or not secret. */
export async function authenticateSecretKey(
  deps: Deps,
  presented: string,
  organizationOf: (projectId: string) => Promise<string | null>,
  cache?: ApiKeyCache,
): Promise<Principal> {
  if (!SECRET_KEY_PATTERN.test(presented)) throw new ServiceError("API_KEY_INVALID");
  const hash = hashSecret(presented);
  const generation = cache?.generation ?? 0;
  const cached = cache?.get(hash) ?? null;
  const row = cached ?? (await findApiKeyByHash(deps.db, hash));
  // A cached key was found by this very digest: comparing it again would hash the key a second time.
  if (
    !row ||
    row.kind !== "secret" ||
    row.revokedAt !== null ||
    (cached === null && !secretMatches(presented, row.hash))
  ) {
    throw new ServiceError("API_KEY_INVALID");
  }
  // Kept from the store's answer only: a key in use does not extend its own lifetime.
  if (!cached) cache?.set(row, generation);
  const organization = await organizationOf(row.projectId);
  if (organization === null) throw new ServiceError("API_KEY_INVALID");
  return {
    projectId: row.projectId,
    organization,
    keyId: row.id,
    mode: row.mode,
    readOnly: row.readOnly,
    standing: row.standing,
  };
}

/**
 * Revokes a key (`false`: no such active key). Every instance's key cache hears of it at once, so
 * the key stops working everywhere with the next call (decision 0013).
 */
export async function revokeKey(deps: Deps, projectId: string, keyId: string): Promise<boolean> {
  const revoked = await revokeApiKey(deps.db, projectId, keyId, new Date(deps.clock.now()));
  if (revoked) await deps.store.notifier.notify(API_KEYS_CHANNEL);
  return revoked;
}

/** Checks a publishable key sent in an auth session body against the caller's project (spec: Authentication 2). */
export async function checkPublishableKey(
  deps: Deps,
  principal: Principal,
  presented: string,
): Promise<KeyMode> {
  const row = PUBLISHABLE_KEY_PATTERN.test(presented)
    ? await findApiKeyByHash(deps.db, hashSecret(presented))
    : null;
  if (!row || row.kind !== "publishable" || row.revokedAt !== null || !secretMatches(presented, row.hash)) {
    throw new ServiceError("PUBLISHABLE_KEY_INVALID", { param: "publishableKey" });
  }
  if (row.projectId !== principal.projectId) {
    throw new ServiceError("PUBLISHABLE_KEY_PROJECT_MISMATCH", { param: "publishableKey" });
  }
  return row.mode;
}

/**
 * `/v1/api-keys` (decision 0026): a project's keys as the public API shows them — never the secret
 * nor its digest, only its last four characters. A caller sees and manages the keys of its own
 * project in its own mode (a test key never lists, makes or revokes live keys).
 */
export interface ApiKeyResource {
  id: string;
  objectType: "api_key";
  createdAt: string;
  projectId: string;
  kind: KeyKind;
  mode: KeyMode;
  readOnly: boolean;
  /** The key's last four characters, to tell keys apart. */
  hint: string;
  revokedAt: string | null;
  /** Whether this is the key the call was made with. */
  current: boolean;
}

export function serializeApiKey(key: ApiKeyRow, principal: Principal): ApiKeyResource {
  return {
    id: key.id,
    objectType: "api_key",
    createdAt: key.createdAt.toISOString(),
    projectId: key.projectId,
    kind: key.kind,
    mode: key.mode,
    readOnly: key.readOnly,
    hint: key.hint,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    current: key.id === principal.keyId,
  };
}

/** The name of a caller's key list in cursors: one project, one mode. */
export function apiKeysList(principal: Principal): string {
  return `api_keys:${principal.projectId}:${principal.mode}`;
}

/** The caller's project's keys in its mode, newest first, revoked ones included (with `revokedAt`). */
export async function listApiKeysPage(
  deps: Deps,
  principal: Principal,
  query: { limit: number; lastId: string | null },
): Promise<PlatformPage<ApiKeyResource>> {
  const rows = (await listApiKeys(deps.db, principal.projectId))
    .filter((row) => row.mode === principal.mode && (query.lastId === null || row.id < query.lastId))
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .slice(0, query.limit + 1);
  return pageOf(apiKeysList(principal), "/v1/api-keys", { limit: query.limit }, rows, (row) =>
    serializeApiKey(row, principal),
  );
}

/** Creates a key in the caller's project and mode; the response is the only place the secret appears. */
export async function createApiKeyFor(
  deps: Deps,
  principal: Principal,
  body: { kind: KeyKind; readOnly: boolean },
): Promise<ApiKeyResource & { secret: string }> {
  if (body.kind === "publishable" && body.readOnly) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: "readOnly",
      message: "Only a secret key can be read-only.",
    });
  }
  const created = await createApiKey(deps, principal.projectId, {
    kind: body.kind,
    mode: principal.mode,
    readOnly: body.readOnly,
  });
  return { ...serializeApiKey(created.key, principal), secret: created.secret };
}

async function ownKey(deps: Deps, principal: Principal, keyId: string): Promise<ApiKeyRow> {
  const row = (await listApiKeys(deps.db, principal.projectId)).find(
    (key) => key.id === keyId && key.mode === principal.mode,
  );
  if (!row) throw new ServiceError("RESOURCE_MISSING", { param: "id", message: "No such API key." });
  return row;
}

/**
 * Revokes one of the caller's project's keys (in its mode). Revoking an already revoked key answers
 * it unchanged. The key making the call cannot revoke itself (403 PERMISSION_DENIED): make a new
 * key, switch to it, then revoke the old one with the new.
 */
export async function revokeApiKeyFor(
  deps: Deps,
  principal: Principal,
  keyId: string,
): Promise<ApiKeyResource> {
  const row = await ownKey(deps, principal, keyId);
  if (row.id === principal.keyId) {
    throw new ServiceError("PERMISSION_DENIED", {
      param: "id",
      message: "A key cannot revoke itself. Create a new key, use it, then revoke this one with the new key.",
    });
  }
  if (row.revokedAt === null) await revokeKey(deps, principal.projectId, row.id);
  return serializeApiKey(await ownKey(deps, principal, keyId), principal);
}
