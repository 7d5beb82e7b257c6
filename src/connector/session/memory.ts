import { systemClock } from "../../platform/clock.ts";
import type { Notifier } from "../../store/notifier.ts";
import type { ConnectorSessionRow } from "../../store/connector-sessions.ts";
import { connectionChannel } from "../../requests/engine.ts";

/**
 * What this instance knows of the connector sessions whose calls it holds, in one object (issue
 * 24; decisions 0023, 0027): the state the store does not keep because it changes with every call.
 *
 * - A session found quiet — a look at the store found nothing for its connection — is remembered
 *   with the count of wake-ups on its connection's channel at that look. While nothing has woken
 *   the channel since, the connector's re-ask (`sendRequestXML` after an empty hold, `getLastError`
 *   after it) is answered from memory and touches no store. Everything that can give a quiet
 *   connection work (a new Request, one moved back to `queued`, a session closed or taken by
 *   another instance, an instance recovery) notifies that channel, from this instance or through
 *   PostgreSQL's NOTIFY from another one. While the notifier cannot deliver, nothing is quiet.
 * - A session whose answer this instance just took (receiveResponseXML, more to come) is noted, so
 *   that the connector's next `sendRequestXML` claims without reading the session first.
 * - A held `sendRequestXML` keeps its own flags ({@link HoldFlags}); the decisions on them are the
 *   pure steps below, tested without a store (memory.test.ts).
 */
export interface RememberedSession {
  session: ConnectorSessionRow;
  /** Wake-ups on the connection's channel since the session was remembered. */
  changes: number;
  /** `changes` at the last look that found nothing for the connection; null when it found something. */
  quietAt: number | null;
  /** Real time of the last call that used it (entries of connectors that stopped calling are dropped). */
  usedAt: number;
  stop: () => void;
}

/** Whether nothing woke the remembered session's connection since it was found quiet. */
export function isQuiet(entry: Pick<RememberedSession, "changes" | "quietAt">, delivering: boolean): boolean {
  return delivering && entry.quietAt === entry.changes;
}

/** The look that started at wake-up count `changesBefore` found nothing to do. */
export function markQuiet(entry: Pick<RememberedSession, "quietAt">, changesBefore: number): void {
  entry.quietAt = changesBefore;
}

/** The last look found something unsettled: the next call looks again. */
export function markBusy(entry: Pick<RememberedSession, "quietAt">): void {
  entry.quietAt = null;
}

/** Answered sessions kept at most (a connector that stopped calling leaves one behind). */
const MAX_ANSWERED = 10_000;

export class SessionMemory {
  private readonly remembered = new Map<string, RememberedSession>();
  /** The ticket remembered for each connection: a connection has one open session at a time. */
  private readonly byConnection = new Map<string, string>();
  /** Sessions whose answer this instance just took (see {@link takeAnswered}). */
  private readonly answered = new Map<string, ConnectorSessionRow>();

  constructor(
    private readonly notifier: Notifier,
    private readonly realNow: () => number = () => systemClock.now(),
  ) {}

  /** The remembered session, if it is quiet and the notifier delivers. */
  quiet(ticketHash: string): RememberedSession | null {
    const entry = this.remembered.get(ticketHash);
    if (!entry || !isQuiet(entry, this.notifier.delivering)) return null;
    entry.usedAt = this.realNow();
    return entry;
  }

  /** Whether nothing woke `entry`'s connection since it was found quiet (and the notifier delivers). */
  isQuiet(entry: RememberedSession): boolean {
    return isQuiet(entry, this.notifier.delivering);
  }

  /**
   * Remembers `session` (listening on its connection from now on), or refreshes what is known of
   * it. An older session of the same connection is forgotten: a newer check-in closed it.
   */
  track(session: ConnectorSessionRow): RememberedSession {
    const known = this.remembered.get(session.ticket_hash);
    if (known) {
      known.session = session;
      known.usedAt = this.realNow();
      return known;
    }
    const older = this.byConnection.get(session.connection_id);
    if (older !== undefined) this.forget(older);
    const entry: RememberedSession = {
      session,
      changes: 0,
      quietAt: null,
      usedAt: this.realNow(),
      stop: () => undefined,
    };
    entry.stop = this.notifier.listen(connectionChannel(session.connection_id), () => {
      entry.changes += 1;
    });
    this.remembered.set(session.ticket_hash, entry);
    this.byConnection.set(session.connection_id, session.ticket_hash);
    return entry;
  }

  /** Keeps what is known of `session` right after its answer was taken (see {@link takeAnswered}). */
  noteAnswered(session: ConnectorSessionRow): void {
    if (this.answered.size >= MAX_ANSWERED) {
      const oldest = this.answered.keys().next();
      if (!oldest.done) this.answered.delete(oldest.value);
    }
    this.answered.set(session.ticket_hash, session);
  }

  /** The session noted by {@link noteAnswered}, once; null when none (or it was forgotten since). */
  takeAnswered(ticketHash: string): ConnectorSessionRow | null {
    const session = this.answered.get(ticketHash) ?? null;
    this.answered.delete(ticketHash);
    return session;
  }

  forget(ticketHash: string): void {
    this.answered.delete(ticketHash);
    const entry = this.remembered.get(ticketHash);
    if (!entry) return;
    entry.stop();
    this.remembered.delete(ticketHash);
    if (this.byConnection.get(entry.session.connection_id) === ticketHash)
      this.byConnection.delete(entry.session.connection_id);
  }

  /** Drops the sessions no call used for `unusedMs` (real time): their connector stopped calling. */
  prune(unusedMs: number): void {
    const before = this.realNow() - unusedMs;
    for (const [hash, entry] of this.remembered) if (entry.usedAt < before) this.forget(hash);
  }

  clear(): void {
    this.answered.clear();
    for (const hash of [...this.remembered.keys()]) this.forget(hash);
  }

  get size(): number {
    return this.remembered.size;
  }
}

/**
 * The flags of one held `sendRequestXML` (session/hold.ts): whether its next turn must look at the
 * store whatever the memory says, whether the session row it holds may be out of date (a wake-up
 * came; the claim checks the session itself, decision 0027), and whether only a timer ended its last
 * wait (then it may be over before another wait is set up, decision 0030).
 */
export interface HoldFlags {
  mustLook: boolean;
  unread: boolean;
  timerOnly: boolean;
}

/** A hold's flags when it starts: a quiet re-ask does not look first (decision 0023). */
export function holdStarts(look: boolean): HoldFlags {
  return { mustLook: look, unread: false, timerOnly: false };
}

/** Whether this turn of the hold looks at the store for work. */
export function looksNow(flags: HoldFlags, quiet: boolean): boolean {
  return flags.mustLook || !quiet;
}

/** After a look: the next turn looks only when something wakes the connection. */
export function looked(flags: HoldFlags): HoldFlags {
  return { ...flags, mustLook: false, unread: false };
}

/** What ended a wait of the hold, and what its next turn does. */
export type AfterWait = "hung_up" | "timer_only" | "woken";

/**
 * After a wait: the connector hung up (the session ends), only a timer ended it and nothing woke
 * the connection (the next turn may end the hold before waiting again, with no look), or a wake-up
 * came (the next turn looks, the session row possibly out of date).
 */
export function afterWait(flags: HoldFlags, callerGone: boolean, quiet: boolean): [AfterWait, HoldFlags] {
  if (!callerGone && quiet) return ["timer_only", { ...flags, timerOnly: true }];
  if (callerGone) return ["hung_up", flags];
  return ["woken", { ...flags, unread: true }];
}

/** How a hold ends without handing work over, if it does now. */
export type HoldEnding = "close_idle" | "end" | null;

/**
 * The hold ends with the closing query when the session has been idle for the idle close (its
 * answer is acknowledged with 100), with "" (NoOp) when the hold's time is up or the service stops,
 * and goes on otherwise.
 */
export function holdEnding(idleLeftMs: number, holdLeftMs: number, shuttingDown: boolean): HoldEnding {
  if (idleLeftMs <= 0) return "close_idle";
  return holdLeftMs > 0 && !shuttingDown ? null : "end";
}

/**
 * How long the hold waits on the service clock before it looks again by itself: until the idle
 * close, or sooner when a write to a record must be spaced from its last one (`spacedUntilMs`).
 */
export function serviceClockWaitMs(idleLeftMs: number, nowMs: number, spacedUntilMs: number | null): number {
  return spacedUntilMs === null ? idleLeftMs : Math.min(idleLeftMs, spacedUntilMs - nowMs);
}
