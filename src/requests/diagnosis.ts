import type { Deps } from "../deps.ts";
import { findConnectionById, type ConnectionRow } from "../store/connections.ts";
import { openSessions, type ConnectorSessionRow } from "../store/connector-sessions.ts";
import { pendingRecoveries, type RequestRow } from "../store/requests.ts";
import { effectiveStatus } from "../tenancy/connections.ts";

/**
 * Why a request waits (spec: `waitingReason`, `diagnosis`), computed from connector facts when the
 * request is read. Probable causes are ordered most likely first.
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
  };
  probableCauses: { code: string; retryAt?: string }[];
}

export interface WaitingFacts {
  waitingReason: string | null;
  diagnosis: Diagnosis | null;
}

const REASON_FOR_STATUS: Record<string, string> = {
  LEDGER_MODAL_DIALOG_OPEN: "ledger_not_responding",
  LEDGER_NOT_RESPONDING: "ledger_not_responding",
  LEDGER_FILE_MODE_CONFLICT: "file_mode_conflict",
  LEDGER_STARTING: "ledger_starting",
};

const CAUSE_FOR_STATUS: Record<string, string> = {
  LEDGER_MODAL_DIALOG_OPEN: "ledger_modal_dialog",
  LEDGER_CANNOT_START: "ledger_closed_no_unattended_access",
  LEDGER_STARTING: "ledger_starting",
  LEDGER_WRONG_COMPANY_FILE_OPEN: "wrong_company_file",
  LEDGER_COMPANY_FILE_MISMATCH: "wrong_company_file",
  LEDGER_FILE_MODE_CONFLICT: "file_mode_conflict",
};

export async function waitingFacts(
  deps: Deps,
  row: RequestRow,
  queuePosition: number | null,
): Promise<WaitingFacts> {
  const waiting = row.status === "queued" || row.status === "waiting_for_connection";
  const running = row.status === "sent";
  const timedOut =
    row.status === "canceled" &&
    row.sent_at === null &&
    hasCode(row, ["REQUEST_TIMEOUT_NOT_SENT", "REQUEST_EXPIRED"]);
  if ((!waiting && !running && !timedOut) || !row.connection_id)
    return { waitingReason: null, diagnosis: null };
  const connection = await findConnectionById(deps.db, row.connection_id);
  if (!connection) return { waitingReason: null, diagnosis: null };
  const sessions = await openSessions(deps.db, connection.id);
  const recoveries = waiting ? await pendingRecoveries(deps.db, connection.id) : [];
  const now = deps.clock.now();
  const status = effectiveStatus(connection, now, deps.config.CONNECTION_OFFLINE_AFTER_MS);
  const causes: { code: string; retryAt?: string }[] = [];
  let reason: string | null = null;
  if (waiting) {
    const reasonAndCauses = ((): [string, { code: string; retryAt?: string }[]] => {
      if (recoveries.length > 0) return ["write_recovery_pending", [{ code: "write_recovery_pending" }]];
      if (status === "offline")
        return ["connector_offline", [{ code: "computer_offline" }, { code: "web_connector_closed" }]];
      if (connection.status === "ledger_unavailable" && connection.status_reason) {
        const why = REASON_FOR_STATUS[connection.status_reason] ?? "ledger_unavailable";
        const cause: { code: string; retryAt?: string } = {
          code: CAUSE_FOR_STATUS[connection.status_reason] ?? "ledger_unavailable",
        };
        if (why === "file_mode_conflict" && connection.retry_at)
          cause.retryAt = connection.retry_at.toISOString();
        return [why, [cause]];
      }
      if (queuePosition !== null && queuePosition > 1)
        return ["behind_other_requests", [{ code: "behind_other_requests" }]];
      if (sessions.length === 0) return ["awaiting_check_in", [{ code: "awaiting_check_in" }]];
      return ["opening_company_file", []];
    })();
    reason = reasonAndCauses[0];
    causes.push(...reasonAndCauses[1]);
  } else if (running) {
    causes.push({ code: "ledger_processing" });
  } else {
    causes.push({ code: status === "offline" ? "computer_offline" : "awaiting_check_in" });
  }
  return {
    waitingReason: waiting ? reason : null,
    diagnosis: buildDiagnosis(deps, connection, sessions, causes, status, now),
  };
}

function hasCode(row: RequestRow, codes: string[]): boolean {
  const code = (row.error as { code?: string } | null)?.code;
  return code !== undefined && codes.includes(code);
}

function buildDiagnosis(
  deps: Deps,
  connection: ConnectionRow,
  sessions: ConnectorSessionRow[],
  causes: { code: string; retryAt?: string }[],
  status: string,
  now: number,
): Diagnosis {
  const session = sessions[0];
  const seen = connection.last_seen_at;
  const first = causes[0]?.code ?? "awaiting_check_in";
  return {
    at: new Date(now).toISOString(),
    summary: summaryFor(first, status),
    connector: {
      lastSeenAt: seen?.toISOString() ?? null,
      lastCheckInAt: connection.last_check_in_at?.toISOString() ?? null,
      checkInIntervalSeconds: deps.config.CONNECTOR_CHECK_IN_SECONDS,
      silentForSeconds: seen ? Math.round((now - seen.getTime()) / 1000) : null,
      sessionOpen: session !== undefined,
      sessionOpenedAt: session?.created_at.toISOString() ?? null,
      ledgerAnswered: session ? session.hcp_received : null,
      silentSessions: 0,
      lastConnectionErrorCode: connection.last_connection_error_code,
    },
    probableCauses: causes,
  };
}

function summaryFor(cause: string, status: string): string {
  switch (cause) {
    case "write_recovery_pending":
      return "Waiting: an earlier write's outcome is being confirmed with the application first.";
    case "computer_offline":
      return `The connector is ${status}: the end user's computer or Web Connector is not checking in.`;
    case "behind_other_requests":
      return "Waiting behind earlier requests for this company file.";
    case "ledger_modal_dialog":
      return "A dialog is open in the application and blocks access.";
    case "ledger_processing":
      return "The application is processing the request.";
    case "file_mode_conflict":
      return "The company file is held in single-user mode or by another program.";
    default:
      return "Waiting for the connector's next check-in.";
  }
}
