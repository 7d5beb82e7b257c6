import type { TimelineEntryRow } from "../store/schema.ts";

/** One timeline entry; `elapsedMs` counts from the request's creation. */
export function timelineEntry(
  status: string,
  detail: string | null,
  nowMs: number,
  createdAt: Date,
): TimelineEntryRow {
  return {
    at: new Date(nowMs).toISOString(),
    status,
    detail,
    elapsedMs: Math.max(0, nowMs - createdAt.getTime()),
  };
}
