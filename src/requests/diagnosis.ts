import type { Deps } from "../deps.ts";
import { findConnectionById } from "../store/connections.ts";
import { recentSessions, type ConnectorSessionRow } from "../store/connector-sessions.ts";
import { pendingRecoveries, sentRequests, type RequestRow } from "../store/requests.ts";
import { effectiveStatus, lastSeenAt } from "../connections/seen.ts";
import { estimateCheckIn, type CheckInEstimate } from "../connections/check-in-estimate.ts";
import {
  probableCausesOf,
  summaryOf,
  waitingReasonOf,
  type Evidence,
  type ProbableCause,
} from "./probable-causes.ts";

/**
 * Why a request waits (spec: `waitingReason`, `diagnosis`), from what the connector endpoint
 * observed: the connection's status and silence, its recent sessions, the requests ahead of it.
 * Computed when the request is read while it waits or runs long; frozen into the request when it
 * times out or expires before sending (the engine stores {@link diagnose}'s answer then), and null
 * otherwise. The reasoning itself is requests/probable-causes.ts.
 */
export interface Diagnosis {
  at: string;
  summary: string;
  connector: {
    lastSeenAt: string | null;
    lastCheckInAt: string | null;
    checkInIntervalSeconds: number;
    silentForSeconds: number | null;
    sessionOpen: boolean;
    sessionOpenedAt: string | null;
    ledgerAnswered: boolean | null;
    silentSessions: number;
    lastConnectionErrorCode: string | null;
    /** When the connector is expected to check in next (null: no basis; see checkInEstimate). */
    expectedCheckInAt: string | null;
    /** How the expectation was reached and how far to trust it (connections/check-in-estimate.ts). */
    checkInEstimate: CheckInEstimate;
  };
  probableCauses: ProbableCause[];
}

export interface WaitingFacts {
  waitingReason: string | null;
  diagnosis: Diagnosis | null;
}

/** Sessions looked at for `silentSessions` (newest first). */
const RECENT_SESSIONS = 10;

const isWaiting = (status: string): boolean => status === "queued" || status === "waiting_for_connection";

/** The request's `waitingReason` and `diagnosis` as read now. */
export async function waitingFacts(
  deps: Deps,
  row: RequestRow,
  queuePosition: number | null,
): Promise<WaitingFacts> {
  const now = deps.clock.now();
  const runsLong =
    row.status === "sent" &&
    row.sent_at !== null &&
    now - row.sent_at.getTime() >= deps.config.LEDGER_ANSWER_WAIT_MS;
  if (!isWaiting(row.status) && !runsLong) return { waitingReason: null, diagnosis: storedDiagnosis(row) };
  const found = await gather(deps, row, queuePosition);
  if (!found) return { waitingReason: null, diagnosis: null };
  return { waitingReason: waitingReasonOf(found.evidence), diagnosis: build(found) };
}

/**
 * The diagnosis of a waiting request at this moment (null without a connection): what the engine
 * freezes into a request that times out or expires before it could be sent.
 */
export async function diagnose(
  deps: Deps,
  row: RequestRow,
  queuePosition: number | null,
): Promise<Diagnosis | null> {
  const found = await gather(deps, row, queuePosition);
  return found ? build(found) : null;
}

function storedDiagnosis(row: RequestRow): Diagnosis | null {
  const stored = row.diagnosis as Diagnosis | null | undefined;
  return stored ?? null;
}

interface Gathered {
  evidence: Evidence;
  lastSeenAt: Date | null;
  lastCheckInAt: Date | null;
  lastConnectionErrorCode: string | null;
  checkIn: CheckInEstimate;
}

async function gather(deps: Deps, row: RequestRow, queuePosition: number | null): Promise<Gathered | null> {
  if (!row.connection_id) return null;
  const stored = await findConnectionById(deps.db, row.connection_id);
  if (!stored) return null;
  // The connector's calls not yet written count (activity stamps, decision 0023).
  const connection = deps.activity.connection(stored);
  const now = deps.clock.now();
  const waiting = isWaiting(row.status);
  const sessions = await recentSessions(deps.db, connection.id, RECENT_SESSIONS);
  const open = sessions.find((s) => s.state === "open") ?? null;
  const recoveries = waiting ? await pendingRecoveries(deps.db, connection.id) : [];
  const ahead = waiting ? (await sentRequests(deps.db, connection.id)).filter((r) => r.id !== row.id) : [];
  const inFlight = ahead
    .map((r) => r.sent_at?.getTime() ?? null)
    .filter((t): t is number => t !== null)
    .sort((a, b) => a - b)[0];
  const evidence: Evidence = {
    nowMs: now,
    request: { waiting, queuePosition, sentAtMs: row.sent_at?.getTime() ?? null },
    status: effectiveStatus(connection, now, deps.config.CONNECTION_OFFLINE_AFTER_MS),
    storedStatus: connection.status,
    statusReason: connection.status_reason,
    retryAtMs: connection.retry_at?.getTime() ?? null,
    lastSeenAtMs: lastSeenAt(connection)?.getTime() ?? null,
    checkInGapMs: connection.check_in_gap_ms,
    sharedConnectorAtMs: connection.shared_connector_at?.getTime() ?? null,
    loginRefusedAtMs: connection.login_refused_at?.getTime() ?? null,
    sessionInterruptedAtMs: connection.session_interrupted_at?.getTime() ?? null,
    lastConnectionErrorCode: connection.last_connection_error_code,
    session: open ? { openedAtMs: open.created_at.getTime(), ledgerAnswered: open.phase !== "opened" } : null,
    silentSessions: countSilent(sessions, now, deps.config.LEDGER_ANSWER_WAIT_MS),
    inFlightSentAtMs: inFlight ?? null,
    recoveriesPending: recoveries.length,
    checkInIntervalMs: deps.config.CONNECTOR_CHECK_IN_SECONDS * 1000,
    answerWaitMs: deps.config.LEDGER_ANSWER_WAIT_MS,
  };
  return {
    evidence,
    lastSeenAt: lastSeenAt(connection),
    lastCheckInAt: connection.last_check_in_at,
    lastConnectionErrorCode: connection.last_connection_error_code,
    checkIn: estimateCheckIn({
      nowMs: now,
      checkInsMs: connection.recent_check_ins,
      sessionOpen: open !== null,
      configuredIntervalMs: evidence.checkInIntervalMs,
    }),
  };
}

/**
 * Sessions, newest first, that opened and never heard from the application: no company file
 * report (accepted or refused) and no connection error, and either closed or open past the answer wait. A session still
 * young proves nothing either way and is skipped; the first session that heard the application
 * ends the count.
 */
export function countSilent(
  sessions: readonly ConnectorSessionRow[],
  nowMs: number,
  answerWaitMs: number,
): number {
  let silent = 0;
  for (const session of sessions) {
    // A session that reached `ready` always has `ledger_answered_at` (migration 0033).
    if (session.connection_errors > 0 || session.ledger_answered_at !== null) break;
    const young = session.state === "open" && nowMs - session.created_at.getTime() <= answerWaitMs;
    if (!young) silent += 1;
  }
  return silent;
}

function build(found: Gathered): Diagnosis {
  const { evidence: e } = found;
  const causes = probableCausesOf(e);
  const seen = found.lastSeenAt;
  return {
    at: new Date(e.nowMs).toISOString(),
    summary: summaryOf(causes[0]?.code ?? "awaiting_check_in", waitingReasonOf(e)),
    connector: {
      lastSeenAt: seen?.toISOString() ?? null,
      lastCheckInAt: found.lastCheckInAt?.toISOString() ?? null,
      checkInIntervalSeconds: e.checkInIntervalMs / 1000,
      silentForSeconds: seen ? Math.max(0, Math.round((e.nowMs - seen.getTime()) / 1000)) : null,
      sessionOpen: e.session !== null,
      sessionOpenedAt: e.session ? new Date(e.session.openedAtMs).toISOString() : null,
      ledgerAnswered: e.session ? e.session.ledgerAnswered : null,
      silentSessions: e.silentSessions,
      lastConnectionErrorCode: found.lastConnectionErrorCode,
      expectedCheckInAt: found.checkIn.expectedAt,
      checkInEstimate: found.checkIn,
    },
    probableCauses: causes,
  };
}
