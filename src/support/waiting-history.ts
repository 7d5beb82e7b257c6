import { waitingReasonOfStatus } from "../requests/probable-causes.ts";

/**
 * A Request's waiting reasons over its wait, for a support bundle (issue 28 item 2). The store keeps
 * no waiting reason per Request (it is read from the evidence of the moment, requests/diagnosis.ts)
 * and the timeline records status changes only; what it does keep is the connection's status
 * history (`connection_status_changes`). So a bundle names the reasons that history gave the
 * Request while it waited: the connection's status when the Request was made, then each change
 * before it was handed over (or ended), mapped as `waitingReason` maps a stored status
 * (`connector_offline`, `ledger_unavailable`, `ledger_starting`, `ledger_not_responding`,
 * `file_mode_conflict`), consecutive repeats folded. Reasons the status does not show (waiting for a
 * check-in, behind other Requests, a company file opening) are not in it.
 */
export interface StatusChange {
  status: string;
  statusReason: string | null;
  changedAt: string;
}

export interface WaitedRequest {
  createdAt: string;
  sentAt: string | null;
  completedAt: string | null;
}

/**
 * `changes` oldest first (a change at the Request's creation counts as made before it; one at its
 * hand-over, as made after); `untilMs` ends the wait of a Request still open.
 */
export function waitingReasonsOf(
  request: WaitedRequest,
  changes: readonly StatusChange[],
  untilMs: number,
): string[] {
  const created = Date.parse(request.createdAt);
  const ended = Date.parse(request.sentAt ?? request.completedAt ?? "") || untilMs;
  if (ended <= created) return [];
  const atCreation = changes.filter((c) => Date.parse(c.changedAt) <= created).at(-1);
  const during = changes.filter((c) => {
    const at = Date.parse(c.changedAt);
    return at > created && at < ended;
  });
  const reasons: string[] = [];
  for (const change of atCreation ? [atCreation, ...during] : during) {
    const reason = waitingReasonOfStatus(change.status, change.statusReason);
    if (reason !== null && reasons.at(-1) !== reason) reasons.push(reason);
  }
  return reasons;
}
