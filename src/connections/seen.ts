import type { Seen } from "../store/activity-stamps.ts";
import type { ConnectionRow } from "../store/connections.ts";

/**
 * When a connection's connector was last seen, and what follows from it (decision 0023): the
 * stamps of its calls are written in batches, so a stored `last_seen_at` may be seconds old on the
 * instance that took the calls. Every rule reads it from a {@link Seen} row —
 * `deps.activity.connection(row)`, which applies this instance's unwritten stamps — through the
 * functions here; nothing else reads the column (the lint says so).
 */
export type { Seen } from "../store/activity-stamps.ts";

type Sighted = Seen<Pick<ConnectionRow, "last_seen_at">>;

/** The statuses silence moves to `offline` (`disabled → offline` is an operator's, not silence's). */
export const GOES_OFFLINE_WHEN_SILENT = ["online", "ledger_unavailable", "company_file_mismatch"] as const;

/** The connector's last call, or null when it never called. */
export function lastSeenAt(connection: Sighted): Date | null {
  return connection.last_seen_at;
}

/**
 * Whether the connector has been silent (no SOAP call) for longer than the offline window at
 * `nowMs`. A connection never seen is not silent: it is not set up yet.
 */
export function isSilent(connection: Sighted, nowMs: number, offlineAfterMs: number): boolean {
  return connection.last_seen_at !== null && nowMs - connection.last_seen_at.getTime() > offlineAfterMs;
}

/**
 * `offline` is derived at read time as well as stored: a connection whose connector has not been
 * seen within the offline window reads as offline before the sweep stores it (the statuses that
 * may go offline are those of the status machine).
 */
export function effectiveStatus(
  connection: Seen<Pick<ConnectionRow, "status" | "last_seen_at">>,
  nowMs: number,
  offlineAfterMs: number,
): string {
  if ((GOES_OFFLINE_WHEN_SILENT as readonly string[]).includes(connection.status)) {
    const seen = connection.last_seen_at?.getTime() ?? 0;
    if (nowMs - seen > offlineAfterMs) return "offline";
  }
  return connection.status;
}

/**
 * How long the connector had been silent before a check-in at `nowMs`: the schedule it runs on,
 * as observed (diagnosis compares it with the `.qwc` interval). Null when it was never seen; capped
 * to fit the column.
 */
export function checkInGapMs(connection: Sighted, nowMs: number): number | null {
  if (!connection.last_seen_at) return null;
  return Math.min(Math.max(0, nowMs - connection.last_seen_at.getTime()), 2_147_483_647);
}
