import { mappingForHResult } from "../../ledger/xml/status-codes.ts";
import { hashSecret } from "../../platform/secrets.ts";
import { findConnectionById, touchConnection } from "../../store/connections.ts";
import { findSession } from "../../store/connector-sessions.ts";
import { connectionErrorAnswer, errorForHResult, markUnavailable } from "../company-file.ts";
import { NOOP, TEXTS, type ConnectorContext } from "./context.ts";
import { closeSession, keepAlive, noteReplacedTicket, quietSession } from "./live.ts";
import { isOpen, moveSession } from "./phases.ts";
import { failureText } from "./receive-response.ts";

/**
 * The calls that end a session or say why it ended (ledger-protocol §1.3–1.4): `connectionError`,
 * `getLastError`, `closeConnection`, and a held call whose connector hung up.
 */

/** HRESULT of an open without a path while the application is closed (nothing open to fall back on). */
const NO_PATH_APPLICATION_CLOSED = "0x80040416";

/**
 * `connectionError`: the connector could not open the company file. Another path is tried (at most
 * twice, PG p.51) when the failure is one a path cures; otherwise "done": the connection shows the
 * error, sync callers get it at once, and the session ends.
 */
export async function connectionError(
  ctx: ConnectorContext,
  ticket: string,
  hresult: string,
  message: string,
): Promise<string> {
  const { deps } = ctx;
  ctx.memory.forget(hashSecret(ticket));
  const session = await keepAlive(deps, await findSession(deps.db, hashSecret(ticket)));
  if (!session) return "done";
  const connection = await findConnectionById(deps.db, session.connection_id);
  const failures = session.connection_errors + 1;
  const answer = connection ? connectionErrorAnswer(connection, hresult, failures) : "done";
  // The open file was only a fallback after the remembered path failed: when the application is
  // closed there is no open file (0x80040416), and what the end user must fix is the first failure.
  const first = session.connection_errors > 0 ? connection?.last_connection_error_code : null;
  const reported =
    first && hresult.trim().toLowerCase() === NO_PATH_APPLICATION_CLOSED && answer === "done"
      ? { hresult: first, message: "" }
      : { hresult, message };
  const error = errorForHResult(reported.hresult, reported.message);
  if (answer !== "done") {
    // Another path may work: the connection keeps its status until the outcome is known.
    await moveSession(deps, session.ticket_hash, "retry_open", { connection_errors: failures });
    await touchConnection(deps.db, session.connection_id, { last_connection_error_code: hresult.trim() });
    return answer;
  }
  if (connection) {
    const status = mappingForHResult(reported.hresult).connectionStatus ?? "ledger_unavailable";
    await markUnavailable(deps, connection, status, error, reported.hresult.trim());
  }
  await closeSession(
    deps,
    { ...session, connection_errors: failures },
    "The connector could not reach the application",
    failureText(error, reported.hresult),
  );
  return "done";
}

/**
 * The connector hung up while (or right after) a request was handed over: the hand-over may not
 * have arrived. The session ends and its in-flight request is interrupted (a read fails retryably,
 * a write goes to recovery), never re-sent blindly.
 */
export async function connectorHungUp(ctx: ConnectorContext, ticket: string): Promise<void> {
  ctx.memory.forget(hashSecret(ticket));
  const session = await findSession(ctx.deps.db, hashSecret(ticket));
  if (session && isOpen(session))
    await closeSession(ctx.deps, session, "The connector hung up during the hand-over", TEXTS.hungUp);
}

/**
 * `NoOp` (pause, then ask again) only for a live session with nothing to report; otherwise the
 * reason, so that a connector holding a dead ticket stops.
 */
export async function getLastError(ctx: ConnectorContext, ticket: string): Promise<string> {
  const { deps } = ctx;
  const ticketHash = hashSecret(ticket);
  // After an empty hold of a quiet session: NoOp from memory (decision 0023).
  if (quietSession(ctx, ticketHash, (session) => session.last_error === null)) return NOOP;
  const session = await findSession(deps.db, ticketHash);
  if (!session) return TEXTS.unknownTicket;
  if (!isOpen(session)) {
    await noteReplacedTicket(deps, session);
    return session.last_error ?? TEXTS.ended;
  }
  const live = await keepAlive(deps, session);
  if (!live) return TEXTS.expired;
  return live.last_error ?? NOOP;
}

/** `closeConnection`: ends the session; answers the text the connector shows in its status column. */
export async function closeConnection(ctx: ConnectorContext, ticket: string): Promise<string> {
  const { deps } = ctx;
  ctx.memory.forget(hashSecret(ticket));
  const session = await findSession(deps.db, hashSecret(ticket));
  if (!session) return TEXTS.unknownTicket;
  if (isOpen(session))
    await closeSession(deps, session, "The connector closed the session before answering", null);
  else await noteReplacedTicket(deps, session);
  return session.last_error ?? "OK";
}
