/**
 * Event types and their `data` shapes (spec: Events; architecture §5). Every event is sent as
 * `{id: "evt_…", type, timestamp, projectId, data}`; `timestamp` is when the event was written (UTC,
 * milliseconds) and `id` is also the `webhook-id` header, the receiver's deduplication key.
 *
 * Request events are thin: `data` is the Request without `result`, `timeline`, `diagnosis` and the
 * queue fields; a receiver reads the result with `GET /v1/requests/{id}`.
 */
export const EVENT_TYPES = [
  "request.succeeded",
  "request.failed",
  "request.canceled",
  "request.outcome_unknown",
  "request.outcome_resolved",
  "connection.setup_completed",
  "connection.status_changed",
  "change_feed.changes",
  "webhook.test",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * What an endpoint may subscribe to: every event type except `webhook.test` (the test operation
 * sends it to its endpoint whatever the subscription), and one wildcard per family, because the
 * spec caps an endpoint at 7 types: `request.*` (the five request events) and `connection.*` (both
 * connection events). Events added to a family later are delivered to its wildcard.
 */
export const SUBSCRIBABLE_EVENT_TYPES = [
  ...EVENT_TYPES.filter((type) => type !== "webhook.test"),
  "request.*",
  "connection.*",
] as const;

/** Whether an endpoint subscribed to `subscribed` takes an event of `type`. */
export function subscribes(subscribed: readonly string[], type: string): boolean {
  if (subscribed.includes(type)) return true;
  const family = type.slice(0, type.indexOf(".") + 1);
  return family.length > 1 && subscribed.includes(`${family}*`);
}

/**
 * `request.*` data (`request.succeeded`, `request.failed`, `request.canceled`,
 * `request.outcome_unknown`, `request.outcome_resolved`).
 *
 * - A request that went through `outcome_unknown` ends with `request.outcome_resolved` (never with
 *   `request.succeeded`/`request.failed`); `status`, `outcome` and `recovered` say how it ended.
 * - `callerReceivedResult` is true for a sync request whose caller got the final result in the HTTP
 *   response; such events reach only endpoints with `includeSyncRequests` (spec: Events).
 */
export interface RequestEventData {
  id: string;
  objectType: "request";
  endUserId: string;
  connectionId: string | null;
  operationId: string;
  method: string;
  path: string;
  mode: string;
  status: string;
  outcome: string;
  recovered: boolean;
  createdAt: string;
  sentAt: string | null;
  completedAt: string | null;
  /** The Request's `error` object (as on the Request resource), or null. */
  error: Record<string, unknown> | null;
  callerReceivedResult: boolean;
}

/** `connection.status_changed`: the stored connection status changed. */
export interface ConnectionStatusChangedData {
  id: string;
  objectType: "integration_connection";
  endUserId: string;
  isTest: boolean;
  previousStatus: string;
  status: string;
  /** An error code, or null (as on the connection resource). */
  statusReason: string | null;
  changedAt: string;
}

/** `connection.setup_completed`: an end user finished the hosted setup flow of an auth session. */
export interface ConnectionSetupCompletedData {
  id: string;
  objectType: "integration_connection";
  endUserId: string;
  authSessionId: string;
  isTest: boolean;
  status: string;
  companyFile: {
    companyName: string | null;
    product: string | null;
    xmlVersion: string | null;
    country: string | null;
  } | null;
  completedAt: string;
}

/** `webhook.test`: sent by `POST /v1/webhook-endpoints/{id}/test` to that endpoint only. */
export interface WebhookTestData {
  objectType: "webhook_test";
  endpointId: string;
  message: string;
}

/**
 * `change_feed.changes` (emitted by the change feed poller, issue 9 item 5): one event per poll of
 * one connection that found changes, at most {@link CHANGE_FEED_CHANGES_PER_EVENT} changes each
 * (more make several events). Deduplicated by `id` + `revisionNumber` across overlapping polls.
 */
export interface ChangeFeedChangesData {
  objectType: "change_feed_changes";
  subscriptionId: string;
  endUserId: string;
  connectionId: string;
  /** The `updatedAfter` the poll used (it overlaps the previous poll). */
  updatedAfter: string;
  polledAt: string;
  changes: Array<{
    id: string;
    objectType: string;
    /** Null for deletions. */
    revisionNumber: string | null;
    changeKind: "created" | "updated" | "deleted";
  }>;
}

/** Cap on `changes` per `change_feed.changes` event. */
export const CHANGE_FEED_CHANGES_PER_EVENT = 100;
