import { sql } from "kysely";
import type { Deps } from "../deps.ts";
import type { ErrorCode } from "../errors/catalogue.ts";
import { toErrorBody } from "../errors/render.ts";
import { ServiceError, type ErrorBody } from "../errors/service-error.ts";
import { summarizeResponse, withXmlVersion } from "../ledger/xml/message-set.ts";
import { randomGuid } from "../platform/random.ts";
import { findConnectionById, updateConnection } from "../store/connections.ts";
import {
  insertRequest,
  transitionRequest,
  waitingRequests,
  type NewRequestRow,
  type RequestChanges,
  type RequestRow,
} from "../store/requests.ts";
import { isSettled, sourcesOf, type RequestStatus } from "./lifecycle.ts";
import { operationHandler } from "./operations.ts";
import { timelineEntry } from "./timeline.ts";

/**
 * The Request engine's core transitions. Every change of a request's status goes through
 * {@link transition}, which checks the lifecycle table, appends to the timeline and wakes waiters.
 */
export const connectionChannel = (connectionId: string): string => `conn:${connectionId}`;
export const requestChannel = (requestId: string): string => `req:${requestId}`;

export function errorBodyOf(deps: Deps, error: ServiceError, requestId: string): ErrorBody {
  return toErrorBody(error, requestId, deps.config.publicUrl);
}

export async function transition(
  deps: Deps,
  row: Pick<RequestRow, "id" | "created_at" | "connection_id">,
  to: RequestStatus,
  changes: RequestChanges,
  detail: string | null,
  from: readonly RequestStatus[] = sourcesOf(to),
): Promise<RequestRow | null> {
  const now = deps.clock.now();
  const updated = await transitionRequest(
    deps.db,
    row.id,
    from,
    { ...changes, status: to, updated_at: new Date(now) },
    timelineEntry(to, detail, now, row.created_at),
  );
  if (updated) {
    // Callers wait for a settled request; held connector calls wait for queued work.
    if (isSettled(to)) await deps.store.notifier.notify(requestChannel(row.id));
    if (to === "queued" && row.connection_id)
      await deps.store.notifier.notify(connectionChannel(row.connection_id));
  }
  return updated;
}

/** Ends a request that never reached the application. */
export async function endUnsent(
  deps: Deps,
  row: RequestRow,
  to: "canceled" | "failed",
  error: ServiceError,
  detail: string,
): Promise<RequestRow | null> {
  const now = deps.clock.now();
  return transition(
    deps,
    row,
    to,
    {
      outcome: "not_applied",
      completed_at: new Date(now),
      waiting_reason: null,
      error: errorBodyOf(deps, error, row.id),
    },
    detail,
    ["queued", "waiting_for_connection"],
  );
}

export async function createRequest(deps: Deps, row: NewRequestRow): Promise<void> {
  await insertRequest(deps.db, row);
  if (row.connection_id) await deps.store.notifier.notify(connectionChannel(row.connection_id));
}

/**
 * Hands the next request of a connection to the connector: the oldest queued request whose queue
 * TTL has not passed, only when nothing else is in flight. One statement claims it (row lock with
 * SKIP LOCKED, so two instances never claim the same row), commits `sent`, and stamps the session
 * and connection; only then is the XML returned (architecture §3: `sent` before the XML leaves).
 */
export async function claimNext(
  deps: Deps,
  connectionId: string,
  ticketHash: string,
  xmlVersion: string,
): Promise<{ row: Pick<RequestRow, "id" | "is_write" | "created_at">; xml: string } | null> {
  const now = new Date(deps.clock.now());
  const messageSetId = randomGuid();
  const entry = JSON.stringify([timelineEntry("sent", "Handed to the connector", now.getTime(), now)]);
  const result = await sql<{
    id: string;
    is_write: boolean;
    created_at: Date;
    request_xml: string | null;
    message_set_id: string | null;
  }>`
    with next as (
      select id from requests
      where connection_id = ${connectionId} and status = 'queued'
        and (queue_ttl_expires_at is null or queue_ttl_expires_at > ${now})
        and not exists (select 1 from requests where connection_id = ${connectionId} and status = 'sent')
      order by seq limit 1
      for update skip locked
    ), claimed as (
      update requests r set
        status = 'sent', sent_at = ${now}, ticket_hash = ${ticketHash}, waiting_reason = null,
        xml_version = ${xmlVersion}, updated_at = ${now},
        message_set_id = case when r.is_write then ${messageSetId} else null end,
        outcome = case when r.is_write then 'pending' else 'not_applicable' end,
        timeline = r.timeline || jsonb_set(${entry}::jsonb, '{0,elapsedMs}',
          to_jsonb(greatest(0, floor(extract(epoch from (${now}::timestamptz - r.created_at)) * 1000)::bigint)))
      from next where r.id = next.id
      returning r.id, r.is_write, r.created_at, r.request_xml, r.message_set_id
    ), touch_session as (
      update connector_sessions set last_work_at = ${now}
      where ticket_hash = ${ticketHash} and exists (select 1 from claimed)
    ), touch_connection as (
      update connections set last_request_at = ${now}
      where id = ${connectionId} and exists (select 1 from claimed)
    )
    select * from claimed
  `.execute(deps.db);
  const claimed = result.rows[0];
  if (!claimed) {
    await expireQueued(deps, connectionId);
    return null;
  }
  const document = withXmlVersion(claimed.request_xml ?? "", xmlVersion);
  const xml = claimed.message_set_id
    ? document.replace(
        /<QBXMLMsgsRq\b([^>]*)>/,
        `<QBXMLMsgsRq$1 newMessageSetID="${claimed.message_set_id}">`,
      )
    : document;
  return { row: claimed, xml };
}

/** Queued requests whose queue TTL passed are ended (REQUEST_EXPIRED); they are never sent. */
async function expireQueued(deps: Deps, connectionId: string): Promise<void> {
  const now = new Date(deps.clock.now());
  const expired = await deps.db
    .selectFrom("requests")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .where("status", "in", ["queued", "waiting_for_connection"])
    .where("queue_ttl_expires_at", "<=", now)
    .execute();
  for (const row of expired) {
    await endUnsent(
      deps,
      row,
      "canceled",
      new ServiceError("REQUEST_EXPIRED"),
      "Queue TTL elapsed before the request could be sent",
    );
  }
}

/** Completes a sent request from the application's answer (or the HRESULT that replaced it). */
export async function completeFromAnswer(
  deps: Deps,
  row: RequestRow,
  answer: { responseXml: string; hresult: string; message: string },
): Promise<RequestRow | null> {
  const connection = row.connection_id ? await findConnectionById(deps.db, row.connection_id) : null;
  const now = deps.clock.now();
  const base = { completed_at: new Date(now) };
  if (answer.responseXml.trim() === "") {
    // The request processor refused the whole message set: nothing was applied.
    const code: ErrorCode =
      answer.hresult.toLowerCase() === "0x80040414" ? "LEDGER_MODAL_DIALOG_OPEN" : "LEDGER_REQUEST_ERROR";
    const error = new ServiceError(code, {
      integrationCode: answer.hresult || null,
      outcome: "not_applied",
      ...(answer.message ? { message: `The application rejected the request: ${answer.message}` } : {}),
    });
    return transition(
      deps,
      row,
      "failed",
      {
        ...base,
        outcome: row.is_write ? "not_applied" : "not_applicable",
        error: errorBodyOf(deps, error, row.id),
      },
      `Application error ${answer.hresult}`,
      ["sent"],
    );
  }
  const summary = summarizeResponse(answer.responseXml);
  const handler = operationHandler(row.operation_id);
  if (!summary || !handler || !connection) {
    const error = new ServiceError("LEDGER_RESPONSE_UNREADABLE", {
      outcome: row.is_write ? "unknown" : "not_applicable",
    });
    return transition(
      deps,
      row,
      row.is_write ? "outcome_unknown" : "failed",
      {
        ...base,
        outcome: row.is_write ? "unknown" : "not_applicable",
        error: errorBodyOf(deps, error, row.id),
      },
      "The answer could not be read",
      ["sent"],
    );
  }
  const first = summary.statuses[0];
  const ledger = { status_code: first?.statusCode ?? null, status_severity: first?.statusSeverity ?? null };
  const decoded = handler.decode({
    responseXml: answer.responseXml,
    summary,
    request: row,
    connection,
    nowMs: now,
  });
  if (decoded.ok) {
    const done = await transition(
      deps,
      row,
      "succeeded",
      {
        ...base,
        ...ledger,
        outcome: row.is_write ? "applied" : "not_applicable",
        result: decoded.result,
        warnings: decoded.warnings,
        error: null,
      },
      "The application answered",
      ["sent"],
    );
    if (done && row.connection_id)
      await updateConnection(deps.db, row.connection_id, { last_successful_request_at: new Date(now) });
    return done;
  }
  return transition(
    deps,
    row,
    "failed",
    {
      ...base,
      ...ledger,
      outcome: row.is_write ? "not_applied" : "not_applicable",
      error: errorBodyOf(deps, decoded.error, row.id),
    },
    `The application answered with status ${first?.statusCode ?? "?"}`,
    ["sent"],
  );
}

/**
 * The session carrying a sent request broke (re-authentication, connection error, close without an
 * answer, or a restart of the service). Writes become `outcome_unknown` and wait for recovery;
 * reads fail with LEDGER_READ_INTERRUPTED (safe to retry). Never re-sent.
 */
export async function interruptSent(deps: Deps, row: RequestRow, why: string): Promise<RequestRow | null> {
  const now = deps.clock.now();
  if (row.is_write) {
    const error = new ServiceError("LEDGER_WRITE_OUTCOME_UNKNOWN", { details: { requestId: row.id } });
    return transition(
      deps,
      row,
      "outcome_unknown",
      { outcome: "unknown", error: errorBodyOf(deps, error, row.id) },
      why,
      ["sent"],
    );
  }
  const error = new ServiceError("LEDGER_READ_INTERRUPTED");
  return transition(
    deps,
    row,
    "failed",
    { completed_at: new Date(now), outcome: "not_applicable", error: errorBodyOf(deps, error, row.id) },
    why,
    ["sent"],
  );
}

/**
 * Resolves an `outcome_unknown` write from the recovery query's answer: a stored result completes
 * it (`recovered: true`); no stored state (status 600) means it was not applied.
 */
export async function resolveRecovery(
  deps: Deps,
  row: RequestRow,
  responseXml: string,
): Promise<RequestRow | null> {
  const summary = summarizeResponse(responseXml);
  const now = deps.clock.now();
  const stored = summary !== null && summary.messageSetStatusCode !== 600 && summary.statuses.length > 0;
  if (stored) {
    const sent = { ...row, status: "sent" };
    const connection = row.connection_id ? await findConnectionById(deps.db, row.connection_id) : null;
    const handler = operationHandler(row.operation_id);
    const first = summary.statuses[0];
    const decoded =
      handler && connection
        ? handler.decode({ responseXml, summary, request: sent, connection, nowMs: now })
        : null;
    if (decoded?.ok) {
      return transition(
        deps,
        row,
        "succeeded",
        {
          completed_at: new Date(now),
          outcome: "applied",
          recovered: true,
          status_code: first?.statusCode ?? null,
          status_severity: first?.statusSeverity ?? null,
          result: decoded.result,
          warnings: decoded.warnings,
          error: null,
        },
        "Recovered: the application had applied the write",
        ["outcome_unknown"],
      );
    }
    const error = decoded && !decoded.ok ? decoded.error : new ServiceError("LEDGER_RESPONSE_UNREADABLE");
    return transition(
      deps,
      row,
      "failed",
      {
        completed_at: new Date(now),
        outcome: "not_applied",
        recovered: true,
        status_code: first?.statusCode ?? null,
        status_severity: first?.statusSeverity ?? null,
        error: errorBodyOf(deps, error, row.id),
      },
      "Recovered: the application had refused the write",
      ["outcome_unknown"],
    );
  }
  const error = new ServiceError("LEDGER_CONNECTION_ERROR", {
    message:
      "The connection broke before the application processed this write; the application confirmed it was not applied. It is safe to send it again.",
    outcome: "not_applied",
  });
  return transition(
    deps,
    row,
    "failed",
    { completed_at: new Date(now), outcome: "not_applied", error: errorBodyOf(deps, error, row.id) },
    "Recovery: the application holds no result, the write was not applied",
    ["outcome_unknown"],
  );
}

/** Fails the sync requests waiting on a connection whose application cannot be reached now. */
export async function failWaitingSync(
  deps: Deps,
  connectionId: string,
  error: ServiceError,
  detail: string,
): Promise<void> {
  for (const row of await waitingRequests(deps.db, connectionId, ["queued", "waiting_for_connection"])) {
    if (row.mode === "sync") await endUnsent(deps, row, "failed", error, detail);
  }
}
