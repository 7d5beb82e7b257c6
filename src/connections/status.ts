import type { Deps } from "../deps.ts";
import type { ErrorCode } from "../errors/catalogue.ts";
import { changeConnectionStatus, type StatusChange } from "../store/connection-events.ts";
import type { ConnectionChanges, ConnectionRow } from "../store/connections.ts";
import { GOES_OFFLINE_WHEN_SILENT, isSilent, lastSeenAt } from "./seen.ts";

/**
 * The connection status machine (architecture guide §5: `pending_setup → online ⇄
 * (ledger_unavailable | company_file_mismatch | offline)`, and `disabled`). Every change of a
 * connection's stored `status` goes through {@link moveConnection}, which allows only the pairs of
 * {@link CONNECTION_TRANSITIONS} and writes `connection.status_changed` in the same transaction.
 * Staying in a status (a new `statusReason`, a refreshed company file) is not a transition and
 * writes no event.
 *
 * | from | evidence (what the connector endpoint observed) | to | statusReason |
 * |---|---|---|---|
 * | pending_setup, ledger_unavailable, company_file_mismatch, offline | a session's first `sendRequestXML` reports the company file and it is accepted (FileID, message version) | online | null |
 * | offline | `authenticate` with the right password: the connector checks in again (its session then confirms or refutes the application) | online | null |
 * | company_file_mismatch | the developer resets the company file (`reset-company-file`): the next check-in adopts the open file | online | null |
 * | pending_setup, online, company_file_mismatch, offline | `connectionError` ends with "done", or the application's version is too old | ledger_unavailable | the mapped error code |
 * | pending_setup, online, ledger_unavailable, offline | the open company file is not the adopted one, or the file is not found | company_file_mismatch | the mapped error code |
 * | online, ledger_unavailable, company_file_mismatch | no SOAP call for `CONNECTION_OFFLINE_AFTER_MS` (the sweep notices the silence) | offline | INTEGRATION_CONNECTION_NOT_ACTIVE |
 * | every other status | an operator disables the connection | disabled | INTEGRATION_CONNECTION_DISABLED |
 * | disabled | an operator enables it: `pending_setup` if it never checked in, else `offline` until it does | pending_setup, offline | null, INTEGRATION_CONNECTION_NOT_ACTIVE |
 *
 * Refused, among others: `pending_setup → offline` (a connector that never checked in is not
 * "offline", it is not set up), anything `→ pending_setup` but re-enabling, and `disabled → online`
 * (a disabled connection's connector is refused at `authenticate`, so it can prove nothing).
 */
export const CONNECTION_STATUSES = [
  "pending_setup",
  "online",
  "ledger_unavailable",
  "company_file_mismatch",
  "offline",
  "disabled",
] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

/** Allowed transitions: from → to (a status to itself is a stay, always allowed, never an event). */
export const CONNECTION_TRANSITIONS: Readonly<Record<ConnectionStatus, readonly ConnectionStatus[]>> = {
  pending_setup: ["online", "ledger_unavailable", "company_file_mismatch", "disabled"],
  online: ["ledger_unavailable", "company_file_mismatch", "offline", "disabled"],
  ledger_unavailable: ["online", "company_file_mismatch", "offline", "disabled"],
  company_file_mismatch: ["online", "ledger_unavailable", "offline", "disabled"],
  offline: ["online", "ledger_unavailable", "company_file_mismatch", "disabled"],
  disabled: ["pending_setup", "offline"],
};

/** The statuses a connection may be in for a transition to `to`. */
export function connectionSourcesOf(to: ConnectionStatus): ConnectionStatus[] {
  return CONNECTION_STATUSES.filter((from) => CONNECTION_TRANSITIONS[from].includes(to));
}

/** The `statusReason` a status carries by itself (the others carry the error that caused them). */
const OWN_REASON: Partial<Record<ConnectionStatus, ErrorCode | null>> = {
  online: null,
  pending_setup: null,
  offline: "INTEGRATION_CONNECTION_NOT_ACTIVE",
  disabled: "INTEGRATION_CONNECTION_DISABLED",
};

/**
 * Moves a connection to `to` with other `changes` in the same statement, if the table allows it
 * from the current status (compare-and-set under a row lock). `statusReason` defaults to the
 * status's own reason (null for online). A refused move changes nothing.
 */
export async function moveConnection(
  deps: Deps,
  connectionId: string,
  to: ConnectionStatus,
  changes: ConnectionChanges = {},
  onlyIf?: (current: ConnectionRow) => boolean,
  beganAt?: (current: ConnectionRow) => Date,
): Promise<StatusChange> {
  const reason = OWN_REASON[to];
  return changeConnectionStatus(
    deps.db,
    connectionId,
    connectionSourcesOf(to),
    {
      ...(reason === undefined ? {} : { status_reason: reason }),
      updated_at: new Date(deps.clock.now()),
      ...changes,
      status: to,
    },
    onlyIf,
    beganAt,
  );
}

/**
 * The silence evidence, applied: a connection whose connector stopped calling goes `offline`
 * (the sweep calls this for each connection its query found silent). Checked again under the
 * row lock, so a check-in that arrived meanwhile wins. Returns whether it moved.
 */
export async function markOfflineIfSilent(deps: Deps, connectionId: string): Promise<boolean> {
  const now = deps.clock.now();
  const change = await moveConnection(
    deps,
    connectionId,
    "offline",
    {},
    (current) =>
      GOES_OFFLINE_WHEN_SILENT.some((from) => from === current.status) &&
      isSilent(deps.activity.connection(current), now, deps.config.CONNECTION_OFFLINE_AFTER_MS),
    // The history dates the silence from where reads began to show it offline, not from the sweep.
    (current) =>
      new Date(
        (lastSeenAt(deps.activity.connection(current))?.getTime() ?? now) +
          deps.config.CONNECTION_OFFLINE_AFTER_MS,
      ),
  );
  return !change.refused && change.row !== null;
}

/**
 * An operator disables a connection (its connector is refused at `authenticate` from then on) or
 * enables it again (`pending_setup` if it never checked in, else `offline` until it checks in).
 */
export async function setConnectionEnabled(
  deps: Deps,
  connection: ConnectionRow,
  enabled: boolean,
): Promise<StatusChange> {
  if (!enabled) return moveConnection(deps, connection.id, "disabled");
  return moveConnection(
    deps,
    connection.id,
    connection.last_check_in_at === null ? "pending_setup" : "offline",
    {},
    (current) => current.status === "disabled",
  );
}
