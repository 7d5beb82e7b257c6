import type { Deps } from "../deps.ts";
import { queuePositionOf, type RequestRow } from "../store/requests.ts";
import { waitingFacts } from "./diagnosis.ts";
import { requestTimings, stampsOf } from "./timings.ts";

/**
 * The Request resource (spec: Request), plus `error` (architecture §5). `lookups: false` leaves out
 * what needs the store (queue position, waiting reason, diagnosis): an accepted Request is answered
 * even when the store stopped answering right after storing it (decision 0019).
 */
export async function serializeRequest(
  deps: Deps,
  row: RequestRow,
  options: { includeResult?: boolean; lookups?: boolean } = {},
) {
  const includeResult = options.includeResult ?? true;
  const lookups = options.lookups ?? true;
  const queuePosition = lookups ? await queuePositionOf(deps.db, row) : null;
  const facts = lookups
    ? await waitingFacts(deps, row, queuePosition)
    : { waitingReason: null, diagnosis: row.diagnosis ?? null };
  const timings = requestTimings(stampsOf(row));
  return {
    id: row.id,
    objectType: "request" as const,
    createdAt: row.created_at.toISOString(),
    projectId: row.project_id,
    endUserId: row.end_user_id,
    connectionId: row.connection_id,
    operationId: row.operation_id,
    method: row.method,
    path: row.path,
    mode: row.mode,
    status: row.status,
    outcome: row.outcome,
    sentAt: row.sent_at?.toISOString() ?? null,
    completedAt: row.completed_at?.toISOString() ?? null,
    durationMs: timings.totalMs,
    idempotencyKeyPresent: row.idempotency_key_present,
    previousRequestId: row.previous_request_id,
    waitingReason: facts.waitingReason,
    queuePosition,
    queueTtlExpiresAt: row.queue_ttl_expires_at?.toISOString() ?? null,
    // Decision 0047: the same cuts as the `Server-Timing` header of the call that answered it.
    timings,
    ledger: {
      xmlVersion: row.xml_version,
      messageSetId: row.message_set_id,
      statusCode: row.status_code,
      statusSeverity: row.status_severity,
    },
    warnings: row.warnings,
    recovered: row.recovered,
    timeline: row.timeline,
    diagnosis: facts.diagnosis,
    ...(includeResult ? { result: row.result ?? null } : {}),
    error: row.error ?? null,
  };
}
