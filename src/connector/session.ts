import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { mappingForHResult } from "../ledger/xml/status-codes.ts";
import { recoveryQueryDocument } from "../ledger/xml/message-set.ts";
import { systemClock } from "../platform/clock.ts";
import { randomToken } from "../platform/random.ts";
import { hashSecret, secretMatches } from "../platform/secrets.ts";
import {
  completeFromAnswer,
  connectionChannel,
  failWaitingSync,
  interruptSent,
  nextWork,
  resolveRecovery,
  transition,
} from "../requests/engine.ts";
import { completePendingSessions } from "../store/auth-sessions.ts";
import {
  findConnectionById,
  findConnectionByUsername,
  touchConnection,
  updateConnection,
  type ConnectionRow,
} from "../store/connections.ts";
import {
  findSession,
  insertSession,
  openSessions,
  updateSession,
  type ConnectorSessionRow,
} from "../store/connector-sessions.ts";
import {
  findSessionWithInFlight,
  pendingRecoveries,
  sentRequests,
  waitingRequests,
} from "../store/requests.ts";
import { SERVICE_OWNER_ID } from "../tenancy/auth-sessions.ts";
import { negotiateVersion, readCompanyFacts } from "./hcp.ts";

/**
 * The connector session state machine (ledger-protocol §1.2–1.3, architecture §2–3).
 *
 *   authenticate ─▶ open ─sendRequestXML─▶ (hand over | hold ─▶ "" + NoOp) ─receiveResponseXML─▶ open …
 *                    │                       idle too long ─▶ "" + text ─▶ closeConnection ─▶ closed
 *                    └─ connectionError ─▶ closed          authenticate again while a request is sent ─▶ interrupted
 *
 * Business errors are never SOAP faults: they are return values the connector understands.
 */
export const NOOP = "NoOp";
const INVALID_TICKET =
  "The session ticket is not valid or has expired. The Web Connector will try again at its next update.";

export interface ConnectorContext {
  deps: Deps;
  /** Aborted when the server shuts down: held calls return at once. */
  shutdown: AbortSignal;
}

/**
 * The hold is a transport keep-alive, bounded in real time whatever clock the service runs on:
 * the connector's HTTP client would give up on a call held longer. Business time rules (the idle
 * close) use the injected clock.
 */
const realTime = systemClock;

export async function authenticate(
  ctx: ConnectorContext,
  userName: string,
  password: string,
): Promise<string[]> {
  const { deps } = ctx;
  const connection = await findConnectionByUsername(deps.db, userName);
  if (!connection || !secretMatches(password, connection.password_hash) || connection.status === "disabled")
    return ["", "nvu"];
  const now = new Date(deps.clock.now());
  await updateConnection(deps.db, connection.id, {
    last_seen_at: now,
    last_check_in_at: now,
    updated_at: now,
  });
  await interruptOpenSessions(ctx, connection, "A new connector session started before the answer arrived");
  for (const row of await waitingRequests(deps.db, connection.id, ["waiting_for_connection"])) {
    await transition(deps, row, "queued", {}, "The connector checked in", ["waiting_for_connection"]);
  }
  if (!(await hasReasonToOpen(deps, connection, now.getTime()))) return ["", "none"];
  const ticket = randomToken(24);
  await insertSession(deps.db, {
    ticket_hash: hashSecret(ticket),
    connection_id: connection.id,
    state: "open",
    hcp_received: false,
    last_error: null,
    recovery_message_set_id: null,
    recoveries_checked: false,
    company_file_path: null,
    xml_version: null,
    created_at: now,
    last_activity_at: now,
    last_work_at: now,
    closed_at: null,
  });
  return [ticket, connection.company_file_path ?? ""];
}

/** Open a session when work waits, a write needs recovery, the status needs refreshing, or traffic is recent. */
async function hasReasonToOpen(deps: Deps, connection: ConnectionRow, nowMs: number): Promise<boolean> {
  if (connection.status !== "online") return true;
  if ((await waitingRequests(deps.db, connection.id, ["queued"])).length > 0) return true;
  if ((await pendingRecoveries(deps.db, connection.id)).length > 0) return true;
  const lastRequest = connection.last_request_at?.getTime() ?? 0;
  return nowMs - lastRequest < deps.config.CONNECTOR_IDLE_CLOSE_MS;
}

async function interruptOpenSessions(
  ctx: ConnectorContext,
  connection: ConnectionRow,
  why: string,
): Promise<void> {
  const { deps } = ctx;
  for (const session of await openSessions(deps.db, connection.id)) await closeSession(deps, session, why);
  for (const row of await sentRequests(deps.db, connection.id)) await interruptSent(deps, row, why);
}

async function closeSession(deps: Deps, session: ConnectorSessionRow, why: string): Promise<void> {
  await updateSession(deps.db, session.ticket_hash, {
    state: "closed",
    closed_at: new Date(deps.clock.now()),
  });
  for (const row of await sentRequests(deps.db, session.connection_id)) {
    if (row.ticket_hash === session.ticket_hash) await interruptSent(deps, row, why);
  }
  await deps.store.notifier.notify(connectionChannel(session.connection_id));
}

/** Activity stamps are written at most this often (they feed diagnosis and offline detection). */
const TOUCH_INTERVAL_MS = 1000;

/** A live session for a ticket, touched; null for unknown, closed or expired tickets. */
async function liveSession(deps: Deps, ticket: string): Promise<ConnectorSessionRow | null> {
  return keepAlive(deps, await findSession(deps.db, hashSecret(ticket)));
}

/** The session if it is open and its ticket has not expired (touched at most once a second). */
async function keepAlive(
  deps: Deps,
  session: ConnectorSessionRow | null,
): Promise<ConnectorSessionRow | null> {
  if (!session || session.state !== "open") return null;
  const now = deps.clock.now();
  if (now - session.last_activity_at.getTime() > deps.config.CONNECTOR_TICKET_TTL_MS) {
    await closeSession(deps, session, "The session ticket expired");
    return null;
  }
  if (now - session.last_activity_at.getTime() >= TOUCH_INTERVAL_MS) {
    await updateSession(deps.db, session.ticket_hash, { last_activity_at: new Date(now) });
    await touchConnection(deps.db, session.connection_id, { last_seen_at: new Date(now) });
  }
  return session;
}

export interface SendRequestInput {
  ticket: string;
  hcp: string;
  companyFileName: string;
  major: string;
  minor: string;
}

export async function sendRequestXML(
  ctx: ConnectorContext,
  input: SendRequestInput,
  callerGone: AbortSignal,
): Promise<string> {
  const { deps } = ctx;
  let session = await liveSession(deps, input.ticket);
  if (!session) return "";
  if (!session.hcp_received) {
    const connection = await findConnectionById(deps.db, session.connection_id);
    if (!connection) return "";
    await touchConnection(deps.db, connection.id, { last_seen_at: new Date(deps.clock.now()) });
    const refused = await acceptCompanyFile(deps, connection, session, input);
    if (refused !== null) {
      await updateSession(deps.db, session.ticket_hash, { last_error: refused });
      return "";
    }
    session = (await findSession(deps.db, session.ticket_hash)) ?? session;
  }
  const version = session.xml_version ?? "13.0";
  const holdUntil = realTime.now() + deps.config.CONNECTOR_HOLD_MS;
  for (;;) {
    // Listen before looking, so a request created between the look and the wait still wakes us.
    const stop = new AbortController();
    const onShutdown = (): void => stop.abort();
    ctx.shutdown.addEventListener("abort", onShutdown, { once: true });
    callerGone.addEventListener("abort", onShutdown, { once: true });
    const woke = deps.store.notifier.wait(connectionChannel(session.connection_id), stop.signal);
    try {
      // A connector that hung up must not be handed work it can never answer; its session is over.
      if (callerGone.aborted) {
        await closeSession(deps, session, "The connector hung up");
        return "";
      }
      const work = await nextWork(deps, session.connection_id, session.ticket_hash, version);
      if (work?.kind === "recovery") return recoveryQueryDocument(work.messageSetId, version);
      if (work?.kind === "request") return work.xml;
      const now = deps.clock.now();
      const idleLeft = session.last_work_at.getTime() + deps.config.CONNECTOR_IDLE_CLOSE_MS - now;
      if (idleLeft <= 0) {
        await updateSession(deps.db, session.ticket_hash, {
          last_error: "No more work: the session closes until the next update.",
        });
        return "";
      }
      const holdLeft = holdUntil - realTime.now();
      if (holdLeft <= 0 || ctx.shutdown.aborted) {
        await updateSession(deps.db, session.ticket_hash, { last_error: null });
        return "";
      }
      await Promise.race([
        woke,
        deps.clock.sleep(idleLeft, stop.signal),
        realTime.sleep(holdLeft, stop.signal),
      ]);
      const fresh = await findSession(deps.db, session.ticket_hash);
      if (!fresh || fresh.state !== "open") return "";
      if (callerGone.aborted) {
        await closeSession(deps, fresh, "The connector hung up");
        return "";
      }
      session = fresh;
    } finally {
      stop.abort();
      ctx.shutdown.removeEventListener("abort", onShutdown);
      callerGone.removeEventListener("abort", onShutdown);
    }
  }
}

/**
 * First send of a session: record the company file, check it is the file this connection adopted
 * (via the FileID stamp), and choose the message version. Returns the text for `getLastError` when
 * the session must not go on, else null.
 */
async function acceptCompanyFile(
  deps: Deps,
  connection: ConnectionRow,
  session: ConnectorSessionRow,
  input: SendRequestInput,
): Promise<string | null> {
  const facts = readCompanyFacts(input.hcp, SERVICE_OWNER_ID);
  const now = new Date(deps.clock.now());
  const identity = facts?.fileId ?? null;
  if (connection.file_identity !== null && identity !== connection.file_identity) {
    const error = new ServiceError("LEDGER_WRONG_COMPANY_FILE_OPEN", {
      message: `The open company file${facts?.companyName ? ` (${facts.companyName})` : ""} is not the one this connection was set up with.`,
    });
    await markUnavailable(deps, connection, "company_file_mismatch", error, null);
    return "The company file that is open is not the one connected to this application. Open the right company file and update again.";
  }
  const version = negotiateVersion(input.major, input.minor, facts?.supportedVersions ?? []);
  if (version === null) {
    await markUnavailable(
      deps,
      connection,
      "ledger_unavailable",
      new ServiceError("LEDGER_VERSION_UNSUPPORTED"),
      null,
    );
    return "This version of the accounting application is too old for this integration.";
  }
  await updateConnection(deps.db, connection.id, {
    status: "online",
    status_reason: null,
    last_connection_error_code: null,
    retry_at: null,
    file_identity: connection.file_identity ?? identity,
    company_file_path: connection.company_file_path ?? (input.companyFileName || null),
    company_name: facts?.companyName ?? connection.company_name,
    product: facts?.product ?? connection.product,
    country: facts?.country ?? connection.country,
    xml_version: version,
    updated_at: now,
  });
  await completePendingSessions(deps.db, connection.id, now);
  await updateSession(deps.db, session.ticket_hash, {
    hcp_received: true,
    xml_version: version,
    company_file_path: input.companyFileName || null,
  });
  return null;
}

async function markUnavailable(
  deps: Deps,
  connection: ConnectionRow,
  status: "ledger_unavailable" | "company_file_mismatch",
  error: ServiceError,
  hresult: string | null,
): Promise<void> {
  const now = deps.clock.now();
  await updateConnection(deps.db, connection.id, {
    status,
    status_reason: error.code,
    last_connection_error_code: hresult,
    retry_at:
      error.code === "LEDGER_FILE_MODE_CONFLICT"
        ? new Date(now + deps.config.CONNECTOR_CHECK_IN_SECONDS * 1000)
        : null,
    updated_at: new Date(now),
  });
  await failWaitingSync(deps, connection.id, error, `The connector reported ${error.code}`);
}

export async function receiveResponseXML(
  ctx: ConnectorContext,
  ticket: string,
  response: string,
  hresult: string,
  message: string,
): Promise<number> {
  const { deps } = ctx;
  const found = await findSessionWithInFlight(deps.db, hashSecret(ticket));
  const session = await keepAlive(deps, found?.session ?? null);
  if (!session) return -1;
  const now = new Date(deps.clock.now());
  if (session.recovery_message_set_id) {
    const recovering = (await pendingRecoveries(deps.db, session.connection_id)).filter(
      (r) => r.message_set_id === session.recovery_message_set_id,
    );
    for (const row of recovering) await resolveRecovery(deps, row, response);
    await updateSession(deps.db, session.ticket_hash, { recovery_message_set_id: null, last_work_at: now });
    return 50;
  }
  const inFlight = found?.inFlight ?? null;
  if (inFlight) {
    await completeFromAnswer(
      deps,
      inFlight,
      { responseXml: response, hresult, message },
      session.ticket_hash,
    );
  } else {
    await updateSession(deps.db, session.ticket_hash, { last_work_at: now });
  }
  // Below 100 keeps the session (and the open company file) warm for the next request.
  return 50;
}

export async function connectionError(
  ctx: ConnectorContext,
  ticket: string,
  hresult: string,
  message: string,
): Promise<string> {
  const { deps } = ctx;
  const session = await findSession(deps.db, hashSecret(ticket));
  if (!session) return "done";
  const connection = await findConnectionById(deps.db, session.connection_id);
  if (connection) {
    const mapping = mappingForHResult(hresult);
    const error = new ServiceError(mapping.code, {
      integrationCode: hresult,
      ...(message
        ? { message: `${new ServiceError(mapping.code).message} The application said: ${message}` }
        : {}),
    });
    await markUnavailable(deps, connection, mapping.connectionStatus ?? "ledger_unavailable", error, hresult);
  }
  await closeSession(deps, session, "The connector could not reach the application");
  return "done";
}

/**
 * The connector hung up while (or right after) a request was handed over: the hand-over may not
 * have arrived. The session ends and its in-flight request is interrupted (a read fails retryably,
 * a write goes to recovery), never re-sent blindly.
 */
export async function connectorHungUp(ctx: ConnectorContext, ticket: string): Promise<void> {
  const session = await findSession(ctx.deps.db, hashSecret(ticket));
  if (session && session.state === "open")
    await closeSession(ctx.deps, session, "The connector hung up during the hand-over");
}

export async function getLastError(ctx: ConnectorContext, ticket: string): Promise<string> {
  const session = await findSession(ctx.deps.db, hashSecret(ticket));
  if (!session) return INVALID_TICKET;
  return session.last_error ?? NOOP;
}

export async function closeConnection(ctx: ConnectorContext, ticket: string): Promise<string> {
  const session = await findSession(ctx.deps.db, hashSecret(ticket));
  if (session && session.state === "open")
    await closeSession(ctx.deps, session, "The connector closed the session before answering");
  return "OK";
}
