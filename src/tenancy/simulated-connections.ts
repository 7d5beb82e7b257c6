import { ServiceError } from "../errors/service-error.ts";
import { randomAlphanumeric } from "../platform/random.ts";
import { hashSecret } from "../platform/secrets.ts";
import { supersedePendingSessions } from "../store/auth-sessions.ts";
import { findConnectionById, updateConnection } from "../store/connections.ts";
import { findEndUser } from "../store/end-users.ts";
import { findProject } from "../store/projects.ts";
import { ensureConnection } from "./auth-sessions.ts";

/**
 * Simulator mode (`SIMULATOR=on`): the service itself can play an end user's Web Connector and
 * company file, so that the whole setup flow and the first calls run on one machine. The hosted
 * setup page and the operator CLI attach a simulated connector to any end user's connection; the
 * service keeps that company file in its store and starts the connector again after a restart.
 *
 * The connector password is never stored in clear: a simulated connector gets a fresh password when
 * it is attached and at every start of the service, like an end user who pastes a new one.
 */
import type { AttachSimulatedConnector, Deps, SimulatedApplicationChoice } from "../deps.ts";

export type {
  AttachSimulatedConnector,
  AttachedSimulatedConnector,
  SimulatedApplicationChoice,
  SimulatedConnectors,
} from "../deps.ts";

/** Gives a connection a new connector password; older setup links stop working (their password is gone). */
export async function issueConnectorPassword(deps: Deps, connectionId: string): Promise<string> {
  const password = randomAlphanumeric(24);
  const updated = await updateConnection(deps.db, connectionId, {
    password_hash: hashSecret(password),
    updated_at: new Date(deps.clock.now()),
  });
  if (!updated) throw new Error(`connection ${connectionId} no longer exists`);
  await supersedePendingSessions(deps.db, connectionId, "");
  return password;
}

/**
 * What `ledger-bridge end-users simulate` needs: the end user's connection (created like an auth
 * session would, in the end user's mode) with a fresh password.
 */
export async function prepareSimulatedConnection(
  deps: Deps,
  input: {
    projectId: string;
    endUserId: string;
    application?: SimulatedApplicationChoice;
  },
): Promise<AttachSimulatedConnector> {
  const project = await findProject(deps.db, input.projectId);
  // The operator works across modes: the end user's own mode decides its connection's.
  const endUser = project
    ? ((await findEndUser(deps.db, { projectId: project.id, mode: "live" }, input.endUserId)) ??
      (await findEndUser(deps.db, { projectId: project.id, mode: "test" }, input.endUserId)))
    : null;
  if (!project || !endUser)
    throw new ServiceError("RESOURCE_MISSING", {
      param: "endUserId",
      message: "No such end user in this project.",
    });
  const test = endUser.mode === "test";
  const password = randomAlphanumeric(24);
  const principal = {
    projectId: project.id,
    organization: project.organization,
    keyId: "operator",
    mode: test ? ("test" as const) : ("live" as const),
    readOnly: false,
  };
  const now = new Date(deps.clock.now());
  const ensured = await ensureConnection(deps, principal, endUser.id, test, password, now);
  await supersedePendingSessions(deps.db, ensured.id, "");
  const connection = (await findConnectionById(deps.db, ensured.id)) ?? ensured;
  return {
    connection,
    password,
    companyName: endUser.companyName,
    ...(input.application ? { application: input.application } : {}),
  };
}
