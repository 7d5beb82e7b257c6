import type { Deps } from "../deps.ts";
import type { ServiceError } from "../errors/service-error.ts";
import { readAnswer } from "../ledger/xml/answer.ts";
import { closingQueryDocument, recoveryQueryDocument } from "../ledger/xml/message-set.ts";
import { isFailureHResult, mappingForHResult } from "../ledger/xml/status-codes.ts";
import { systemClock, type Clock } from "../platform/clock.ts";
import { randomToken } from "../platform/random.ts";
import { hashSecret, secretMatches } from "../platform/secrets.ts";
import {
  completeFromAnswer,
  connectionChannel,
  interruptSent,
  nextWork,
  type NextWork,
  resolveRecovery,
  transition,
} from "../requests/engine.ts";
import { withCheckIn } from "../connections/check-in-estimate.ts";
import { checkInGapMs } from "../connections/seen.ts";
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
import { takeSession } from "../store/instances.ts";
import { moveConnection } from "../connections/status.ts";
import {
  findSessionWithInFlight,
  pendingRecoveries,
  sentRequests,
  waitingRequests,
} from "../store/requests.ts";
import {
  acceptCompanyFile,
  connectionErrorAnswer,
  errorForHResult,
  markUnavailable,
} from "./company-file.ts";
import type { QuietSessions, TrackedSession } from "./quiet-sessions.ts";

/**
 * The connector session state machine (ledger-protocol §1.2–1.3, programmer's guide ch. 8 and
 * pp.61–82, architecture §2–3). A session is `open` from `authenticate` until it is closed; at
 * most one document is handed over at a time, and the connector's next call tells what became of it.
 *
 *   authenticate ─▶ open ─ sendRequestXML ─▶ hand over: recovery query | request | closing query
 *                   │                        or hold until work arrives, then "" + NoOp (pause, ask again)
 *                   ├─ receiveResponseXML: the answer to what was handed over → 50 (ask again)
 *                   │    the closing query's answer, nothing queued → 100 → closeConnection (clean end)
 *                   │    a failure HRESULT instead of an answer → the request fails; negative
 *                   │    nothing handed over → negative
 *                   ├─ sendRequestXML again before answering: the answer was lost → a write goes to
 *                   │    `outcome_unknown` and its recovery query is the next work, a read fails
 *                   │    LEDGER_READ_INTERRUPTED; the queue moves on in the same call
 *                   ├─ connectionError → another company file path (at most twice) or "done"
 *                   └─▶ closed: closeConnection, a newer authenticate, ticket expiry (injected
 *                       clock), a hung-up held call, the end of an idle session, connectionError
 *                       "done", or a service restart.
 *
 * A closed or unknown ticket gets "" from sendRequestXML, a negative value from receiveResponseXML
 * and an error text (never NoOp) from getLastError, so the connector stops instead of looping.
 * Business errors are never SOAP faults: they are return values the connector understands.
 */
export const NOOP = "NoOp";

/** receiveResponseXML: more may come; the connector asks again (0–99 is "percent done"). */
export const PROGRESS = 50;
/** receiveResponseXML: nothing left; the connector closes the session. */
export const DONE = 100;
/** receiveResponseXML: the ticket's session has ended. */
export const SESSION_ENDED = -1;
/** receiveResponseXML: an answer arrived while nothing was handed over. */
export const UNEXPECTED_ANSWER = -2;
/** receiveResponseXML: the application failed instead of answering (an HRESULT). */
export const APPLICATION_FAILED = -3;

/** Texts `getLastError` and `closeConnection` answer; the connector shows them to the end user. */
export const TEXTS = {
  unknownTicket:
    "The session ticket is not valid or has expired. The Web Connector will try again at its next update.",
  ended: "This update session has ended. The Web Connector will start a new one at its next update.",
  replaced: "This update session was replaced by a newer one from this computer. Nothing was lost.",
  expired: "This update session expired. The Web Connector will start a new one at its next update.",
  hungUp:
    "The connection to the service was interrupted. The Web Connector will try again at its next update.",
  unexpectedAnswer:
    "The service received an answer it had not asked for, so this update stops. The Web Connector will try again at its next update.",
  unreadableRecovery:
    "The accounting application's answer could not be read, so this update stops. The Web Connector will try again at its next update.",
} as const;

export interface ConnectorContext {
  deps: Deps;
  /** Aborted when the server shuts down: held calls return at once. */
  shutdown: AbortSignal;
  /**
   * The calls held right now, each aborted at shutdown by the endpoint. A set instead of a listener
   * per call on the shared `shutdown` signal: with thousands of idle sessions, adding and removing
   * listeners on one signal cost time in proportion to their number at every hold (N²).
   */
  held: Set<AbortController>;
  /** The sessions whose re-asks are answered from memory (decision 0023). */
  quiet: QuietSessions;
  /**
   * The clock of the hold (`CONNECTOR_HOLD_MS`): real time whatever clock the service runs on, since
   * the hold is a transport keep-alive and the connector's HTTP client would give up on a call held
   * longer. Business time rules (the idle close, ticket expiry) use the service clock. Tests inject one.
   */
  holdClock: Clock;
}

/**
 * Reasons the hold's own signals abort with: shared, so that ending a wait (every hold ends one or
 * more) does not build a DOMException with its stack trace, as `abort()` without a reason does.
 */
const CALL_ENDED = new Error("the held call ended");
const WAIT_OVER = new Error("the wait is over");

/** The hold's clock when none is given: real time. */
export const HOLD_CLOCK: Clock = systemClock;

export async function authenticate(
  ctx: ConnectorContext,
  userName: string,
  password: string,
): Promise<string[]> {
  const { deps } = ctx;
  const found = await findConnectionByUsername(deps.db, userName);
  if (!found || !secretMatches(password, found.password_hash) || found.status === "disabled") {
    deps.metrics.connectorCheckIns.inc({ result: "nvu" });
    return ["", "nvu"];
  }
  const now = new Date(deps.clock.now());
  // The gap since the connector was last seen counts its calls not yet written (activity stamps).
  const connection = deps.activity.connection(found);
  const seen = {
    last_seen_at: now,
    last_check_in_at: now,
    check_in_gap_ms: checkInGapMs(connection, now.getTime()),
    recent_check_ins: withCheckIn(connection.recent_check_ins, now.getTime()),
    updated_at: now,
  };
  const updated = (await updateConnection(deps.db, connection.id, seen)) ?? connection;
  // An offline connector that checks in is back; the session it opens (always, for a status other
  // than online) confirms or refutes the application. After the stamp: a sweep that stored offline
  // before it is undone here, and one after it sees the connector was just seen.
  if (updated.status === "offline")
    await moveConnection(deps, connection.id, "online", {}, (current) => current.status === "offline");
  // A newer check-in ends the older session (PG p.42); what it had in flight was not answered.
  for (const session of await openSessions(deps.db, connection.id)) {
    ctx.quiet.forget(session.ticket_hash);
    await closeSession(
      deps,
      session,
      "A new connector session started before the answer arrived",
      TEXTS.replaced,
    );
  }
  for (const row of await sentRequests(deps.db, connection.id))
    await interruptSent(deps, row, "A new connector session started before the answer arrived");
  for (const row of await waitingRequests(deps.db, connection.id, ["waiting_for_connection"])) {
    await transition(deps, row, "connector_back", {}, "The connector checked in");
  }
  if (!(await hasReasonToOpen(deps, updated, now.getTime()))) {
    deps.metrics.connectorCheckIns.inc({ result: "none" });
    return ["", "none"];
  }
  const ticket = randomToken(24);
  await insertSession(deps.db, {
    ticket_hash: hashSecret(ticket),
    connection_id: connection.id,
    state: "open",
    hcp_received: false,
    last_error: null,
    recovery_message_set_id: null,
    recoveries_checked: false,
    closing_query_sent: false,
    connection_errors: 0,
    company_file_path: null,
    xml_version: null,
    created_at: now,
    last_activity_at: now,
    last_work_at: now,
    closed_at: null,
    instance_id: deps.instanceId,
    ledger_answered_at: null,
  });
  deps.metrics.connectorCheckIns.inc({ result: "session" });
  deps.logger.debug(
    { connectionId: connection.id, endUserId: connection.end_user_id },
    "connector session opened",
  );
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

/**
 * Ends a session: what it had in flight is interrupted (never re-sent), a held call returns, and
 * `userText` (kept if null) is what getLastError and closeConnection answer from now on.
 */
async function closeSession(
  deps: Deps,
  session: ConnectorSessionRow,
  detail: string,
  userText: string | null,
): Promise<void> {
  await updateSession(deps.db, session.ticket_hash, {
    state: "closed",
    closed_at: new Date(deps.clock.now()),
    last_error: userText ?? session.last_error,
  });
  for (const row of await sentRequests(deps.db, session.connection_id)) {
    if (row.ticket_hash === session.ticket_hash) await interruptSent(deps, row, detail);
  }
  await deps.store.notifier.notify(connectionChannel(session.connection_id));
}

/**
 * A call with the ticket of a session that a newer `authenticate` replaced. One connector never
 * does that (it checks in again only after its session ended on its side), so the older session's
 * connector is still running: a second computer uses the same registration. Kept as evidence for
 * diagnosis (`same_connector_two_computers`).
 */
async function noteReplacedTicket(deps: Deps, session: ConnectorSessionRow | null): Promise<void> {
  if (session?.state !== "closed" || session.last_error !== TEXTS.replaced) return;
  await touchConnection(deps.db, session.connection_id, { shared_connector_at: new Date(deps.clock.now()) });
}

/** A live session for a ticket, its activity noted; null for unknown, closed or expired tickets. */
async function liveSession(deps: Deps, ticketHash: string): Promise<ConnectorSessionRow | null> {
  return keepAlive(deps, await findSession(deps.db, ticketHash));
}

/**
 * The session if it is open and its ticket has not expired, its activity noted (the stamps are
 * written in batches: store/activity-stamps.ts); an expired one is closed here, on the
 * injected clock.
 */
async function keepAlive(
  deps: Deps,
  session: ConnectorSessionRow | null,
): Promise<ConnectorSessionRow | null> {
  if (!session || session.state !== "open") {
    await noteReplacedTicket(deps, session);
    return null;
  }
  // The connector's call reached another instance (behind a load balancer, or after a restart of
  // the one it used): this instance holds the session now. A session a recovery closed meanwhile is over.
  if (session.instance_id !== deps.instanceId) {
    if (!(await takeSession(deps.db, session.ticket_hash, deps.instanceId))) return null;
    session = { ...session, instance_id: deps.instanceId };
    // The instance that served it before forgets what it knew of it from memory (QuietSessions).
    await deps.store.notifier.notify(connectionChannel(session.connection_id));
  }
  const now = deps.clock.now();
  if (ticketExpired(deps, session, now)) {
    await closeSession(deps, session, "The session ticket expired", TEXTS.expired);
    return null;
  }
  deps.activity.note(session.ticket_hash, session.connection_id, now);
  return session;
}

/**
 * Whether `ticket` names an open session whose ticket has not expired, noting nothing (decision
 * 0031): the endpoint asks once per call that grows past the limit of unauthenticated bodies.
 */
export async function ticketIsLive(ctx: ConnectorContext, ticket: string): Promise<boolean> {
  if (ticket === "") return false;
  const session = await findSession(ctx.deps.db, hashSecret(ticket));
  return session?.state === "open" && !ticketExpired(ctx.deps, session, ctx.deps.clock.now());
}

/** Whether the session's ticket expired at `nowMs`, counting its activity not yet written. */
function ticketExpired(deps: Deps, session: ConnectorSessionRow, nowMs: number): boolean {
  const noted = deps.activity.sessionSeenAt(session.ticket_hash)?.getTime() ?? 0;
  const last = Math.max(session.last_activity_at.getTime(), noted);
  return nowMs - last > deps.config.CONNECTOR_TICKET_TTL_MS;
}

/**
 * A re-ask answered from memory (decision 0023): the session this instance holds and found with
 * nothing to do, if nothing woke its connection since and its ticket is still good; its activity
 * noted. Null sends the call the long way, through the store.
 */
function quietSession(
  ctx: ConnectorContext,
  ticketHash: string,
  usable: (session: ConnectorSessionRow) => boolean = () => true,
): TrackedSession | null {
  const entry = ctx.quiet.quiet(ticketHash);
  if (!entry || !usable(entry.session)) return null;
  const { deps } = ctx;
  const { session } = entry;
  const now = deps.clock.now();
  if (
    session.state !== "open" ||
    session.instance_id !== deps.instanceId ||
    ticketExpired(deps, session, now)
  ) {
    ctx.quiet.forget(ticketHash);
    return null;
  }
  deps.activity.note(ticketHash, session.connection_id, now);
  deps.metrics.connectorQuietCalls.inc();
  return entry;
}

export interface SendRequestInput {
  ticket: string;
  hcp: string;
  companyFileName: string;
  /** `qbXMLCountry`: the regional edition of the application (`US`, `CA`, `UK`). */
  country: string;
  major: string;
  minor: string;
}

export async function sendRequestXML(
  ctx: ConnectorContext,
  input: SendRequestInput,
  callerGone: AbortSignal,
): Promise<string> {
  const { deps } = ctx;
  const ticketHash = hashSecret(input.ticket);
  // The connector asks again after an empty hold and nothing changed since: no store call.
  const quiet = quietSession(ctx, ticketHash);
  if (quiet) return hold(ctx, quiet.session, false, callerGone);
  // Right after an answer this instance took: the next request is claimed at once.
  const next = await nextAfterAnswer(ctx, ticketHash, callerGone);
  if (next !== null) return next;
  let session = await liveSession(deps, ticketHash);
  // A dead ticket: "" makes the connector ask getLastError, which explains, and it stops.
  if (!session) {
    ctx.quiet.forget(ticketHash);
    return "";
  }
  if (!session.hcp_received) {
    const connection = await findConnectionById(deps.db, session.connection_id);
    if (!connection) return "";
    await touchConnection(deps.db, connection.id, { last_seen_at: new Date(deps.clock.now()) });
    const refused = await acceptCompanyFile(deps, connection, session, input);
    if (refused !== null) {
      // The application answered (with a company file this connection refuses): not a silent session.
      await updateSession(deps.db, session.ticket_hash, {
        last_error: refused,
        ledger_answered_at: new Date(deps.clock.now()),
      });
      return "";
    }
    session = (await findSession(deps.db, session.ticket_hash)) ?? session;
  }
  if (session.closing_query_sent) {
    // The closing query's answer never came (it was a read: nothing to recover); the session goes on.
    await updateSession(deps.db, session.ticket_hash, { closing_query_sent: false });
    session = { ...session, closing_query_sent: false };
  }
  return hold(ctx, session, true, callerGone);
}

/**
 * The connector asks for more right after this instance took its answer (receiveResponseXML said
 * more may come): the session was read then, so the next request is claimed without reading it
 * again (decision 0027). The claim itself hands over nothing unless the session is still open and
 * held by this instance when it runs. Null when there is nothing to hand over at once, or anything
 * is unusual (a hang-up, an expired ticket, the session changed): the call goes the usual way.
 */
async function nextAfterAnswer(
  ctx: ConnectorContext,
  ticketHash: string,
  callerGone: AbortSignal,
): Promise<string | null> {
  const session = ctx.quiet.takeAnswered(ticketHash);
  const { deps } = ctx;
  const now = deps.clock.now();
  if (
    session === null ||
    callerGone.aborted ||
    ctx.shutdown.aborted ||
    session.state !== "open" ||
    session.instance_id !== deps.instanceId ||
    !session.hcp_received ||
    session.closing_query_sent ||
    ticketExpired(deps, session, now)
  ) {
    return null;
  }
  const version = session.xml_version ?? "13.0";
  // Tracked from before the look, so a wake-up during it is counted (as holdForWork does).
  const tracked = ctx.quiet.track(session);
  const changes = tracked.changes;
  const work = await nextWork(deps, session.connection_id, ticketHash, version, false, deps.instanceId);
  if (work === null || work.kind === "spaced") return null;
  deps.activity.note(ticketHash, session.connection_id, now);
  if (work.kind === "request") {
    ctx.quiet.forget(ticketHash);
    return work.xml;
  }
  if (work.kind === "recovery") {
    ctx.quiet.forget(ticketHash);
    return recoveryQueryDocument(work.messageSetId, version);
  }
  // Nothing to do and nothing unsettled: held as a quiet re-ask is (no second look).
  ctx.quiet.markQuiet(tracked, changes);
  return hold(ctx, session, false, callerGone);
}

/**
 * Holds a sendRequestXML until work is handed over or `CONNECTOR_HOLD_MS` passes on the hold's
 * clock. `look`: the store is asked for work first (false for a quiet re-ask, decision 0023).
 */
async function hold(
  ctx: ConnectorContext,
  session: ConnectorSessionRow,
  look: boolean,
  callerGone: AbortSignal,
): Promise<string> {
  const holdUntil = ctx.holdClock.now() + ctx.deps.config.CONNECTOR_HOLD_MS;
  // This call ends early when the server shuts down or the connector hangs up.
  const call = new AbortController();
  const endCall = (): void => call.abort(CALL_ENDED);
  if (ctx.shutdown.aborted) call.abort(CALL_ENDED);
  ctx.held.add(call);
  callerGone.addEventListener("abort", endCall, { once: true });
  try {
    return await holdForWork(ctx, session, look, holdUntil, call.signal, callerGone);
  } finally {
    ctx.held.delete(call);
    callerGone.removeEventListener("abort", endCall);
  }
}

/**
 * The hold loop of one sendRequestXML: work is handed over, or "" (NoOp) when the hold ends.
 * The store is asked for work when the call starts (unless the session is quiet) and after every
 * wake-up on the connection's channel; a hold that only waits out its timers touches no store.
 */
async function holdForWork(
  ctx: ConnectorContext,
  opened: ConnectorSessionRow,
  look: boolean,
  holdUntil: number,
  callEnded: AbortSignal,
  callerGone: AbortSignal,
): Promise<string> {
  const { deps } = ctx;
  let session = opened;
  const version = session.xml_version ?? "13.0";
  // Tracked from before the first look, so a wake-up during the look is counted.
  const tracked = ctx.quiet.track(session);
  let mustLook = look;
  // After a wake-up the session is not read before the look: the claim checks it is still open and
  // held here (decision 0027), and it is read when the look hands nothing over.
  let unread = false;
  // The last wait ended on a timer alone, nothing to look at since (see the top of the loop).
  let timerOnly = false;
  const over = (): string => {
    ctx.quiet.forget(session.ticket_hash);
    return "";
  };
  /** Time left (service clock) before the idle close. */
  const idleLeftMs = (): number =>
    session.last_work_at.getTime() + deps.config.CONNECTOR_IDLE_CLOSE_MS - deps.clock.now();
  /**
   * How the hold ends without handing work over, if it does now: the idle close (the closing
   * query) or the end of the hold (""). Null while it goes on.
   */
  const ending = async (): Promise<string | null> => {
    if (idleLeftMs() <= 0) {
      // Idle too long: end cleanly. Its answer is acknowledged with 100 (receiveResponseXML).
      await updateSession(deps.db, session.ticket_hash, { closing_query_sent: true, last_error: null });
      ctx.quiet.forget(session.ticket_hash);
      return closingQueryDocument(version);
    }
    if (holdUntil - ctx.holdClock.now() > 0 && !ctx.shutdown.aborted) return null;
    // An empty answer makes the connector ask getLastError, which must say NoOp. Written only
    // when there is something to clear: an idle session ends a hold every hold period.
    if (session.last_error !== null) {
      await updateSession(deps.db, session.ticket_hash, { last_error: null });
      session = { ...session, last_error: null };
      tracked.session = session;
    }
    return "";
  };
  for (;;) {
    // A connector that hung up must not be handed work it can never answer; its session is over.
    if (callerGone.aborted) {
      await closeSession(deps, session, "The connector hung up", TEXTS.hungUp);
      return over();
    }
    // Only a timer ended the last wait: the hold may be over before another wait is set up.
    if (timerOnly) {
      timerOnly = false;
      const end = await ending();
      if (end !== null) return end;
    }
    // Listen before looking, so a request created between the look and the wait still wakes us.
    const stop = new AbortController();
    const onEnded = (): void => stop.abort(WAIT_OVER);
    callEnded.addEventListener("abort", onEnded, { once: true });
    const woke = deps.store.notifier.wait(connectionChannel(session.connection_id), stop.signal);
    try {
      let work: NextWork = null;
      if (mustLook || !ctx.quiet.isQuiet(tracked)) {
        const changes = tracked.changes;
        work = await nextWork(
          deps,
          session.connection_id,
          session.ticket_hash,
          version,
          false,
          unread ? deps.instanceId : undefined,
        );
        mustLook = false;
        if (work === null && unread) {
          const fresh = await findSession(deps.db, session.ticket_hash);
          if (!fresh || fresh.state !== "open") return over();
          session = fresh;
          tracked.session = fresh;
        }
        unread = false;
        if (work?.kind === "recovery") {
          ctx.quiet.forget(session.ticket_hash);
          return recoveryQueryDocument(work.messageSetId, version);
        }
        if (work?.kind === "request") {
          ctx.quiet.forget(session.ticket_hash);
          return work.xml;
        }
        if (work?.kind === "quiet") ctx.quiet.markQuiet(tracked, changes);
        else ctx.quiet.markBusy(tracked);
      }
      const end = await ending();
      if (end !== null) return end;
      const now = deps.clock.now();
      const idleLeft = idleLeftMs();
      const holdLeft = holdUntil - ctx.holdClock.now();
      await Promise.race([
        woke,
        // A write held back by the spacing of writes to one record is sent when it ends.
        deps.clock.sleep(
          work?.kind === "spaced" ? Math.min(idleLeft, work.untilMs - now) : idleLeft,
          stop.signal,
        ),
        ctx.holdClock.sleep(holdLeft, stop.signal),
      ]);
      // Only a timer ended the wait and nothing woke the connection: the session is as it was.
      if (!callerGone.aborted && ctx.quiet.isQuiet(tracked)) {
        timerOnly = true;
        continue;
      }
      if (callerGone.aborted) {
        const fresh = await findSession(deps.db, session.ticket_hash);
        if (fresh?.state === "open") await closeSession(deps, fresh, "The connector hung up", TEXTS.hungUp);
        return over();
      }
      unread = true;
    } finally {
      stop.abort(WAIT_OVER);
      callEnded.removeEventListener("abort", onEnded);
    }
  }
}

export async function receiveResponseXML(
  ctx: ConnectorContext,
  ticket: string,
  response: string,
  hresult: string,
  message: string,
): Promise<number> {
  const { deps } = ctx;
  ctx.quiet.forget(hashSecret(ticket));
  const found = await findSessionWithInFlight(deps.db, hashSecret(ticket));
  const session = await keepAlive(deps, found?.session ?? null);
  if (!session) return SESSION_ENDED;
  const failed = isFailureHResult(hresult);
  if (session.recovery_message_set_id) return recoveryAnswered(deps, session, response, failed, hresult);
  const inFlight = found?.inFlight ?? null;
  if (inFlight) {
    await completeFromAnswer(
      deps,
      inFlight,
      { responseXml: response, hresult, message },
      session.ticket_hash,
    );
    if (!failed) {
      // The connector asks for the next request now: it is claimed without reading the session again.
      ctx.quiet.noteAnswered({ ...session, last_work_at: new Date(deps.clock.now()) });
      return PROGRESS;
    }
    // The application failed instead of answering: the end user is told why, and the session stops.
    // The connection's status is left to the next check-in, which opens the company file again
    // (a dialog closed meanwhile is then no obstacle): waiting callers are not failed here.
    const error = errorForHResult(hresult, message);
    await updateSession(deps.db, session.ticket_hash, { last_error: failureText(error, hresult) });
    return APPLICATION_FAILED;
  }
  if (session.closing_query_sent) return closingQueryAnswered(deps, session);
  await updateSession(deps.db, session.ticket_hash, { last_error: TEXTS.unexpectedAnswer });
  return UNEXPECTED_ANSWER;
}

/** The text shown for an application failure: the error's end-user message and the HRESULT. */
function failureText(error: ServiceError, hresult: string): string {
  return `${error.userFacingMessage} (${hresult.trim()})`;
}

/**
 * The answer to a write-recovery query resolves the write, unless it proves nothing (a failure or
 * an unreadable answer): then the write stays `outcome_unknown`, the session stops, and the next
 * session asks again, so a broken answer can never make a write look unapplied.
 */
async function recoveryAnswered(
  deps: Deps,
  session: ConnectorSessionRow,
  response: string,
  failed: boolean,
  hresult: string,
): Promise<number> {
  const now = new Date(deps.clock.now());
  let unresolved = failed;
  if (!failed) {
    // Read once, whatever number of writes the message set ID resolves.
    const answer = readAnswer(response);
    for (const row of await pendingRecoveries(deps.db, session.connection_id)) {
      if (row.message_set_id !== session.recovery_message_set_id) continue;
      if ((await resolveRecovery(deps, row, answer, session.ticket_hash)) === "unresolved") unresolved = true;
    }
  }
  const lastError = !unresolved
    ? null
    : failed
      ? failureText(errorForHResult(hresult, ""), hresult)
      : TEXTS.unreadableRecovery;
  await updateSession(deps.db, session.ticket_hash, {
    recovery_message_set_id: null,
    last_work_at: now,
    ...(lastError === null ? {} : { last_error: lastError }),
  });
  return unresolved ? APPLICATION_FAILED : PROGRESS;
}

/**
 * The closing query was answered: with nothing queued the session ends cleanly (100); work that
 * arrived meanwhile keeps it going.
 */
async function closingQueryAnswered(deps: Deps, session: ConnectorSessionRow): Promise<number> {
  const now = new Date(deps.clock.now());
  const queued = await waitingRequests(deps.db, session.connection_id, ["queued"]);
  const recoveries = await pendingRecoveries(deps.db, session.connection_id);
  if (queued.length > 0 || recoveries.length > 0) {
    await updateSession(deps.db, session.ticket_hash, { closing_query_sent: false, last_work_at: now });
    return PROGRESS;
  }
  await updateSession(deps.db, session.ticket_hash, {
    closing_query_sent: false,
    state: "closed",
    closed_at: now,
    last_error: null,
  });
  return DONE;
}

export async function connectionError(
  ctx: ConnectorContext,
  ticket: string,
  hresult: string,
  message: string,
): Promise<string> {
  const { deps } = ctx;
  ctx.quiet.forget(hashSecret(ticket));
  const session = await keepAlive(deps, await findSession(deps.db, hashSecret(ticket)));
  if (!session) return "done";
  const connection = await findConnectionById(deps.db, session.connection_id);
  const failures = session.connection_errors + 1;
  const error = errorForHResult(hresult, message);
  const answer = connection ? connectionErrorAnswer(connection, hresult, failures) : "done";
  if (answer !== "done") {
    // Another path may work: the connection keeps its status until the outcome is known.
    await updateSession(deps.db, session.ticket_hash, { connection_errors: failures });
    await touchConnection(deps.db, session.connection_id, { last_connection_error_code: hresult.trim() });
    return answer;
  }
  if (connection) {
    const status = mappingForHResult(hresult).connectionStatus ?? "ledger_unavailable";
    await markUnavailable(deps, connection, status, error, hresult.trim());
  }
  await closeSession(
    deps,
    { ...session, connection_errors: failures },
    "The connector could not reach the application",
    failureText(error, hresult),
  );
  return "done";
}

/**
 * The connector hung up while (or right after) a request was handed over: the hand-over may not
 * have arrived. The session ends and its in-flight request is interrupted (a read fails retryably,
 * a write goes to recovery), never re-sent blindly.
 */
export async function connectorHungUp(ctx: ConnectorContext, ticket: string): Promise<void> {
  ctx.quiet.forget(hashSecret(ticket));
  const session = await findSession(ctx.deps.db, hashSecret(ticket));
  if (session && session.state === "open")
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
  if (session.state !== "open") {
    await noteReplacedTicket(deps, session);
    return session.last_error ?? TEXTS.ended;
  }
  const live = await keepAlive(deps, session);
  if (!live) return TEXTS.expired;
  return live.last_error ?? NOOP;
}

/** Ends the session; answers the text the connector shows in its status column. */
export async function closeConnection(ctx: ConnectorContext, ticket: string): Promise<string> {
  const { deps } = ctx;
  ctx.quiet.forget(hashSecret(ticket));
  const session = await findSession(deps.db, hashSecret(ticket));
  if (!session) return TEXTS.unknownTicket;
  if (session.state === "open")
    await closeSession(deps, session, "The connector closed the session before answering", null);
  else await noteReplacedTicket(deps, session);
  return session.last_error ?? "OK";
}
