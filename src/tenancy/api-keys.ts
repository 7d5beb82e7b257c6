import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { newId } from "../platform/ids.ts";
import { randomAlphanumeric } from "../platform/random.ts";
import { hashSecret, secretMatches } from "../platform/secrets.ts";
import { API_KEYS_CHANNEL, type ApiKeyCache } from "./api-key-cache.ts";
import {
  findApiKeyByHash,
  insertApiKey,
  insertProject,
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
  if (!row || row.kind !== "secret" || row.revokedAt !== null || !secretMatches(presented, row.hash)) {
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
