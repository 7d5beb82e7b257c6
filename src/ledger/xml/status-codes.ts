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
}

const HRESULT_TABLE: Readonly<Record<string, HResultMapping>> = {
  "0x80040400": { code: "LEDGER_REQUEST_ERROR", connectionStatus: null },
  "0x80040401": { code: "LEDGER_CONNECTION_ERROR", connectionStatus: "ledger_unavailable" },
  "0x80040402": { code: "LEDGER_CONNECTION_ERROR", connectionStatus: "ledger_unavailable" },
  "0x80040406": { code: "LEDGER_COMPANY_FILE_NOT_FOUND", connectionStatus: "company_file_mismatch" },
  "0x80040408": { code: "LEDGER_CANNOT_START", connectionStatus: "ledger_unavailable" },
  "0x8004040a": { code: "LEDGER_WRONG_COMPANY_FILE_OPEN", connectionStatus: "company_file_mismatch" },
  "0x80040410": { code: "LEDGER_FILE_MODE_CONFLICT", connectionStatus: "ledger_unavailable" },
  "0x80040414": { code: "LEDGER_MODAL_DIALOG_OPEN", connectionStatus: "ledger_unavailable" },
  "0x80040416": { code: "LEDGER_CANNOT_START", connectionStatus: "ledger_unavailable" },
  "0x80040417": { code: "LEDGER_COMPANY_FILE_NOT_FOUND", connectionStatus: "ledger_unavailable" },
  "0x80040418": { code: "LEDGER_ADMIN_REQUIRED", connectionStatus: "ledger_unavailable" },
  "0x8004041a": { code: "LEDGER_ACCESS_NOT_GRANTED", connectionStatus: "ledger_unavailable" },
  "0x8004041b": { code: "LEDGER_FILE_MODE_CONFLICT", connectionStatus: "ledger_unavailable" },
  "0x8004041d": { code: "LEDGER_ACCESS_NOT_GRANTED", connectionStatus: "ledger_unavailable" },
  "0x80040420": { code: "LEDGER_ACCESS_NOT_GRANTED", connectionStatus: "ledger_unavailable" },
  "0x80040422": { code: "LEDGER_FILE_MODE_CONFLICT", connectionStatus: "ledger_unavailable" },
  "0x80040423": { code: "LEDGER_VERSION_UNSUPPORTED", connectionStatus: "ledger_unavailable" },
  "0x80040424": { code: "LEDGER_STARTING", connectionStatus: "ledger_unavailable" },
};

export function mappingForHResult(hresult: string): HResultMapping {
  return (
    HRESULT_TABLE[hresult.trim().toLowerCase()] ?? {
      code: "LEDGER_CONNECTION_ERROR",
      connectionStatus: "ledger_unavailable",
    }
  );
}
