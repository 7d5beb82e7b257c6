/**
 * What a connector session learns about the company file and the application behind it, and what
 * it does with that: adopting or refusing the company file on the first `sendRequestXML`, answering
 * `connectionError` (programmer's guide pp.51–52, 69), and marking a connection unavailable.
 */
import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { mappingForHResult } from "../ledger/xml/status-codes.ts";
import { failWaitingSync } from "../requests/engine.ts";
import { completePendingSessions } from "../store/auth-sessions.ts";
import { findOtherConnectionWithFile, type ConnectionRow } from "../store/connections.ts";
import type { ConnectorSessionRow } from "../store/connector-sessions.ts";
import { moveSession } from "./session/phases.ts";
import { SERVICE_OWNER_ID } from "../tenancy/auth-sessions.ts";
import { moveConnection } from "../connections/status.ts";
import { negotiateVersion, readCompanyFacts } from "./hcp.ts";

/** What the connector reports with its first `sendRequestXML` of a session. */
export interface CompanyFileReport {
  hcp: string;
  companyFileName: string;
  /** `qbXMLCountry` (`US`, `CA`, `UK`…): the application's regional edition. */
  country: string;
  major: string;
  minor: string;
}

/**
 * First send of a session: check the company file is the one this connection adopted (via the
 * FileID stamp), choose the message version, and keep the path the connector reports, so that the
 * next `authenticate` names the file where it is now (a verified file that moved is followed, PG
 * p.52). The connection keeps the negotiated version and the company file's edition
 * (`qbXMLCountry`, else the host's `Country`): calls are gated by both (decision 0016). Returns the
 * text for `getLastError` when the session must not go on, else null.
 *
 * Two refusals, told apart by the file's FileID marker (decision 0019):
 * - LEDGER_COMPANY_FILE_MISMATCH: the marker is the adopted identity of ANOTHER connection of the
 *   same project and mode — the end user opened another end user's company file (one computer
 *   serving several companies). Refused even on a first session: adopting it would send this end
 *   user's requests into the other's books.
 * - LEDGER_WRONG_COMPANY_FILE_OPEN: this connection adopted a file and another one is open, which
 *   no connection of the project claims (also what HRESULT 0x8004040A at the open means).
 */
export async function acceptCompanyFile(
  deps: Deps,
  connection: ConnectionRow,
  session: ConnectorSessionRow,
  report: CompanyFileReport,
): Promise<string | null> {
  const facts = readCompanyFacts(report.hcp, SERVICE_OWNER_ID);
  const now = new Date(deps.clock.now());
  const identity = facts?.fileId ?? null;
  const named = facts?.companyName ? ` (${facts.companyName})` : "";
  const own = identity !== null && identity === connection.file_identity;
  // The file carries the marker of another connection of this project and mode: it is another end
  // user's company file, never adopted or used by this one (decision 0019).
  const owner =
    own || identity === null ? null : await findOtherConnectionWithFile(deps.db, connection, identity);
  if (owner) {
    const error = new ServiceError("LEDGER_COMPANY_FILE_MISMATCH", {
      message: `The open company file${named} is connected to another end user of this project (${owner.end_user_id}), not to this one.`,
      details: { otherEndUserId: owner.end_user_id },
    });
    await markUnavailable(deps, connection, "company_file_mismatch", error, null);
    return "The company file that is open belongs to another account connected to this application. Open your own company file and update again.";
  }
  if (connection.file_identity !== null && !own) {
    const error = new ServiceError("LEDGER_WRONG_COMPANY_FILE_OPEN", {
      message: `The open company file${named} is not the one this connection was set up with.`,
    });
    await markUnavailable(deps, connection, "company_file_mismatch", error, null);
    return "The company file that is open is not the one connected to this application. Open the right company file and update again.";
  }
  const version = negotiateVersion(report.major, report.minor, facts?.supportedVersions ?? []);
  if (version === null) {
    const error = new ServiceError("LEDGER_VERSION_UNSUPPORTED");
    await markUnavailable(deps, connection, "ledger_unavailable", error, null);
    return "This version of the accounting application is too old for this integration.";
  }
  const moved = await moveConnection(deps, connection.id, "online", {
    last_connection_error_code: null,
    retry_at: null,
    // The application answered in this session: an earlier interruption is over.
    session_interrupted_at: null,
    file_identity: connection.file_identity ?? identity,
    company_file_path: report.companyFileName || connection.company_file_path,
    company_name: facts?.companyName ?? connection.company_name,
    product: facts?.product ?? connection.product,
    country: editionOf(report.country) ?? editionOf(facts?.country) ?? connection.country,
    xml_version: version,
    updated_at: now,
  });
  // Disabled meanwhile (an operator): the session goes no further.
  if (moved.refused) return "This connection has been disabled. Contact the application's support.";
  await completePendingSessions(deps.db, connection.id, now);
  await moveSession(deps, session.ticket_hash, "accept_file", {
    ledger_answered_at: now,
    xml_version: version,
    company_file_path: report.companyFileName || null,
    personal_data_allowed: facts?.personalDataAllowed ?? null,
  });
  return null;
}

/** A reported edition, upper-cased (`us` → `US`); null when none was reported. */
function editionOf(country: string | null | undefined): string | null {
  const trimmed = country?.trim().toUpperCase() ?? "";
  return /^[A-Z]{2,3}$/.test(trimmed) ? trimmed : null;
}

/**
 * The application cannot be reached now: the connection says why (its status, the error code and
 * the HRESULT), and sync callers waiting on it are answered with that error at once.
 */
export async function markUnavailable(
  deps: Deps,
  connection: Pick<ConnectionRow, "id">,
  status: "ledger_unavailable" | "company_file_mismatch",
  error: ServiceError,
  hresult: string | null,
): Promise<void> {
  const now = deps.clock.now();
  await moveConnection(deps, connection.id, status, {
    status_reason: error.code,
    last_connection_error_code: hresult,
    retry_at:
      error.code === "LEDGER_FILE_MODE_CONFLICT"
        ? new Date(now + deps.config.CONNECTOR_CHECK_IN_SECONDS * 1000)
        : null,
    updated_at: new Date(now),
  });
  await failWaitingSync(deps, connection.id, error, `The connector reported ${error.code}`);
}

/** The error an HRESULT stands for, carrying the HRESULT and the request processor's message. */
export function errorForHResult(hresult: string, message: string): ServiceError {
  const { code } = mappingForHResult(hresult);
  return new ServiceError(code, {
    integrationCode: hresult.trim(),
    ...(message ? { message: `${new ServiceError(code).message} The application said: ${message}` } : {}),
  });
}

/**
 * Retries after a failed open at most this many times per session ("don't retry … more than a
 * couple of times", PG p.51).
 */
export const CONNECTION_RETRIES_MAX = 2;

/** HRESULTs of an open that another company file path can cure: the file is elsewhere, or another is open. */
const PATH_FAILURES: ReadonlySet<string> = new Set(["0x80040406", "0x8004040a", "0x80040416", "0x80040417"]);

/**
 * The answer to the session's `failures`-th `connectionError` (PG p.69): the next company file path
 * to try, or `done`. The paths tried are the remembered path (what authenticate named) then the file
 * open now (`""`); the FileID check of the first `sendRequestXML` verifies whichever opens. Failures
 * that no path cures (the application cannot start, a dialog, permissions, file mode) end at once.
 */
export function connectionErrorAnswer(
  connection: Pick<ConnectionRow, "company_file_path">,
  hresult: string,
  failures: number,
): string {
  const paths = [...new Set([connection.company_file_path ?? "", ""])];
  const next = paths[failures];
  if (next === undefined || failures > CONNECTION_RETRIES_MAX) return "done";
  return PATH_FAILURES.has(hresult.trim().toLowerCase()) ? next : "done";
}
