import { isErrorCode } from "../errors/catalogue.ts";
import { ServiceError } from "../errors/service-error.ts";
import { estimateCheckIn, type CheckInEstimate } from "./check-in-estimate.ts";
import type { ConnectionRow } from "../store/connections.ts";
import { effectiveStatus, type Seen } from "./seen.ts";

/**
 * The connection resource (architecture §5). `status` is an open enumeration; its machine is
 * connections/status.ts.
 */
export type { ConnectionStatus } from "./status.ts";

export interface ConnectionResource {
  id: string;
  objectType: "integration_connection";
  integrationSlug: "ledger_desktop";
  status: string;
  statusReason: string | null;
  isTest: boolean;
  lastRequestAt: string | null;
  lastSuccessfulRequestAt: string | null;
  lastCheckInAt: string | null;
  /** The next check-in the connector's observed schedule points to (connections/check-in-estimate.ts). */
  expectedCheckInAt: string | null;
  checkInEstimate: CheckInEstimate;
  companyFile: {
    companyName: string | null;
    product: string | null;
    xmlVersion: string | null;
    country: string | null;
  } | null;
  createdAt: string;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/**
 * The error the connector last reported for a connection whose application it cannot reach now
 * (`connectionError`, a refused company file, a failure instead of an answer), with the HRESULT it
 * came with; null when the connection is in no such state. A sync call gets it at once instead of
 * waiting out its timeout; the next check-in that opens the company file clears it.
 */
export function unavailableError(row: ConnectionRow): ServiceError | null {
  if (row.status !== "ledger_unavailable" && row.status !== "company_file_mismatch") return null;
  const code =
    row.status_reason !== null && isErrorCode(row.status_reason)
      ? row.status_reason
      : "LEDGER_CONNECTION_ERROR";
  return new ServiceError(code, { integrationCode: row.last_connection_error_code });
}

/** What a connection's view needs beyond its row. */
export interface ConnectionViewContext {
  nowMs: number;
  offlineAfterMs: number;
  /** The connector has a session open now. */
  sessionOpen: boolean;
  /** The check-in interval the service asks of the connector (its `.qwc` file). */
  checkInIntervalMs: number;
}

export function serializeConnection(
  row: Seen<ConnectionRow>,
  view: ConnectionViewContext,
): ConnectionResource {
  const { nowMs, offlineAfterMs } = view;
  const status = effectiveStatus(row, nowMs, offlineAfterMs);
  const checkIn = estimateCheckIn({
    nowMs,
    checkInsMs: row.recent_check_ins,
    sessionOpen: view.sessionOpen,
    configuredIntervalMs: view.checkInIntervalMs,
  });
  return {
    id: row.id,
    objectType: "integration_connection",
    integrationSlug: "ledger_desktop",
    status,
    // Offline derived before the sweep stored it reads as the stored offline does.
    statusReason: status === "offline" ? "INTEGRATION_CONNECTION_NOT_ACTIVE" : row.status_reason,
    isTest: row.is_test,
    lastRequestAt: iso(row.last_request_at),
    lastSuccessfulRequestAt: iso(row.last_successful_request_at),
    lastCheckInAt: iso(row.last_check_in_at),
    expectedCheckInAt: checkIn.expectedAt,
    checkInEstimate: checkIn,
    companyFile:
      row.company_name === null && row.product === null
        ? null
        : {
            companyName: row.company_name,
            product: row.product,
            xmlVersion: row.xml_version,
            country: row.country,
          },
    createdAt: row.created_at.toISOString(),
  };
}
