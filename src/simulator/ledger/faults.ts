/**
 * Faults a test or the simulator CLI can switch on, and the HRESULTs the request processor reports.
 * Message texts follow the processor's own; where they name the application we say "the ledger
 * application".
 */
import type { HResultFailure } from "../application.ts";

/** A fault of the simulated application. */
export type LedgerFault =
  /** The application cannot be started: beginSession → 0x80040408. */
  | { kind: "app_not_running" }
  /** A modal dialog blocks access: beginSession and processRequest → 0x80040414. */
  | { kind: "modal_dialog" }
  /** Another company file (`path`) is open: asking for a different path → 0x8004040A; `""` uses it. */
  | { kind: "wrong_company_file"; path: string }
  /** The file is open in another mode: beginSession → 0x80040410. */
  | { kind: "file_mode_conflict" }
  /** The integrated application lacks permission: beginSession → 0x8004041A. */
  | { kind: "access_not_granted" }
  /**
   * The application has never accessed this company file and the user logged in is not its
   * administrator, who alone can grant a first access: beginSession → 0x80040418.
   */
  | { kind: "admin_required" }
  /**
   * Another integrated application shares the company file and this one needs it alone:
   * beginSession → 0x80040422.
   */
  | { kind: "other_application_sharing" }
  /**
   * A feature is turned off in the company file's preferences (estimates, sales orders…): every
   * request whose element name starts with one of `objects` (`Estimate` → EstimateAddRq,
   * EstimateQueryRq…) is answered with status 3250; the rest of the message set runs.
   */
  | { kind: "feature_off"; objects: readonly string[] }
  /**
   * The company file user the integrated application logs in as has a restricted role that may
   * only read: every Add, Mod, Del, Void or custom-field write is answered with status 3260.
   */
  | { kind: "restricted_user" }
  /**
   * The answer is cut short after its first `bytes` bytes (its end never arrives), so it is not a
   * readable document.
   */
  | { kind: "truncated_answer"; bytes: number }
  /** processRequest takes `ms` longer (through the injected sleep). */
  | { kind: "slow_processing"; ms: number }
  /** processRequest does not answer until the fault is cleared. */
  | { kind: "not_responding" }
  /** The application has not finished starting: beginSession → 0x80040424. */
  | { kind: "starting" }
  /**
   * Every answer is at least `bytes` long (whitespace before the closing tag of its message set):
   * the application answering with a large document, as a big query or report does.
   */
  | { kind: "large_answer"; bytes: number }
  /**
   * Opening the company file hangs (a dialog at start-up): beginSession does not return until the
   * fault is cleared, so the connector's session opens and the application never answers.
   */
  | { kind: "hang_on_open" }
  /**
   * A message set holding more than `requests` request messages is refused as a whole, unprocessed,
   * with 0x80040400 (the application's answer to a request stream it will not run): a model of the
   * application refusing a set that several Requests share, which the service then sends again one
   * Request at a time (decision 0036).
   */
  | { kind: "refuse_sets_over"; requests: number };

/** An HRESULT and its message. */
export interface HResult {
  readonly code: string;
  readonly message: string;
}

/** 0x80040400 — malformed, unknown or out-of-order request XML. */
export const HRESULT_PARSE_ERROR: HResult = {
  code: "0x80040400",
  message: "The ledger application found an error when parsing the provided XML text stream.",
};

/** 0x80040401 — the application went away during a session. */
export const HRESULT_CANNOT_ACCESS: HResult = {
  code: "0x80040401",
  message: "Could not access the ledger application.",
};

/** 0x80040406 — the requested company file does not exist. */
export const HRESULT_INVALID_FILE: HResult = {
  code: "0x80040406",
  message: "The specified company data file does not exist or is not a valid company data file.",
};

/** 0x80040408 — the application could not be started. */
export const HRESULT_NOT_RUNNING: HResult = {
  code: "0x80040408",
  message: "Could not start the ledger application.",
};

/** 0x8004040A — another company file is open. */
export const HRESULT_WRONG_FILE: HResult = {
  code: "0x8004040A",
  message:
    "The ledger application company data file is already open and it is different from the one requested.",
};

/** 0x80040410 — the file is open in another mode. */
export const HRESULT_MODE_CONFLICT: HResult = {
  code: "0x80040410",
  message:
    "The ledger application company data file is currently open in a mode other than the one specified by your application.",
};

/** 0x80040414 — a modal dialog is showing. */
export const HRESULT_MODAL_DIALOG: HResult = {
  code: "0x80040414",
  message:
    "A modal dialog box is showing in the ledger application user interface. Your application cannot access the ledger application until the user dismisses the dialog box.",
};

/** 0x80040416 — no file is open and none was named. */
export const HRESULT_NO_FILE_OPEN: HResult = {
  code: "0x80040416",
  message: "If the ledger application is not running, a company file name must be specified.",
};

/** 0x80040417 — the application is running without a company file open, and none was named. */
export const HRESULT_NO_FILE_OPEN_RUNNING: HResult = {
  code: "0x80040417",
  message:
    "The ledger application is running but no company file is open; a company file name must be specified.",
};

/** 0x80040418 — only the administrator can grant a first access. */
export const HRESULT_ADMIN_REQUIRED: HResult = {
  code: "0x80040418",
  message:
    "This application has not accessed this ledger application company data file before. Only the ledger application administrator can grant an application permission to access a company data file for the first time.",
};

/** 0x80040422 — another application shares the file; this one needs single-user access. */
export const HRESULT_OTHER_APPLICATION: HResult = {
  code: "0x80040422",
  message:
    "This application requires Single User file access mode and there is already another application sharing data with this ledger application company data file.",
};

/** 0x8004041A — the integrated application has no permission. */
export const HRESULT_ACCESS_NOT_GRANTED: HResult = {
  code: "0x8004041A",
  message:
    "This application does not have permission to access this ledger application company data file. The ledger application administrator can grant access permission through the Integrated Application preferences.",
};

/** 0x80040424 — the application has not finished its initialisation. */
export const HRESULT_STARTING: HResult = {
  code: "0x80040424",
  message: "The ledger application did not finish its initialization. Please try again later.",
};

/** The failure value for `hresult`. */
export function hresultFailure(hresult: HResult): HResultFailure {
  return { ok: false, hresult: hresult.code, message: hresult.message };
}
