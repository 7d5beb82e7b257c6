import type { ErrorCode } from "../../errors/catalogue.ts";

/**
 * The application's status codes → catalogue codes (ledger-protocol §2.7). Reviewed data: an
 * unknown Error-severity code becomes LEDGER_REQUEST_ERROR and keeps its native value in
 * `integrationCode`.
 */
const STATUS_TABLE: Readonly<Record<number, ErrorCode>> = {
  3000: "LEDGER_REQUEST_ERROR",
  3100: "LEDGER_DUPLICATE_NAME",
  3120: "LEDGER_OBJECT_NOT_FOUND",
  3140: "LEDGER_REFERENCE_NOT_FOUND",
  3170: "LEDGER_OBJECT_IN_USE",
  3175: "LEDGER_OBJECT_IN_USE",
  3176: "LEDGER_OBJECT_IN_USE",
  3200: "LEDGER_REVISION_NUMBER_STALE",
  3250: "LEDGER_FEATURE_NOT_ENABLED",
  3260: "LEDGER_INSUFFICIENT_PERMISSION",
  3261: "LEDGER_INSUFFICIENT_PERMISSION",
};

export function errorCodeForStatus(statusCode: number): ErrorCode {
  return STATUS_TABLE[statusCode] ?? "LEDGER_REQUEST_ERROR";
}

/**
 * HRESULTs from the request processor (ledger-protocol §2.8), as reported by `connectionError` or
 * `receiveResponseXML`, → catalogue codes and the connection status they imply.
 */
export interface HResultMapping {
  code: ErrorCode;
  connectionStatus: "ledger_unavailable" | "company_file_mismatch" | null;
  /**
   * Whether the processor refused the message set without running any of it (it could not parse
   * it, or could not reach the company file). Only then is a write reported `not_applied`; after
   * any other failure it may have been applied and goes to recovery (at most once).
   */
  refusedUnprocessed: boolean;
}

type Row = [ErrorCode, HResultMapping["connectionStatus"], boolean];

// prettier-ignore
const HRESULT_TABLE: Readonly<Record<string, Row>> = {
  "0x80040400": ["LEDGER_REQUEST_ERROR", null, true],
  "0x80040401": ["LEDGER_CONNECTION_ERROR", "ledger_unavailable", false],
  "0x80040402": ["LEDGER_CONNECTION_ERROR", "ledger_unavailable", false],
  "0x80040406": ["LEDGER_COMPANY_FILE_NOT_FOUND", "company_file_mismatch", true],
  "0x80040408": ["LEDGER_CANNOT_START", "ledger_unavailable", true],
  "0x8004040a": ["LEDGER_WRONG_COMPANY_FILE_OPEN", "company_file_mismatch", true],
  "0x80040410": ["LEDGER_FILE_MODE_CONFLICT", "ledger_unavailable", true],
  "0x80040414": ["LEDGER_MODAL_DIALOG_OPEN", "ledger_unavailable", true],
  "0x80040416": ["LEDGER_CANNOT_START", "ledger_unavailable", true],
  "0x80040417": ["LEDGER_COMPANY_FILE_NOT_FOUND", "ledger_unavailable", true],
  "0x80040418": ["LEDGER_ADMIN_REQUIRED", "ledger_unavailable", true],
  "0x8004041a": ["LEDGER_ACCESS_NOT_GRANTED", "ledger_unavailable", true],
  "0x8004041b": ["LEDGER_FILE_MODE_CONFLICT", "ledger_unavailable", true],
  "0x8004041d": ["LEDGER_ACCESS_NOT_GRANTED", "ledger_unavailable", true],
  "0x80040420": ["LEDGER_ACCESS_NOT_GRANTED", "ledger_unavailable", true],
  "0x80040422": ["LEDGER_FILE_MODE_CONFLICT", "ledger_unavailable", true],
  "0x80040423": ["LEDGER_VERSION_UNSUPPORTED", "ledger_unavailable", true],
  "0x80040424": ["LEDGER_STARTING", "ledger_unavailable", true],
};

/** The mapping of an HRESULT; an unknown one is a connection error whose effect is unknown. */
export function mappingForHResult(hresult: string): HResultMapping {
  const [code, connectionStatus, refusedUnprocessed] = HRESULT_TABLE[hresult.trim().toLowerCase()] ?? [
    "LEDGER_CONNECTION_ERROR",
    "ledger_unavailable",
    false,
  ];
  return { code, connectionStatus, refusedUnprocessed };
}

/**
 * Whether an HRESULT reports a failure: empty and zero (`0x0`, `0x00000000`) mean the processor
 * answered. The connector sends failures in hex (programmer's guide p.69).
 */
export function isFailureHResult(hresult: string): boolean {
  const value = hresult.trim();
  return value !== "" && !/^(0x)?0+$/i.test(value);
}
