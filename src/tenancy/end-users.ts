import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { newId } from "../platform/ids.ts";
import {
  findConnectionForEndUser,
  findConnectionsForEndUsers,
  updateConnection,
  type ConnectionRow,
} from "../store/connections.ts";
import { connectionsInSession } from "../store/connector-sessions.ts";
import {
  deleteEndUser,
  findEndUser,
  insertEndUser,
  listEndUsers,
  updateEndUser,
  type EndUserChanges,
  type EndUserRow,
} from "../store/end-users.ts";
import { requestsGone } from "../store/requests.ts";
import type { Tenant } from "../store/tenant.ts";
import { moveConnection } from "../connections/status.ts";
import { serializeConnection, type ConnectionResource } from "../connections/resource.ts";
import { decodeCursor, pageOf, type PlatformPage } from "./pagination.ts";

/**
 * The end user resource (architecture §5): one of the developer's customers, one company file. An
 * end user has the mode of the key that created it and is seen only by keys of that mode (decision
 * 0005): every function takes the caller's {@link Tenant} (a Principal is one).
 */
export interface EndUserResource {
  id: string;
  objectType: "end_user";
  createdAt: string;
  companyName: string;
  sourceId: string;
  email: string | null;
  integrationConnections: ConnectionResource[];
}

function serialize(
  deps: Deps,
  row: EndUserRow,
  connection: ConnectionRow | undefined | null,
  inSession: ReadonlySet<string>,
): EndUserResource {
  const view = {
    nowMs: deps.clock.now(),
    offlineAfterMs: deps.config.CONNECTION_OFFLINE_AFTER_MS,
    checkInIntervalMs: deps.config.CONNECTOR_CHECK_IN_SECONDS * 1000,
  };
  return {
    id: row.id,
    objectType: "end_user",
    createdAt: row.createdAt.toISOString(),
    companyName: row.companyName,
    sourceId: row.sourceId,
    email: row.email,
    integrationConnections: connection
      ? [
          serializeConnection(deps.activity.connection(connection), {
            ...view,
            sessionOpen: inSession.has(connection.id),
          }),
        ]
      : [],
  };
}

async function serializeWithConnection(
  deps: Deps,
  row: EndUserRow,
  connection: ConnectionRow | null,
): Promise<EndUserResource> {
  const inSession = connection ? await connectionsInSession(deps.db, [connection.id]) : new Set<string>();
  return serialize(deps, row, connection, inSession);
}

const duplicateSourceId = (): ServiceError =>
  new ServiceError("INVALID_PARAMETER", {
    param: "sourceId",
    message: "An end user with this `sourceId` already exists in the project.",
  });

/** The end user named by the path's `id` is not the caller's (or does not exist). */
const missing = (): ServiceError =>
  new ServiceError("RESOURCE_MISSING", { param: "id", message: "No such end user." });

export async function createEndUser(
  deps: Deps,
  tenant: Tenant,
  input: { companyName: string; sourceId: string; email?: string | null | undefined },
): Promise<EndUserResource> {
  const row: EndUserRow = {
    id: newId("endUser"),
    projectId: tenant.projectId,
    mode: tenant.mode,
    companyName: input.companyName,
    sourceId: input.sourceId,
    email: input.email ?? null,
    createdAt: new Date(deps.clock.now()),
  };
  if (!(await insertEndUser(deps.db, row))) throw duplicateSourceId();
  return serialize(deps, row, null, new Set());
}

export async function getEndUser(deps: Deps, tenant: Tenant, endUserId: string): Promise<EndUserResource> {
  const row = await findEndUser(deps.db, tenant, endUserId);
  if (!row) throw missing();
  return serializeWithConnection(
    deps,
    row,
    await findConnectionForEndUser(deps.db, tenant.projectId, endUserId),
  );
}

export async function listEndUsersPage(
  deps: Deps,
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined },
): Promise<PlatformPage<EndUserResource>> {
  // The cursor names the project's list in one mode, so another project's or mode's cursor is
  // CURSOR_INVALID (spec: foreign cursor).
  const list = `end_users:${tenant.projectId}:${tenant.mode}`;
  const after = query.cursor ? decodeCursor(list, query.cursor, query).lastId : null;
  const rows = await listEndUsers(deps.db, tenant, query.limit, after);
  const connections = await findConnectionsForEndUsers(
    deps.db,
    tenant.projectId,
    rows.map((r) => r.id),
  );
  const byEndUser = new Map(connections.map((c) => [c.end_user_id, c]));
  const inSession = await connectionsInSession(
    deps.db,
    connections.map((c) => c.id),
  );
  return pageOf(list, "/v1/end-users", query, rows, (row) =>
    serialize(deps, row, byEndUser.get(row.id), inSession),
  );
}

export async function changeEndUser(
  deps: Deps,
  tenant: Tenant,
  endUserId: string,
  changes: EndUserChanges,
): Promise<EndUserResource> {
  const row = await updateEndUser(deps.db, tenant, endUserId, changes);
  if (row === "conflict") throw duplicateSourceId();
  if (!row) throw missing();
  return serializeWithConnection(
    deps,
    row,
    await findConnectionForEndUser(deps.db, tenant.projectId, endUserId),
  );
}

export async function removeEndUser(
  deps: Deps,
  tenant: Tenant,
  endUserId: string,
): Promise<{ id: string; objectType: "end_user"; deleted: true }> {
  if (!(await deleteEndUser(deps.db, tenant, endUserId))) throw missing();
  // Its Requests went with it: every instance's cache of settled Requests forgets them.
  await requestsGone(deps.store);
  return { id: endUserId, objectType: "end_user", deleted: true };
}

/**
 * Resets what the connection remembers of the company file (architecture §5): `path` forgets the
 * stored path so the connector uses the file that is open; `identity` also forgets the adopted file
 * identity so the next check-in adopts whichever file is open.
 */
export async function resetCompanyFile(
  deps: Deps,
  tenant: Tenant,
  endUserId: string,
  mode: "path" | "identity",
): Promise<EndUserResource> {
  const row = await findEndUser(deps.db, tenant, endUserId);
  if (!row) throw missing();
  const connection = await findConnectionForEndUser(deps.db, tenant.projectId, endUserId);
  if (!connection) {
    throw new ServiceError("INTEGRATION_CONNECTION_NOT_SET_UP", {
      message: "The end user has no connection yet, so there is no company file to reset.",
    });
  }
  const changes = {
    company_file_path: null,
    ...(mode === "identity" ? { file_identity: null } : {}),
    updated_at: new Date(deps.clock.now()),
  };
  // A mismatch is what the reset cures: the next check-in adopts the file that is open.
  const updated =
    connection.status === "company_file_mismatch"
      ? (await moveConnection(deps, connection.id, "online", changes)).row
      : await updateConnection(deps.db, connection.id, changes);
  return serializeWithConnection(deps, row, updated);
}
