import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { statusChangesFrom, type StatusChangeRow } from "../store/connection-history.ts";
import { findConnectionForEndUser, type ConnectionRow } from "../store/connections.ts";
import { findEndUser } from "../store/end-users.ts";
import type { Tenant } from "../store/tenant.ts";
import { GOES_OFFLINE_WHEN_SILENT, effectiveStatus, type Seen } from "./seen.ts";

/**
 * A connection's status history and availability (issue 18, decision 0028), read from the rows the
 * status machine writes with every change of `status` (store/connection-events.ts).
 *
 * The availability strip is the window's time cut into segments by state:
 *
 * | state | connection statuses | what the connector's evidence said |
 * |---|---|---|
 * | `online` | online | it checks in and the application answers with the adopted company file |
 * | `offline` | offline | no SOAP call for `CONNECTION_OFFLINE_AFTER_MS` |
 * | `ledger_unavailable` | ledger_unavailable, company_file_mismatch | it checks in but the application (or the right file) is not there |
 * | `not_set_up` | pending_setup | it never checked in |
 * | `disabled` | disabled | an operator disabled it |
 *
 * The state at the window's start is the `previousStatus` of the first change inside it (or, with
 * no change inside it, the status now); the window never starts before the connection existed or
 * before the kept history (`CONNECTION_HISTORY_RETENTION_MS`). A silence the sweep has not stored
 * yet counts from where the status read by the API counts it (last seen + the offline window).
 */
export const AVAILABILITY_STATES = [
  "online",
  "offline",
  "ledger_unavailable",
  "not_set_up",
  "disabled",
] as const;
export type AvailabilityState = (typeof AVAILABILITY_STATES)[number];

const STATE_OF: Readonly<Record<string, AvailabilityState>> = {
  online: "online",
  offline: "offline",
  ledger_unavailable: "ledger_unavailable",
  company_file_mismatch: "ledger_unavailable",
  pending_setup: "not_set_up",
  disabled: "disabled",
};

/** The availability state of a connection status (an unknown status counts as unavailable). */
export function availabilityState(status: string): AvailabilityState {
  return STATE_OF[status] ?? "ledger_unavailable";
}

export interface AvailabilitySegment {
  state: AvailabilityState;
  fromMs: number;
  toMs: number;
}

export interface StatusChangeInput {
  previousStatus: string;
  status: string;
  atMs: number;
}

/**
 * The window `[fromMs, toMs]` cut into segments of one state each (adjacent segments of one state
 * are joined), from the changes inside it (oldest first) and the status at `toMs`.
 */
export function availabilitySegments(
  fromMs: number,
  toMs: number,
  changes: readonly StatusChangeInput[],
  statusNow: string,
): AvailabilitySegment[] {
  // Before the first change inside the window the connection was in that change's previous status;
  // with none inside, it was in the status it has now all along.
  const inside = changes.filter((c) => c.atMs >= fromMs && c.atMs <= toMs);
  const segments: AvailabilitySegment[] = [];
  const push = (state: AvailabilityState, start: number, end: number): void => {
    if (end <= start) return;
    const last = segments[segments.length - 1];
    if (last && last.state === state && last.toMs === start) last.toMs = end;
    else segments.push({ state, fromMs: start, toMs: end });
  };
  let state = availabilityState(inside[0]?.previousStatus ?? statusNow);
  let start = fromMs;
  for (const change of inside) {
    push(state, start, change.atMs);
    state = availabilityState(change.status);
    start = change.atMs;
  }
  push(state, start, toMs);
  return segments;
}

/** Seconds spent in each state over the segments (every state present, 0 when absent). */
export function secondsByState(segments: readonly AvailabilitySegment[]): Record<AvailabilityState, number> {
  const seconds = Object.fromEntries(AVAILABILITY_STATES.map((s) => [s, 0])) as Record<
    AvailabilityState,
    number
  >;
  for (const s of segments) seconds[s.state] += Math.round((s.toMs - s.fromMs) / 1000);
  return seconds;
}

export interface ConnectionHistoryResource {
  objectType: "connection_history";
  endUserId: string;
  /** Null when the end user has no connection yet. */
  connectionId: string | null;
  from: string;
  to: string;
  /** The connection's status now, as the end user resource shows it. */
  status: string | null;
  /** The changes inside the window, newest first (at most `limit`). */
  changes: Array<{ previousStatus: string; status: string; statusReason: string | null; changedAt: string }>;
  hasMoreChanges: boolean;
  availability: {
    segments: Array<{ state: AvailabilityState; from: string; to: string }>;
    seconds: Record<AvailabilityState, number>;
  };
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * The status history of the silence the sweep has not stored yet: a connection the API reads as
 * offline while its stored status is still one that silence ends gets that change at the moment
 * the offline window closed (the sweep stores it at its next run).
 */
function unstoredSilence(
  row: Seen<ConnectionRow>,
  nowMs: number,
  offlineAfterMs: number,
): StatusChangeInput | null {
  const stored = row.status;
  if (!(GOES_OFFLINE_WHEN_SILENT as readonly string[]).includes(stored)) return null;
  if (effectiveStatus(row, nowMs, offlineAfterMs) !== "offline" || row.last_seen_at === null) return null;
  return { previousStatus: stored, status: "offline", atMs: row.last_seen_at.getTime() + offlineAfterMs };
}

/** `GET /v1/end-users/{id}/connection-history`: the last `days` days of the end user's connection. */
export async function connectionHistory(
  deps: Deps,
  tenant: Tenant,
  endUserId: string,
  query: { days: number; limit: number },
): Promise<ConnectionHistoryResource> {
  const endUser = await findEndUser(deps.db, tenant, endUserId);
  if (!endUser) throw new ServiceError("RESOURCE_MISSING", { param: "id", message: "No such end user." });
  const nowMs = deps.clock.now();
  const stored = await findConnectionForEndUser(deps.db, tenant.projectId, endUserId);
  const connection = stored ? deps.activity.connection(stored) : null;
  const windowStart = nowMs - Math.min(query.days * DAY_MS, deps.config.CONNECTION_HISTORY_RETENTION_MS);
  const fromMs = Math.max(windowStart, connection?.created_at.getTime() ?? nowMs);
  const empty: ConnectionHistoryResource = {
    objectType: "connection_history",
    endUserId,
    connectionId: null,
    from: new Date(fromMs).toISOString(),
    to: new Date(nowMs).toISOString(),
    status: null,
    changes: [],
    hasMoreChanges: false,
    availability: { segments: [], seconds: secondsByState([]) },
  };
  if (!connection) return empty;
  const offlineAfterMs = deps.config.CONNECTION_OFFLINE_AFTER_MS;
  const rows: StatusChangeRow[] = await statusChangesFrom(deps.db, connection.id, new Date(fromMs));
  const changes: StatusChangeInput[] = rows.map((r) => ({
    previousStatus: r.previous_status,
    status: r.status,
    atMs: r.changed_at.getTime(),
  }));
  const silence = unstoredSilence(connection, nowMs, offlineAfterMs);
  if (silence && silence.atMs >= fromMs) changes.push(silence);
  const statusNow = effectiveStatus(connection, nowMs, offlineAfterMs);
  const segments = availabilitySegments(fromMs, nowMs, changes, statusNow);
  const newestFirst = [...rows].reverse();
  return {
    ...empty,
    connectionId: connection.id,
    status: statusNow,
    changes: newestFirst.slice(0, query.limit).map((r) => ({
      previousStatus: r.previous_status,
      status: r.status,
      statusReason: r.status_reason,
      changedAt: r.changed_at.toISOString(),
    })),
    hasMoreChanges: newestFirst.length > query.limit,
    availability: {
      segments: segments.map((s) => ({
        state: s.state,
        from: new Date(s.fromMs).toISOString(),
        to: new Date(s.toMs).toISOString(),
      })),
      seconds: secondsByState(segments),
    },
  };
}
