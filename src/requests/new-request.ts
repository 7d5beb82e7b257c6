import type { NewRequestRow } from "../store/requests.ts";
import { timelineEntry } from "./timeline.ts";

/** What a caller decides about a new Request; everything else starts empty. */
export type NewRequestFields = Pick<
  NewRequestRow,
  | "id"
  | "project_id"
  | "is_test"
  | "end_user_id"
  | "connection_id"
  | "operation_id"
  | "method"
  | "path"
  | "mode"
  | "is_write"
  | "request_xml"
  | "queue_ttl_expires_at"
  | "idempotency_key_present"
  | "previous_request_id"
  | "caller_instance_id"
  | "background"
> & {
  status: "queued" | "waiting_for_connection";
  /** The message set's `onError` (`request_xml` holds its messages). */
  request_on_error?: "stopOnError" | "continueOnError";
  /** The records a write changes, when it changes existing ones. */
  write_targets?: string[];
  /** A batch's members (ledger/batch.ts). */
  batch?: unknown;
  /** The call's JSON input (JSON text, secrets masked), shown by the messages view. */
  input?: string | null;
  /** The secret values `request_xml` holds masked, sealed (decision 0032). */
  request_secrets?: string | null;
  /** Goes in a message set of its own (decision 0036). */
  alone?: boolean;
  /** The W3C `traceparent` of the Request's trace, while tracing is on (decision 0048). */
  traceparent?: string;
};

/** Why a new request is refused at admission: it is created `failed` with this error. */
export interface Refusal {
  /** The stored error body. */
  error: unknown;
  /** The timeline entry's detail. */
  detail: string;
}

/**
 * A just-accepted Request row (nothing sent, nothing applied), with its first timeline entry; or,
 * with a `refusal`, a request refused at admission: created `failed` and complete, never queued.
 * A read's outcome is `not_applicable` from the start (spec: "`not_applicable` means a read").
 */
export function newRequestRow(
  fields: NewRequestFields,
  nowMs: number,
  refusal: Refusal | null = null,
): NewRequestRow {
  const now = new Date(nowMs);
  const status = refusal ? "failed" : fields.status;
  return {
    ...fields,
    status,
    outcome: fields.is_write ? "not_applied" : "not_applicable",
    message_set_id: null,
    ticket_hash: null,
    sent_at: null,
    connector_asked_at: null,
    completed_at: refusal ? now : null,
    waiting_reason: null,
    recovered: false,
    xml_version: null,
    status_code: null,
    status_severity: null,
    timeline: [timelineEntry(status, refusal?.detail ?? "Request accepted", nowMs, now)],
    warnings: [],
    result: null,
    error: refusal?.error ?? null,
    created_at: now,
    updated_at: now,
  };
}
