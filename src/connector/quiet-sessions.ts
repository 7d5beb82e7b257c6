import { systemClock } from "../platform/clock.ts";
import type { Notifier } from "../store/notifier.ts";
import type { ConnectorSessionRow } from "../store/connector-sessions.ts";
import { connectionChannel } from "../requests/engine.ts";

/**
 * One connector session this instance serves, as it last knew it (decision 0023).
 * `changes` counts the wake-ups on its connection's channel since it was tracked; `quietAt` is the
 * count at the last look at the store that found nothing for the connection (no request in any
 * unsettled status). The session is quiet while the two are equal: nothing has happened since.
 */
export interface TrackedSession {
  session: ConnectorSessionRow;
  changes: number;
  quietAt: number | null;
  /** Real time of the last call that used it (entries of connectors that stopped calling are dropped). */
  usedAt: number;
  stop: () => void;
}

/**
 * The sessions whose connector re-asks with nothing to do, known from memory so that a re-ask
 * (`sendRequestXML` after an empty hold, `getLastError` after it) touches no store. Each tracked
 * session listens on its connection's channel for as long as it is tracked, between holds too:
 * everything that can give a quiet connection work (a new Request, a Request moved back to
 * `queued`, a session closed or taken by another instance, an instance recovery) notifies that
 * channel, from this instance or through PostgreSQL's NOTIFY from another one, and any such
 * wake-up makes the next call look at the store again. While the notifier cannot deliver (its
 * LISTEN connection is down) nothing counts as quiet.
 */
/** Answered sessions kept at most (a connector that stopped calling leaves one behind). */
const MAX_ANSWERED = 10_000;

export class QuietSessions {
  private readonly tracked = new Map<string, TrackedSession>();
  /** The ticket tracked for each connection: a connection has one open session at a time. */
  private readonly byConnection = new Map<string, string>();
  /**
   * Sessions whose answer this instance just took (receiveResponseXML, more to come): the
   * connector's next sendRequestXML claims its next request without reading the session first
   * (decision 0027). Taken once; the claim itself checks the session is still open here.
   */
  private readonly answered = new Map<string, ConnectorSessionRow>();

  constructor(
    private readonly notifier: Notifier,
    private readonly realNow: () => number = () => systemClock.now(),
  ) {}

  /** The tracked session, if it is quiet and the notifier delivers. */
  quiet(ticketHash: string): TrackedSession | null {
    const entry = this.tracked.get(ticketHash);
    if (!entry || entry.quietAt !== entry.changes || !this.notifier.delivering) return null;
    entry.usedAt = this.realNow();
    return entry;
  }

  /**
   * Tracks `session` (listening on its connection from now on), or refreshes what is known of it.
   * An older session of the same connection is forgotten: a newer check-in closed it.
   */
  track(session: ConnectorSessionRow): TrackedSession {
    const known = this.tracked.get(session.ticket_hash);
    if (known) {
      known.session = session;
      known.usedAt = this.realNow();
      return known;
    }
    const older = this.byConnection.get(session.connection_id);
    if (older !== undefined) this.forget(older);
    const entry: TrackedSession = {
      session,
      changes: 0,
      quietAt: null,
      usedAt: this.realNow(),
      stop: () => undefined,
    };
    entry.stop = this.notifier.listen(connectionChannel(session.connection_id), () => {
      entry.changes += 1;
    });
    this.tracked.set(session.ticket_hash, entry);
    this.byConnection.set(session.connection_id, session.ticket_hash);
    return entry;
  }

  /** The look at the store that started at wake-up count `changesBefore` found nothing to do. */
  markQuiet(entry: TrackedSession, changesBefore: number): void {
    entry.quietAt = changesBefore;
  }

  /** The last look found something unsettled: the next call looks again. */
  markBusy(entry: TrackedSession): void {
    entry.quietAt = null;
  }

  /** Whether nothing woke the session's connection since it was found quiet. */
  isQuiet(entry: TrackedSession): boolean {
    return entry.quietAt === entry.changes && this.notifier.delivering;
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
    const entry = this.tracked.get(ticketHash);
    if (!entry) return;
    entry.stop();
    this.tracked.delete(ticketHash);
    if (this.byConnection.get(entry.session.connection_id) === ticketHash)
      this.byConnection.delete(entry.session.connection_id);
  }

  /** Drops the sessions no call used for `unusedMs` (real time): their connector stopped calling. */
  prune(unusedMs: number): void {
    const before = this.realNow() - unusedMs;
    for (const [hash, entry] of this.tracked) if (entry.usedAt < before) this.forget(hash);
  }

  clear(): void {
    this.answered.clear();
    for (const hash of [...this.tracked.keys()]) this.forget(hash);
  }

  get size(): number {
    return this.tracked.size;
  }
}
