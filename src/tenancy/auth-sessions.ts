import { SERVICE_OWNER_ID } from "../ledger/owner-id.ts";
import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { newId } from "../platform/ids.ts";
import { randomAlphanumeric, randomGuid, randomToken } from "../platform/random.ts";
import { hashSecret, openWith, sealWith, secretMatches } from "../platform/secrets.ts";
import {
  finishAuthSession,
  findAuthSessionById,
  insertAuthSession,
  supersedePendingSessions,
  type AuthSessionRow,
} from "../store/auth-sessions.ts";
import {
  countTestConnections,
  findConnectionById,
  findConnectionForEndUser,
  insertConnection,
  updateConnection,
  type ConnectionRow,
} from "../store/connections.ts";
import { findEndUser } from "../store/end-users.ts";
import { checkPublishableKey, type Principal } from "./api-keys.ts";
import { effectiveStatus } from "../connections/seen.ts";
import { qwcDocument } from "./qwc.ts";

/**
 * Auth sessions (spec: POST /v1/auth-sessions) and the hosted setup flow behind `authFlowUrl`.
 *
 * Each session issues a fresh connector password for the end user's connection and keeps it sealed
 * with the session's client secret, so only the holder of the link can read it; older pending links
 * of the same connection are superseded (their password no longer works).
 */
export { SERVICE_OWNER_ID };

export interface AuthSessionResource {
  id: string;
  objectType: "auth_session";
  createdAt: string;
  endUserId: string;
  clientSecret: string;
  authFlowUrl: string;
  expiresAt: string;
  redirectUrl: string | null;
}

export interface CreateAuthSessionInput {
  publishableKey: string;
  endUserId: string;
  linkExpiryMins: number;
  redirectUrl?: string | undefined;
}

export async function createAuthSession(
  deps: Deps,
  principal: Principal,
  input: CreateAuthSessionInput,
): Promise<AuthSessionResource> {
  const mode = await checkPublishableKey(deps, principal, input.publishableKey);
  if (mode !== principal.mode) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: "publishableKey",
      message: `A ${principal.mode} secret key needs a ${principal.mode} publishable key (pk_${principal.mode}_...).`,
    });
  }
  if (input.redirectUrl !== undefined) checkRedirectUrl(input.redirectUrl, mode === "test");
  const endUser = await findEndUser(deps.db, principal, input.endUserId);
  if (!endUser)
    throw new ServiceError("RESOURCE_MISSING", { param: "endUserId", message: "No such end user." });

  const now = new Date(deps.clock.now());
  const password = randomAlphanumeric(24);
  const clientSecret = `as_secret_${randomToken(24)}`;
  const connection = await ensureConnection(deps, principal, endUser.id, mode === "test", password, now);
  const row: AuthSessionRow = {
    id: newId("authSession"),
    project_id: principal.projectId,
    end_user_id: endUser.id,
    connection_id: connection.id,
    client_secret_hash: hashSecret(clientSecret),
    password_box: sealWith(clientSecret, password),
    status: "pending",
    is_test: mode === "test",
    redirect_url: input.redirectUrl ?? null,
    expires_at: new Date(now.getTime() + input.linkExpiryMins * 60_000),
    created_at: now,
    completed_at: null,
  };
  await insertAuthSession(deps.db, row);
  await supersedePendingSessions(deps.db, connection.id, row.id);
  return {
    id: row.id,
    objectType: "auth_session",
    createdAt: now.toISOString(),
    endUserId: endUser.id,
    clientSecret,
    authFlowUrl: `${deps.config.publicUrl}/setup/${row.id}?clientSecret=${encodeURIComponent(clientSecret)}`,
    expiresAt: row.expires_at.toISOString(),
    redirectUrl: row.redirect_url,
  };
}

/** Spec: absolute https URL; test projects may also use an http localhost URL. */
function checkRedirectUrl(value: string, isTest: boolean): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ServiceError("INVALID_PARAMETER", {
      param: "redirectUrl",
      message: "`redirectUrl` must be an absolute URL.",
    });
  }
  const localhost = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  if (url.protocol === "https:" || (isTest && url.protocol === "http:" && localhost)) return;
  throw new ServiceError("INVALID_PARAMETER", {
    param: "redirectUrl",
    message: isTest
      ? "`redirectUrl` must be an https URL, or an http localhost URL for test sessions."
      : "`redirectUrl` must be an https URL.",
  });
}

/** The end user's connection (created `pending_setup` if needed), with `password` as its connector password. */
export async function ensureConnection(
  deps: Deps,
  principal: Principal,
  endUserId: string,
  isTest: boolean,
  password: string,
  now: Date,
): Promise<ConnectionRow> {
  const existing = await findConnectionForEndUser(deps.db, principal.projectId, endUserId);
  if (existing) return reissuePassword(deps, existing, isTest, password, now);
  if (
    isTest &&
    (await countTestConnections(deps.db, principal.organization)) >= deps.config.TEST_COMPANY_FILE_LIMIT
  ) {
    throw new ServiceError("TEST_COMPANY_FILE_LIMIT_REACHED", {
      message: `The organisation already has ${deps.config.TEST_COMPANY_FILE_LIMIT} test company files (TEST_COMPANY_FILE_LIMIT).`,
    });
  }
  const id = newId("connection");
  const row: ConnectionRow = {
    id,
    project_id: principal.projectId,
    end_user_id: endUserId,
    organization: principal.organization,
    status: "pending_setup",
    status_reason: null,
    is_test: isTest,
    username: connectorUsername(id),
    password_hash: hashSecret(password),
    file_id: randomGuid(),
    file_identity: null,
    company_file_path: null,
    company_name: null,
    product: null,
    xml_version: null,
    country: null,
    last_request_at: null,
    last_successful_request_at: null,
    last_check_in_at: null,
    last_seen_at: null,
    last_connection_error_code: null,
    retry_at: null,
    check_in_gap_ms: null,
    recent_check_ins: [],
    shared_connector_at: null,
    login_refused_at: null,
    session_interrupted_at: null,
    created_at: now,
    updated_at: now,
  };
  if (await insertConnection(deps.db, row)) return row;
  // Another call created the end user's connection meanwhile (one connection per end user): this
  // call's password goes on that connection, as for one that existed before.
  const winner = await findConnectionForEndUser(deps.db, principal.projectId, endUserId);
  if (!winner) throw new ServiceError("INTERNAL_ERROR", { cause: new Error("connection vanished") });
  return reissuePassword(deps, winner, isTest, password, now);
}

/** An existing connection gets the new password (of the connection's own mode only). */
async function reissuePassword(
  deps: Deps,
  existing: ConnectionRow,
  isTest: boolean,
  password: string,
  now: Date,
): Promise<ConnectionRow> {
  if (existing.is_test !== isTest) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: "publishableKey",
      message: `This end user's connection is a ${existing.is_test ? "test" : "live"} connection; use a ${existing.is_test ? "test" : "live"} publishable key.`,
    });
  }
  const updated = await updateConnection(deps.db, existing.id, {
    password_hash: hashSecret(password),
    updated_at: now,
  });
  return updated ?? existing;
}

/**
 * The connector user name of a connection (written into its `.qwc`). It carries the whole ID
 * suffix, so it is unique because the ID is: IDs made in the same millisecond share their first
 * characters (time, then a counter), and a user name cut from them collided under load.
 */
export function connectorUsername(connectionId: ConnectionRow["id"]): string {
  return `lb-${connectionId.slice(connectionId.indexOf("_") + 1)}`;
}

/** What the hosted page shows, computed from the session and the connection. */
export type SetupState =
  | { state: "invalid" }
  | { state: "expired" | "superseded"; session: AuthSessionRow }
  | { state: "canceled"; session: AuthSessionRow; redirectTo: string | null }
  | { state: "completed"; session: AuthSessionRow; redirectTo: string | null; companyName: string | null }
  | {
      state: "waiting";
      session: AuthSessionRow;
      connection: ConnectionRow;
      password: string;
      connectionStatus: string;
    };

/** Loads a session for the hosted page; the client secret is checked in constant time. */
export async function loadSetup(
  deps: Deps,
  authSessionId: string,
  clientSecret: string,
): Promise<SetupState> {
  const session = await findAuthSessionById(deps.db, authSessionId);
  if (!session || !secretMatches(clientSecret, session.client_secret_hash)) return { state: "invalid" };
  const now = deps.clock.now();
  const connection = await findConnectionById(deps.db, session.connection_id);
  if (!connection) return { state: "invalid" };
  if (session.status === "completed") {
    return {
      state: "completed",
      session,
      redirectTo: redirectFor(session, "completed"),
      companyName: connection.company_name,
    };
  }
  if (session.status === "canceled")
    return { state: "canceled", session, redirectTo: redirectFor(session, "canceled") };
  if (session.status === "superseded") return { state: "superseded", session };
  if (session.expires_at.getTime() <= now) return { state: "expired", session };
  // The session completes on the first successful check-in after it was created.
  const checkedIn = connection.last_check_in_at !== null && connection.last_check_in_at >= session.created_at;
  if (checkedIn && connection.status === "online") {
    const done = (await finishAuthSession(deps.db, session.id, "completed", new Date(now))) ?? session;
    return {
      state: "completed",
      session: done,
      redirectTo: redirectFor(done, "completed"),
      companyName: connection.company_name,
    };
  }
  const password = openWith(clientSecret, session.password_box);
  if (password === null) return { state: "invalid" };
  return {
    state: "waiting",
    session,
    connection,
    password,
    connectionStatus: effectiveStatus(
      deps.activity.connection(connection),
      now,
      deps.config.CONNECTION_OFFLINE_AFTER_MS,
    ),
  };
}

/** The end user stops the flow. */
export async function cancelSetup(
  deps: Deps,
  authSessionId: string,
  clientSecret: string,
): Promise<SetupState> {
  const state = await loadSetup(deps, authSessionId, clientSecret);
  if (state.state !== "waiting") return state;
  const canceled = await finishAuthSession(deps.db, authSessionId, "canceled", new Date(deps.clock.now()));
  const session = canceled ?? state.session;
  return { state: "canceled", session, redirectTo: redirectFor(session, "canceled") };
}

function redirectFor(session: AuthSessionRow, status: "completed" | "canceled"): string | null {
  if (!session.redirect_url) return null;
  const url = new URL(session.redirect_url);
  url.searchParams.set("authSessionId", session.id);
  url.searchParams.set("status", status);
  return url.toString();
}

/** The `.qwc` file for a session's connection. */
export function qwcForSetup(deps: Deps, connection: ConnectionRow, companyLabel: string): string {
  return qwcDocument({
    appName: `ledger-bridge (${companyLabel})`.slice(0, 60),
    appDescription: `Connects ${companyLabel} to ledger-bridge.`.slice(0, 80),
    connectorUrl: deps.config.connectorUrl,
    supportUrl: `${deps.config.publicUrl}/support`,
    userName: connection.username,
    ownerId: SERVICE_OWNER_ID,
    fileId: connection.file_id,
    runEverySeconds: deps.config.CONNECTOR_CHECK_IN_SECONDS,
    isReadOnly: false,
  });
}
