/**
 * Why a request waits, as a pure function of what the connector endpoint observed (spec:
 * `waitingReason`, diagnosis `probableCauses`). requests/diagnosis.ts gathers the evidence from the
 * store; this file only reasons about it, so every rule is tested without a clock or a database.
 */

/** What the connector endpoint has observed about a connection, at `nowMs`. */
export interface Evidence {
  nowMs: number;
  /** The request's own state: waiting (queued, waiting_for_connection) or running (sent). */
  request: { waiting: boolean; queuePosition: number | null; sentAtMs: number | null };
  /** Status as read (offline derived from silence), the stored status and its reason. */
  status: string;
  storedStatus: string;
  statusReason: string | null;
  retryAtMs: number | null;
  lastSeenAtMs: number | null;
  /** How long the connector had been silent when it last checked in (its observed schedule). */
  checkInGapMs: number | null;
  /** When a replaced session's ticket was last used (a second computer with the same registration). */
  sharedConnectorAtMs: number | null;
  /**
   * When the connector last checked in with this connection's user name and a password that is no
   * longer its own (an older registration), null if never.
   */
  loginRefusedAtMs: number | null;
  /**
   * When a request handed to the connector last lost its answer to the end of its session, null
   * once the application has answered in a later session.
   */
  sessionInterruptedAtMs: number | null;
  /** The HRESULT of the connector's last failure to open the company file, if any. */
  lastConnectionErrorCode: string | null;
  /** The open session, if any, and whether the application has answered in it. */
  session: { openedAtMs: number; ledgerAnswered: boolean } | null;
  /** Recent sessions, newest first, that opened and never heard from the application. */
  silentSessions: number;
  /** When another request of the connection was handed over and is still unanswered. */
  inFlightSentAtMs: number | null;
  /** `outcome_unknown` writes whose recovery query must run before anything else. */
  recoveriesPending: number;
  checkInIntervalMs: number;
  answerWaitMs: number;
}

/**
 * Every probable cause code (spec: diagnosis `probableCauses`, open), plus `file_mode_conflict`
 * and `ledger_processing` of this service; the OpenAPI document publishes them as an enumeration.
 */
export const PROBABLE_CAUSE_CODES = [
  "ledger_modal_dialog",
  "web_connector_registration_lost",
  "ledger_starting",
  "other_web_connector_app",
  "web_connector_closed",
  "computer_offline",
  "web_connector_schedule_changed",
  "ledger_closed_no_unattended_access",
  "ledger_unavailable",
  "wrong_company_file",
  "write_recovery_pending",
  "behind_other_requests",
  "ledger_processing",
  "session_interrupted",
  "same_connector_two_computers",
  "awaiting_check_in",
  "file_mode_conflict",
] as const;
export type ProbableCauseCode = (typeof PROBABLE_CAUSE_CODES)[number];

/** Every `waitingReason` (spec: Request, open). */
export const WAITING_REASONS = [
  "awaiting_check_in",
  "behind_other_requests",
  "opening_company_file",
  "ledger_starting",
  "connector_offline",
  "ledger_unavailable",
  "ledger_not_responding",
  "write_recovery_pending",
  "file_mode_conflict",
] as const;
export type WaitingReason = (typeof WAITING_REASONS)[number];

export interface ProbableCause {
  code: ProbableCauseCode;
  retryAt?: string;
}

/** Two computers' evidence counts for this long after the last replaced ticket was used. */
export const SHARED_CONNECTOR_EVIDENCE_MS = 24 * 60 * 60 * 1000;

/** Connection-level causes read from the stored status reason (set from connector evidence). */
const CAUSE_FOR_REASON: Readonly<Record<string, ProbableCauseCode>> = {
  LEDGER_MODAL_DIALOG_OPEN: "ledger_modal_dialog",
  LEDGER_NOT_RESPONDING: "ledger_modal_dialog",
  LEDGER_CANNOT_START: "ledger_closed_no_unattended_access",
  LEDGER_STARTING: "ledger_starting",
  LEDGER_WRONG_COMPANY_FILE_OPEN: "wrong_company_file",
  LEDGER_COMPANY_FILE_MISMATCH: "wrong_company_file",
  LEDGER_COMPANY_FILE_NOT_FOUND: "wrong_company_file",
  LEDGER_FILE_MODE_CONFLICT: "file_mode_conflict",
};

/** `waitingReason` for a reason the connection's status carries. */
const WAITING_FOR_REASON: Readonly<Record<string, WaitingReason>> = {
  LEDGER_MODAL_DIALOG_OPEN: "ledger_not_responding",
  LEDGER_NOT_RESPONDING: "ledger_not_responding",
  LEDGER_FILE_MODE_CONFLICT: "file_mode_conflict",
  LEDGER_STARTING: "ledger_starting",
};

const UNREACHABLE = ["ledger_unavailable", "company_file_mismatch"];

/**
 * HRESULTs at the open that say another integrated application holds the company file (0x80040422:
 * "there is already another application sharing data with this company data file"): another
 * connector application of the end user's, most often.
 */
const OTHER_APPLICATION_HRESULTS: ReadonlySet<string> = new Set(["0x80040422"]);

/**
 * The connector's registration no longer matches the connection: it checked in with the
 * connection's user name and a refused password, and has not checked in successfully since.
 */
function registrationLost(e: Evidence): boolean {
  return e.loginRefusedAtMs !== null && (e.lastSeenAtMs === null || e.loginRefusedAtMs > e.lastSeenAtMs);
}

/** The connector's observed silence before its last check-in is far beyond the `.qwc` schedule. */
export function scheduleDrifted(e: Evidence): boolean {
  return (
    e.checkInGapMs !== null &&
    e.checkInGapMs > Math.max(2 * e.checkInIntervalMs, e.checkInIntervalMs + 60_000)
  );
}

/** A session opened and the application has not answered for longer than the answer wait. */
function sessionUnanswered(e: Evidence): boolean {
  return e.session !== null && !e.session.ledgerAnswered && e.nowMs - e.session.openedAtMs > e.answerWaitMs;
}

/** Another request was handed over and its answer is overdue. */
function inFlightOverdue(e: Evidence): boolean {
  return e.inFlightSentAtMs !== null && e.nowMs - e.inFlightSentAtMs > e.answerWaitMs;
}

function sharedConnector(e: Evidence): boolean {
  return e.sharedConnectorAtMs !== null && e.nowMs - e.sharedConnectorAtMs <= SHARED_CONNECTOR_EVIDENCE_MS;
}

/**
 * The waiting reason a connection's stored status gives every Request that waits on it (null: the
 * status alone says nothing; the Request waits for a check-in or behind others). A support bundle
 * reads a Request's reasons over its wait from the status history with it (support/waiting-history.ts).
 */
export function waitingReasonOfStatus(status: string, statusReason: string | null): WaitingReason | null {
  if (status === "offline") return "connector_offline";
  return UNREACHABLE.includes(status) ? unreachableReason(statusReason) : null;
}

const unreachableReason = (statusReason: string | null): WaitingReason =>
  (statusReason ? WAITING_FOR_REASON[statusReason] : undefined) ?? "ledger_unavailable";

/** The spec's `waitingReason` of a waiting request (null for one that does not wait). */
export function waitingReasonOf(e: Evidence): WaitingReason | null {
  if (!e.request.waiting) return null;
  if (e.recoveriesPending > 0) return "write_recovery_pending";
  if (e.status === "offline") return "connector_offline";
  if (UNREACHABLE.includes(e.storedStatus)) return unreachableReason(e.statusReason);
  if (sessionUnanswered(e) || inFlightOverdue(e)) return "ledger_not_responding";
  if ((e.request.queuePosition ?? 1) > 1 || e.inFlightSentAtMs !== null) return "behind_other_requests";
  if (e.session !== null && !e.session.ledgerAnswered) return "opening_company_file";
  return "awaiting_check_in";
}

/**
 * Probable causes, most likely first. Each piece of evidence proposes causes with a weight; the
 * strongest evidence wins, and ties keep the order below. The weights say how directly the
 * evidence shows the cause: a status reason the application reported beats an inference from
 * silence; silence with a drifted schedule points at the schedule before the computer.
 */
export function probableCausesOf(e: Evidence): ProbableCause[] {
  const found: Array<ProbableCause & { weight: number }> = [];
  const add = (code: ProbableCauseCode, weight: number, retryAt?: string): void => {
    if (found.some((c) => c.code === code)) return;
    found.push({ code, weight, ...(retryAt === undefined ? {} : { retryAt }) });
  };
  if (e.recoveriesPending > 0) add("write_recovery_pending", 100);
  if (UNREACHABLE.includes(e.storedStatus)) {
    const cause = (e.statusReason ? CAUSE_FOR_REASON[e.statusReason] : undefined) ?? "ledger_unavailable";
    const retryAt =
      cause === "file_mode_conflict" && e.retryAtMs !== null
        ? new Date(e.retryAtMs).toISOString()
        : undefined;
    // Reported by the application itself; older than a silence that followed it.
    add(cause, e.status === "offline" ? 50 : 90, retryAt);
  }
  // The application itself named another application holding the file: more specific than the
  // file mode conflict it is reported as.
  if (
    UNREACHABLE.includes(e.storedStatus) &&
    e.lastConnectionErrorCode !== null &&
    OTHER_APPLICATION_HRESULTS.has(e.lastConnectionErrorCode.trim().toLowerCase())
  )
    add("other_web_connector_app", 91);
  // The connector calls, but with a registration that is no longer accepted: nothing else can run.
  if (registrationLost(e)) add("web_connector_registration_lost", 95);
  if (sharedConnector(e)) add("same_connector_two_computers", 92);
  // A handed-over request lost its answer to the end of its session, and the application has not
  // answered in a session since: what waits now waits for a connector that broke off.
  if (e.sessionInterruptedAtMs !== null && e.request.waiting) add("session_interrupted", 85);
  if (e.silentSessions > 0 || sessionUnanswered(e))
    add("ledger_modal_dialog", 80 + Math.min(e.silentSessions, 10));
  if (e.status === "offline") {
    if (scheduleDrifted(e)) add("web_connector_schedule_changed", 75);
    add("computer_offline", 70);
    add("web_connector_closed", 65);
  }
  if (e.request.waiting) {
    if (inFlightOverdue(e)) add("ledger_modal_dialog", 78);
    if ((e.request.queuePosition ?? 1) > 1 || e.inFlightSentAtMs !== null) add("behind_other_requests", 50);
    if (e.status !== "offline" && e.session === null) {
      if (scheduleDrifted(e)) add("web_connector_schedule_changed", 60);
      add("awaiting_check_in", 30);
    }
  } else if (e.request.sentAtMs !== null) {
    add("ledger_processing", 60);
  }
  if (found.length === 0) add("awaiting_check_in", 0);
  return found.sort((a, b) => b.weight - a.weight).map(({ weight: _weight, ...cause }) => cause);
}

/** A one-line summary for the most likely cause. */
export function summaryOf(cause: string, waitingReason: string | null): string {
  switch (cause) {
    case "write_recovery_pending":
      return "An earlier write's outcome is being confirmed with the application before anything else runs.";
    case "computer_offline":
    case "web_connector_closed":
      return "The connector has stopped checking in: the end user's computer is off or the Web Connector is closed.";
    case "web_connector_schedule_changed":
      return "The Web Connector checks in much less often than it was set up to: its schedule was changed.";
    case "same_connector_two_computers":
      return "Two computers run the same connector registration and keep replacing each other's sessions.";
    case "ledger_modal_dialog":
      return "The connector opens sessions but the application does not answer, usually because a dialog is open.";
    case "ledger_closed_no_unattended_access":
      return "The application is closed and cannot be started without someone logged in.";
    case "ledger_starting":
      return "The application is still starting.";
    case "wrong_company_file":
      return "Another company file is open in the application.";
    case "file_mode_conflict":
      return "The company file is held in single-user mode or by another program.";
    case "web_connector_registration_lost":
      return "The Web Connector checks in with a registration that is no longer valid: the setup was done again and the connector still has the old one.";
    case "other_web_connector_app":
      return "Another application is using the company file and this one needs it alone.";
    case "session_interrupted":
      return "The connector's last session broke off before a request's answer came back.";
    case "behind_other_requests":
      return "Waiting behind earlier requests for this company file.";
    case "ledger_processing":
      return "The application is processing the request.";
    case "ledger_unavailable":
      return "The connector cannot reach the application.";
    default:
      return waitingReason === "opening_company_file"
        ? "The connector is opening the company file."
        : "Waiting for the connector's next check-in.";
  }
}
