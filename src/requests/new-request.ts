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
> & { status: "queued" | "waiting_for_connection" };

/** A just-accepted Request row (nothing sent, nothing applied), with its first timeline entry. */
export function newRequestRow(fields: NewRequestFields, nowMs: number): NewRequestRow {
  const now = new Date(nowMs);
  return {
    ...fields,
    outcome: "not_applied",
    message_set_id: null,
    ticket_hash: null,
    sent_at: null,
    completed_at: null,
    waiting_reason: null,
    recovered: false,
    xml_version: null,
    status_code: null,
    status_severity: null,
    timeline: [timelineEntry(fields.status, "Request accepted", nowMs, now)],
    warnings: [],
    result: null,
    error: null,
    created_at: now,
    updated_at: now,
  };
}
