import { closingQueryDocument, recoveryQueryDocument } from "../../ledger/xml/message-set.ts";
import { connectionChannel, nextWork, type NextWork } from "../../requests/engine.ts";
import { findSession, type ConnectorSessionRow } from "../../store/connector-sessions.ts";
import { TEXTS, type ConnectorContext } from "./context.ts";
import { closeSession } from "./live.ts";
import {
  afterWait,
  holdEnding,
  holdStarts,
  looked,
  looksNow,
  markBusy,
  markQuiet,
  serviceClockWaitMs,
} from "./memory.ts";
import { isOpen, moveSession } from "./phases.ts";

/**
 * Reasons the hold's own signals abort with: shared, so that ending a wait (every hold ends one or
 * more) does not build a DOMException with its stack trace, as `abort()` without a reason does.
 */
const CALL_ENDED = new Error("the held call ended");
const WAIT_OVER = new Error("the wait is over");

/**
 * Holds a sendRequestXML until work is handed over or `CONNECTOR_HOLD_MS` passes on the hold's
 * clock (architecture §2). `look`: the store is asked for work first (false for a quiet re-ask,
 * decision 0023).
 */
export async function hold(
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
 * The hold loop of one sendRequestXML: work is handed over, or "" (NoOp) when the hold ends. Its
 * decisions are the pure steps of session/memory.ts; this loop does what they say. The store is
 * asked for work when the call starts (unless the session is quiet) and after every wake-up on the
 * connection's channel; a hold that only waits out its timers touches no store.
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
  // Remembered from before the first look, so a wake-up during the look is counted.
  const remembered = ctx.memory.track(session);
  let flags = holdStarts(look);
  const over = (): string => {
    ctx.memory.forget(session.ticket_hash);
    return "";
  };
  /** Time left (service clock) before the idle close. */
  const idleLeftMs = (): number =>
    session.last_work_at.getTime() + deps.config.CONNECTOR_IDLE_CLOSE_MS - deps.clock.now();
  /** How the hold ends without handing work over, if it does now; null while it goes on. */
  const ending = async (): Promise<string | null> => {
    const end = holdEnding(idleLeftMs(), holdUntil - ctx.holdClock.now(), ctx.shutdown.aborted);
    if (end === null) return null;
    if (end === "close_idle") {
      // Idle too long: end cleanly. Its answer is acknowledged with 100 (receiveResponseXML).
      await moveSession(deps, session.ticket_hash, "close_idle", { last_error: null });
      ctx.memory.forget(session.ticket_hash);
      return closingQueryDocument(version);
    }
    // An empty answer makes the connector ask getLastError, which must say NoOp. Written only
    // when there is something to clear: an idle session ends a hold every hold period.
    if (session.last_error !== null) {
      await moveSession(deps, session.ticket_hash, "report", { last_error: null });
      session = { ...session, last_error: null };
      remembered.session = session;
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
    if (flags.timerOnly) {
      flags = { ...flags, timerOnly: false };
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
      if (looksNow(flags, ctx.memory.isQuiet(remembered))) {
        const changes = remembered.changes;
        // After a wake-up the session is not read before the look: the claim checks it is still
        // ready and held here (decision 0027), and it is read when the look hands nothing over.
        const unread = flags.unread;
        work = await nextWork(
          deps,
          session.connection_id,
          session.ticket_hash,
          version,
          false,
          unread ? deps.instanceId : undefined,
        );
        flags = looked(flags);
        if (work === null && unread) {
          const fresh = await findSession(deps.db, session.ticket_hash);
          if (!fresh || !isOpen(fresh)) return over();
          session = fresh;
          remembered.session = fresh;
        }
        if (work?.kind === "recovery") {
          ctx.memory.forget(session.ticket_hash);
          return recoveryQueryDocument(work.messageSetId, version);
        }
        if (work?.kind === "request") {
          ctx.memory.forget(session.ticket_hash);
          return work.xml;
        }
        if (work?.kind === "quiet") markQuiet(remembered, changes);
        else markBusy(remembered);
      }
      const end = await ending();
      if (end !== null) return end;
      const now = deps.clock.now();
      const spacedUntil = work?.kind === "spaced" ? work.untilMs : null;
      await Promise.race([
        woke,
        // A write held back by the spacing of writes to one record is sent when it ends.
        deps.clock.sleep(serviceClockWaitMs(idleLeftMs(), now, spacedUntil), stop.signal),
        ctx.holdClock.sleep(holdUntil - ctx.holdClock.now(), stop.signal),
      ]);
      const [next, after] = afterWait(flags, callerGone.aborted, ctx.memory.isQuiet(remembered));
      flags = after;
      // Only a timer ended the wait and nothing woke the connection: the session is as it was.
      if (next === "timer_only") continue;
      if (next === "hung_up") {
        const fresh = await findSession(deps.db, session.ticket_hash);
        if (fresh && isOpen(fresh)) await closeSession(deps, fresh, "The connector hung up", TEXTS.hungUp);
        return over();
      }
    } finally {
      stop.abort(WAIT_OVER);
      callEnded.removeEventListener("abort", onEnded);
    }
  }
}
