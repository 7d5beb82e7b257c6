import type { Logger } from "pino";
import type { ConnectionRow } from "./connections.ts";
import { writeActivityStamps, type ActivityStamp } from "./connector-sessions.ts";
import type { Db } from "./database.ts";

/**
 * How often the activity stamps of connector calls are written (one statement for all of them).
 * A stamp in the store is at most this much older than the call it records, plus the time of a
 * write that failed and is retried at the next flush. Readers on this instance see the stamp at
 * once ({@link ActivityStamps.connection}, {@link ActivityStamps.sessionSeenAt}); readers on
 * another instance see it within this window. Both stamps feed rules counted in minutes (the
 * offline window, 3 min by default; the ticket TTL, 30 min), so seconds of delay change nothing.
 */
export const ACTIVITY_FLUSH_MS = 5000;

declare const seenBrand: unique symbol;

/**
 * A connection row whose `last_seen_at` has this instance's unwritten stamps applied
 * ({@link ActivityStamps.connection}): the only kind of row whose `last_seen_at` the service reads
 * (connections/seen.ts; the lint forbids reading it elsewhere).
 */
export type Seen<T extends Pick<ConnectionRow, "last_seen_at">> = T & { readonly [seenBrand]: true };

/**
 * The activity stamps of connector calls (a session's `last_activity_at`, its connection's
 * `last_seen_at`), kept in memory and written in batches (decision 0023). Before, every call of
 * every session wrote its stamps: with thousands of idle sessions re-asking each hold period,
 * that was one write per session per cycle. The check-in (`authenticate`) still writes its stamps
 * at once: it decides the connection's status.
 *
 * A stamp lost with a crashed instance is at most {@link ACTIVITY_FLUSH_MS} of activity: the
 * connector is then seen a little earlier than it was, never later.
 */
export class ActivityStamps {
  private pending = new Map<string, ActivityStamp>();
  private seen = new Map<string, Date>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  /** `flushMs`: how often {@link start} writes (tests that count statements write by hand). */
  constructor(private readonly flushMs = ACTIVITY_FLUSH_MS) {}

  /** A connector call on `ticketHash`'s session at `atMs` (clock time). */
  note(ticketHash: string, connectionId: string, atMs: number): void {
    const at = new Date(atMs);
    this.pending.set(ticketHash, { ticketHash, connectionId, at });
    const seen = this.seen.get(connectionId);
    if (!seen || seen < at) this.seen.set(connectionId, at);
  }

  /** The session's last activity noted here and not yet written, if any. */
  sessionSeenAt(ticketHash: string): Date | null {
    return this.pending.get(ticketHash)?.at ?? null;
  }

  /** The connection row with this instance's unwritten `last_seen_at` applied (reads stay exact here). */
  connection<T extends Pick<ConnectionRow, "id" | "last_seen_at">>(row: T): Seen<T> {
    const seen = this.seen.get(row.id);
    if (!seen || (row.last_seen_at !== null && row.last_seen_at >= seen)) return row as Seen<T>;
    return { ...row, last_seen_at: seen } as Seen<T>;
  }

  /** How many stamps wait to be written. */
  get size(): number {
    return this.pending.size;
  }

  /**
   * Writes every noted stamp in one statement. The stamps stay visible to this instance's readers
   * until the write is done; a failed write (the store does not answer) keeps them for the next flush.
   */
  async flush(db: Db): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    const seen = [...this.seen];
    this.flushing = writeActivityStamps(db, batch).finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
    // Written: forget what was written, unless a newer call noted a later stamp meanwhile.
    for (const stamp of batch)
      if (this.pending.get(stamp.ticketHash) === stamp) this.pending.delete(stamp.ticketHash);
    for (const [id, at] of seen) if (this.seen.get(id) === at) this.seen.delete(id);
  }

  /** Flushes every `flushMs` (real time, {@link ACTIVITY_FLUSH_MS} by default) until {@link stop}. */
  start(db: Db, logger: Logger): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.flush(db).catch((error: unknown) =>
        logger.warn({ err: error, pending: this.pending.size }, "activity stamps not written; retrying"),
      );
    }, this.flushMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is left. */
  async stop(db: Db): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush(db);
  }
}
