import { createHash } from "node:crypto";
import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { lastSeenAt } from "../connections/seen.ts";
import { findConnectionForEndUser } from "../store/connections.ts";
import {
  bundleDeliveries,
  bundleRequests,
  bundleSessions,
  bundleStatusChanges,
  type BundleWindow,
} from "../store/support-bundle.ts";
import type { Tenant } from "../store/tenant.ts";
import { getEndUser, type EndUserResource } from "../tenancy/end-users.ts";
import { serializeDelivery, type DeliveryResource } from "../webhooks/deliveries.ts";
import { requestMessages, type RequestMessagesResource } from "../requests/messages.ts";
import { asOfNow } from "../requests/on-read.ts";
import { serializeRequest } from "../requests/resource.ts";
import { waitingReasonsOf } from "./waiting-history.ts";

/**
 * Support bundles (issue 28 item 1, decision 0049): one JSON document with what happened between
 * the service and one end user's company file in a window of time, for a support engineer to read
 * and to replay (`ledger-bridge replay`). Everything in it is what the public API already shows
 * the same key: the end user, its connection's status history and check-in evidence, every Request
 * with its input, message and answer (secrets masked by `messages.ts` + `ledger/xml/redact.ts`),
 * timeline and error, the connector sessions, and the webhook deliveries of its events. Nothing of
 * another end user: every query is scoped by tenant and end user (store/support-bundle.ts).
 *
 * Size-bounded by `SUPPORT_BUNDLE_MAX_BYTES`: the oldest Requests (and their deliveries) are left
 * out first, and `truncated` says how many.
 */
export const BUNDLE_VERSION = 1;

/** Rows read at most per section, before the size bound applies. */
const MAX_REQUESTS = 5000;
const MAX_SESSIONS = 1000;
const MAX_DELIVERIES = 5000;

export interface BundleRequest {
  request: Awaited<ReturnType<typeof serializeRequest>>;
  messages: RequestMessagesResource;
  /** The connector session it was handed over in (`sessions[].id`); null when never sent. */
  sessionId: string | null;
  /** Made by the service itself (the change feed's polls, the mirror's pages), not by a caller. */
  background: boolean;
  /** The waiting reasons the connection's status history gave it while it waited (waiting-history.ts). */
  waitingReasons: string[];
}

export interface BundleSession {
  /** A label of the session inside this bundle (`ses_` + a digest of its ticket's hash). */
  id: string;
  openedAt: string;
  closedAt: string | null;
  phase: string;
  lastActivityAt: string;
  lastWorkAt: string;
  /** When the application last answered in this session (null: it never did). */
  ledgerAnsweredAt: string | null;
  /** The reason the session ended or its last failure, as `getLastError` answered it. */
  lastError: string | null;
  connectionErrors: number;
  companyFilePath: string | null;
  xmlVersion: string | null;
  /** The message set the session's first message asked about (at-most-once recovery). */
  recoveryMessageSetId: string | null;
  /** The Requests handed over in it, in order. */
  requestIds: string[];
}

export interface BundleConnection {
  id: string;
  status: string;
  statusReason: string | null;
  companyFile: {
    path: string | null;
    companyName: string | null;
    /** The company file's identity as the service recorded it (its stamped file ID), or null. */
    identity: string | null;
    product: string | null;
    xmlVersion: string | null;
    country: string | null;
  };
  /** The evidence the diagnosis reads (requests/diagnosis.ts, connections/check-in-estimate.ts). */
  checkIn: {
    lastCheckInAt: string | null;
    lastSeenAt: string | null;
    /** How long the connector had been silent when it last checked in (its observed schedule). */
    checkInGapMs: number | null;
    recentCheckIns: string[];
    lastConnectionErrorCode: string | null;
    retryAt: string | null;
    sharedConnectorAt: string | null;
    loginRefusedAt: string | null;
    sessionInterruptedAt: string | null;
  };
  /** Status changes inside the window, oldest first. */
  statusChanges: Array<{
    previousStatus: string;
    status: string;
    statusReason: string | null;
    changedAt: string;
  }>;
}

export interface SupportBundle {
  objectType: "support_bundle";
  bundleVersion: typeof BUNDLE_VERSION;
  generatedAt: string;
  projectId: string;
  mode: "live" | "test";
  window: { since: string; until: string };
  endUser: EndUserResource;
  connection: BundleConnection | null;
  requests: BundleRequest[];
  sessions: BundleSession[];
  webhookDeliveries: Array<DeliveryResource & { requestId: string | null }>;
  truncated: { requestsLeftOut: number; deliveriesLeftOut: number; note: string } | null;
  notes: string[];
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** A bundle's name for a session: stable, and not the ticket's hash itself. */
export const sessionLabel = (ticketHash: string): string =>
  `ses_${createHash("sha256").update(`support-bundle:${ticketHash}`).digest("hex").slice(0, 20)}`;

const DURATION = /^(\d{1,6})([smhd])$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A window bound: an ISO 8601 timestamp, or a duration before now (`90m`, `2h`, `7d`). Anything
 * else is INVALID_PARAMETER naming `param`.
 */
export function windowBound(text: string, nowMs: number, param: "since" | "until"): Date {
  const duration = DURATION.exec(text);
  if (duration) return new Date(nowMs - Number(duration[1]) * (UNIT_MS[duration[2] as string] as number));
  const ms = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(ms))
    throw new ServiceError("INVALID_PARAMETER", {
      param,
      message: `\`${param}\` must be an ISO 8601 timestamp (2026-05-01T09:00:00Z) or a duration before now (30m, 2h, 7d).`,
    });
  return new Date(ms);
}

/** The window asked for: `since` defaults to a day before `until`, `until` to now. */
export function bundleWindow(
  nowMs: number,
  query: { since?: string | undefined; until?: string | undefined },
): BundleWindow {
  const until = query.until === undefined ? new Date(nowMs) : windowBound(query.until, nowMs, "until");
  const since =
    query.since === undefined
      ? new Date(until.getTime() - 86_400_000)
      : windowBound(query.since, nowMs, "since");
  if (since.getTime() > until.getTime())
    throw new ServiceError("INVALID_PARAMETER", {
      param: "since",
      message: "`since` must not be after `until`.",
    });
  return { since, until };
}

function connectionView(
  deps: Deps,
  row: NonNullable<Awaited<ReturnType<typeof findConnectionForEndUser>>>,
  changes: Awaited<ReturnType<typeof bundleStatusChanges>>,
): BundleConnection {
  const seen = deps.activity.connection(row);
  return {
    id: row.id,
    status: row.status,
    statusReason: row.status_reason,
    companyFile: {
      path: row.company_file_path,
      companyName: row.company_name,
      identity: row.file_identity,
      product: row.product,
      xmlVersion: row.xml_version,
      country: row.country,
    },
    checkIn: {
      lastCheckInAt: iso(row.last_check_in_at),
      lastSeenAt: iso(lastSeenAt(seen)),
      checkInGapMs: row.check_in_gap_ms,
      recentCheckIns: row.recent_check_ins.map((ms) => new Date(ms).toISOString()),
      lastConnectionErrorCode: row.last_connection_error_code,
      retryAt: iso(row.retry_at),
      sharedConnectorAt: iso(row.shared_connector_at),
      loginRefusedAt: iso(row.login_refused_at),
      sessionInterruptedAt: iso(row.session_interrupted_at),
    },
    statusChanges: changes.map((c) => ({
      previousStatus: c.previous_status,
      status: c.status,
      statusReason: c.status_reason,
      changedAt: c.changed_at.toISOString(),
    })),
  };
}

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8");

/** `GET /v1/end-users/{id}/support-bundle`: the bundle of the end user in the tenant's mode. */
export async function supportBundle(
  deps: Deps,
  tenant: Tenant,
  endUserId: string,
  query: { since?: string | undefined; until?: string | undefined },
): Promise<SupportBundle> {
  const window = bundleWindow(deps.clock.now(), query);
  const endUser = await getEndUser(deps, tenant, endUserId);
  const connectionRow = await findConnectionForEndUser(deps.db, tenant.projectId, endUserId);
  const notes = [
    "Messages and answers are shown as GET /v1/requests/{id}/messages shows them: secrets masked.",
    "Connector sessions are recorded per session (phase, last error, when the application last answered), not per SOAP call: the calls of a session are read from its Requests' timelines.",
  ];
  const rows = await bundleRequests(deps.db, tenant, endUserId, window, MAX_REQUESTS);
  if (rows.length === MAX_REQUESTS)
    notes.push(`Only the newest ${MAX_REQUESTS} Requests of the window are read: narrow the window.`);
  const sessionRows = connectionRow
    ? await bundleSessions(deps.db, connectionRow.id, window, MAX_SESSIONS)
    : [];
  const labels = new Map(sessionRows.map((s) => [s.ticket_hash, sessionLabel(s.ticket_hash)]));
  const connection = connectionRow
    ? connectionView(deps, connectionRow, await bundleStatusChanges(deps.db, connectionRow.id, window))
    : null;
  const requests: BundleRequest[] = [];
  for (const stored of rows) {
    const row = await asOfNow(deps, stored);
    const request = await serializeRequest(deps, row);
    requests.push({
      request,
      messages: await requestMessages(deps, row),
      sessionId:
        row.ticket_hash === null ? null : (labels.get(row.ticket_hash) ?? sessionLabel(row.ticket_hash)),
      background: row.background,
      waitingReasons: waitingReasonsOf(request, connection?.statusChanges ?? [], window.until.getTime()),
    });
  }
  const sessions: BundleSession[] = sessionRows.map((s) => ({
    id: labels.get(s.ticket_hash) as string,
    openedAt: s.created_at.toISOString(),
    closedAt: iso(s.closed_at),
    phase: s.phase,
    lastActivityAt: s.last_activity_at.toISOString(),
    lastWorkAt: s.last_work_at.toISOString(),
    ledgerAnsweredAt: iso(s.ledger_answered_at),
    lastError: s.last_error,
    connectionErrors: s.connection_errors,
    companyFilePath: s.company_file_path,
    xmlVersion: s.xml_version,
    recoveryMessageSetId: s.recovery_message_set_id,
    requestIds: rows.filter((r) => r.ticket_hash === s.ticket_hash).map((r) => r.id),
  }));
  const webhookDeliveries: SupportBundle["webhookDeliveries"] = [];
  for (const { delivery, eventData } of await bundleDeliveries(
    deps.db,
    tenant,
    endUserId,
    window,
    MAX_DELIVERIES,
  )) {
    const data = JSON.parse(eventData) as { endUserId?: unknown; objectType?: unknown; id?: unknown };
    if (data.endUserId !== endUserId) continue;
    const requestId = data.objectType === "request" && typeof data.id === "string" ? data.id : null;
    webhookDeliveries.push({ ...serializeDelivery(delivery), requestId });
  }
  const bundle: SupportBundle = {
    objectType: "support_bundle",
    bundleVersion: BUNDLE_VERSION,
    generatedAt: new Date(deps.clock.now()).toISOString(),
    projectId: tenant.projectId,
    mode: tenant.mode,
    window: { since: window.since.toISOString(), until: window.until.toISOString() },
    endUser,
    connection,
    requests,
    sessions,
    webhookDeliveries,
    truncated: null,
    notes,
  };
  return bounded(bundle, deps.config.SUPPORT_BUNDLE_MAX_BYTES);
}

/**
 * Leaves out the oldest Requests (and the deliveries of their events) until the document fits in
 * `maxBytes`; then, if it still does not fit, the oldest deliveries and sessions.
 */
export function bounded(bundle: SupportBundle, maxBytes: number): SupportBundle {
  const truncatedNote = {
    requestsLeftOut: 0,
    deliveriesLeftOut: 0,
    note: `The bundle was larger than SUPPORT_BUNDLE_MAX_BYTES (${maxBytes}): the oldest Requests were left out first. Narrow the window (since/until) to see them.`,
  };
  // Room for the note itself.
  const total = bytesOf({ ...bundle, truncated: truncatedNote }) + 40;
  if (bytesOf(bundle) <= maxBytes) return bundle;
  let excess = total - maxBytes;
  let dropRequests = 0;
  const droppedIds = new Set<string>();
  const deliveriesOf = (id: string) => bundle.webhookDeliveries.filter((d) => d.requestId === id);
  while (excess > 0 && dropRequests < bundle.requests.length) {
    const entry = bundle.requests[dropRequests] as BundleRequest;
    excess -= bytesOf(entry) + 1;
    for (const d of deliveriesOf(entry.request.id)) excess -= bytesOf(d) + 1;
    droppedIds.add(entry.request.id);
    dropRequests += 1;
  }
  let deliveries = bundle.webhookDeliveries.filter(
    (d) => d.requestId === null || !droppedIds.has(d.requestId),
  );
  let deliveriesLeftOut = bundle.webhookDeliveries.length - deliveries.length;
  while (excess > 0 && deliveries.length > 0) {
    excess -= bytesOf(deliveries[0]) + 1;
    deliveries = deliveries.slice(1);
    deliveriesLeftOut += 1;
  }
  // A left-out Request is named nowhere in the bundle.
  let sessions = bundle.sessions.map((s) => ({
    ...s,
    requestIds: s.requestIds.filter((id) => !droppedIds.has(id)),
  }));
  while (excess > 0 && sessions.length > 0) {
    excess -= bytesOf(sessions[0]) + 1;
    sessions = sessions.slice(1);
  }
  return {
    ...bundle,
    requests: bundle.requests.slice(dropRequests),
    sessions,
    webhookDeliveries: deliveries,
    truncated: { ...truncatedNote, requestsLeftOut: dropRequests, deliveriesLeftOut },
  };
}
