/**
 * The Request state machine (spec: States and transitions).
 *
 *   queued ──check-in hands it over──▶ sent ──answer ok──▶ succeeded
 *     │  ▲                              │ └──answer error──▶ failed
 *     │  └── connector back online ──┐  └──session broke (write)──▶ outcome_unknown ──recovery──▶ succeeded | failed
 *     │                              │     session broke (read) ──▶ failed (LEDGER_READ_INTERRUPTED)
 *   waiting_for_connection ──────────┘
 *     queued | waiting_for_connection ──cancel / sync timeout / queue TTL──▶ canceled
 *     queued | waiting_for_connection ──connector reports the application unavailable (sync)──▶ failed
 *
 * A request that never reached the application ends `canceled` (REQUEST_CANCELED,
 * REQUEST_TIMEOUT_NOT_SENT, REQUEST_EXPIRED; see docs/decisions/0003-request-expiry.md) or `failed`
 * with outcome `not_applied`. `sent` can never be canceled, and a sent write is never sent again.
 */
export const REQUEST_STATUSES = [
  "queued",
  "waiting_for_connection",
  "sent",
  "succeeded",
  "failed",
  "canceled",
  "outcome_unknown",
] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

export const WAITING: readonly RequestStatus[] = ["queued", "waiting_for_connection"];
export const FINAL: readonly RequestStatus[] = ["succeeded", "failed", "canceled"];

/** Allowed transitions: from → to. Every write of `status` goes through this table. */
export const TRANSITIONS: Readonly<Record<RequestStatus, readonly RequestStatus[]>> = {
  queued: ["sent", "canceled", "failed", "waiting_for_connection"],
  waiting_for_connection: ["queued", "canceled", "failed"],
  sent: ["succeeded", "failed", "outcome_unknown"],
  outcome_unknown: ["succeeded", "failed"],
  succeeded: [],
  failed: [],
  canceled: [],
};

/** The statuses a request may be in for a transition to `to`. */
export function sourcesOf(to: RequestStatus): RequestStatus[] {
  return REQUEST_STATUSES.filter((from) => TRANSITIONS[from].includes(to));
}

/** Whether the caller's wait is over: final, or the outcome is unknown (the caller is told so). */
export function isSettled(status: string): boolean {
  return (
    status === "succeeded" || status === "failed" || status === "canceled" || status === "outcome_unknown"
  );
}
