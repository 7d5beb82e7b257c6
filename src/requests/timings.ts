import type { RequestRow } from "../store/requests.ts";

/**
 * Where a Request's time went (issue 28, decision 0047), from the stamps its row keeps. Pure
 * functions: the Request resource's `timings`, the `Server-Timing` header of the HTTP call that
 * answered it and the traces all cut time at the same points.
 *
 * ```
 *  created_at ──connector──▶ connector_asked_at ──queue──▶ sent_at ──ledger──▶ completed_at
 *  (admission)   no session that      (the Web Connector     (handed    the application    (its answer
 *                would take it yet    opened the session     over)      answering          settled it)
 *                                     that took it)
 * ```
 *
 * - `connector`: from admission until the Web Connector opened the session that was handed the
 *   Request (0 when that session was open already). Time during which an earlier session was open
 *   but ended without taking it counts here: the Request waited for the connector to ask again.
 * - `queue`: the rest of the wait before the hand-over, inside that session: behind other Requests,
 *   the company file opening, write spacing, a write's recovery.
 * - `ledger`: from the hand-over until the answer that settled it.
 * - `svc`: the HTTP call's own time, what the three parts above do not cover of it.
 */

/** The stamps of a Request the timings are cut from, in epoch milliseconds. */
export interface RequestStamps {
  createdAtMs: number;
  /** When the Web Connector opened the session that took it; null until handed over. */
  connectorAskedAtMs: number | null;
  sentAtMs: number | null;
  completedAtMs: number | null;
}

/** The stamps of a stored Request. */
export function stampsOf(
  row: Pick<RequestRow, "created_at" | "connector_asked_at" | "sent_at" | "completed_at">,
): RequestStamps {
  return {
    createdAtMs: row.created_at.getTime(),
    connectorAskedAtMs: row.connector_asked_at?.getTime() ?? null,
    sentAtMs: row.sent_at?.getTime() ?? null,
    completedAtMs: row.completed_at?.getTime() ?? null,
  };
}

/**
 * The Request resource's `timings` (spec: Request) plus `connectorMs`. `queuedMs` is the whole wait
 * before the hand-over (connector and queue parts together, or admission to the end of a Request
 * never handed over); `connectorMs` its connector part (null unless handed over, and for a Request
 * handed over before the stamp existed); `ledgerMs` hand-over to answer; `totalMs` admission to end.
 */
export interface RequestTimings {
  queuedMs: number | null;
  connectorMs: number | null;
  ledgerMs: number | null;
  totalMs: number | null;
}

/** The Request's timings; null where the stamps do not tell yet. */
export function requestTimings(stamps: RequestStamps): RequestTimings {
  const { createdAtMs, sentAtMs, completedAtMs } = stamps;
  const waitEnd = sentAtMs ?? completedAtMs;
  return {
    queuedMs: waitEnd === null ? null : span(createdAtMs, waitEnd),
    connectorMs: connectorPart(stamps),
    ledgerMs: sentAtMs !== null && completedAtMs !== null ? span(sentAtMs, completedAtMs) : null,
    totalMs: completedAtMs === null ? null : span(createdAtMs, completedAtMs),
  };
}

/** The connector part of a handed-over Request's wait (asked before admission: 0). */
function connectorPart(stamps: RequestStamps): number | null {
  const { createdAtMs, connectorAskedAtMs, sentAtMs } = stamps;
  if (sentAtMs === null || connectorAskedAtMs === null) return null;
  return span(createdAtMs, Math.min(Math.max(createdAtMs, connectorAskedAtMs), sentAtMs));
}

/** The names of `Server-Timing`'s metrics, in the order they are written. */
export const SERVER_TIMING_NAMES = ["queue", "connector", "ledger", "svc"] as const;

/** One `Server-Timing` metric: `dur` null when this call cannot tell it (its `desc` says why). */
export interface ServerTimingMetric {
  name: (typeof SERVER_TIMING_NAMES)[number];
  durMs: number | null;
  desc: string;
}

/** What answered the HTTP call. */
export type AnswerSource =
  /** The Request engine, with the Request's row as it was when the answer was written. */
  | { kind: "request"; stamps: RequestStamps }
  /** The end user's mirror (`Svc-Max-Staleness-Seconds`): no Request, no connector, no application. */
  | { kind: "mirror" }
  /** The service alone (refused before a Request existed, or answered without one). */
  | { kind: "none" };

/**
 * The `Server-Timing` metrics of one HTTP call that lasted from `callStartMs` to `callEndMs`.
 * The Request's parts are its whole durations (for a replayed Request, those of the original run);
 * `svc` is the call's wall time less the parts of the Request that fell inside the call, so for a
 * sync call `connector + queue + ledger + svc` is the call's wall time. A part that is still running
 * (not handed over yet, no answer yet) shows how long it has run so far, and says so; while nothing
 * is handed over the wait is one `queue` figure (connector and queue are told apart at hand-over).
 */
export function serverTimingMetrics(
  source: AnswerSource,
  callStartMs: number,
  callEndMs: number,
): ServerTimingMetric[] {
  const wallMs = span(callStartMs, callEndMs);
  if (source.kind !== "request") {
    const why = source.kind === "mirror" ? "answered from the mirror" : "no Request";
    return [
      { name: "queue", durMs: null, desc: why },
      { name: "connector", durMs: null, desc: why },
      { name: "ledger", durMs: null, desc: why },
      {
        name: "svc",
        durMs: wallMs,
        desc: source.kind === "mirror" ? "service (mirror answer)" : "service",
      },
    ];
  }
  const { createdAtMs, sentAtMs, completedAtMs } = source.stamps;
  const connectorMs = connectorPart(source.stamps);
  const intervals: Array<[number, number]> = [];
  let queue: ServerTimingMetric;
  let connector: ServerTimingMetric;
  let ledger: ServerTimingMetric;
  if (sentAtMs === null) {
    const waitEnd = completedAtMs ?? callEndMs;
    intervals.push([createdAtMs, waitEnd]);
    const ended = completedAtMs === null ? "waiting so far" : "never handed over";
    queue = { name: "queue", durMs: span(createdAtMs, waitEnd), desc: `${ended} (connector included)` };
    connector = { name: "connector", durMs: null, desc: "known at hand-over" };
    ledger = { name: "ledger", durMs: null, desc: "not handed over" };
  } else {
    const askedMs = createdAtMs + (connectorMs ?? 0);
    intervals.push([createdAtMs, sentAtMs]);
    queue = { name: "queue", durMs: span(askedMs, sentAtMs), desc: "in the session before hand-over" };
    connector =
      connectorMs === null
        ? { name: "connector", durMs: null, desc: "not recorded" }
        : { name: "connector", durMs: connectorMs, desc: "waiting for the Web Connector" };
    const answerMs = completedAtMs ?? callEndMs;
    intervals.push([sentAtMs, answerMs]);
    ledger = {
      name: "ledger",
      durMs: span(sentAtMs, answerMs),
      desc: completedAtMs === null ? "no answer yet (so far)" : "the application",
    };
  }
  const covered = intervals.reduce((sum, [from, to]) => sum + overlap(from, to, callStartMs, callEndMs), 0);
  return [queue, connector, ledger, { name: "svc", durMs: Math.max(0, wallMs - covered), desc: "service" }];
}

/** The header's value: `name;dur=12;desc="…"` per metric, comma separated (W3C Server Timing). */
export function formatServerTiming(metrics: readonly ServerTimingMetric[]): string {
  return metrics
    .map(
      (m) => `${m.name}${m.durMs === null ? "" : `;dur=${m.durMs}`};desc="${m.desc.replace(/["\\]/g, "")}"`,
    )
    .join(", ");
}

function span(fromMs: number, toMs: number): number {
  return Math.max(0, Math.round(toMs - fromMs));
}

function overlap(from: number, to: number, start: number, end: number): number {
  return Math.max(0, Math.min(to, end) - Math.max(from, start));
}
