/**
 * The Request state machine (spec: States and transitions), as the one table the engine runs.
 *
 *   queued ──hand_over──▶ sent ──answered──▶ succeeded
 *     │  ▲                 │ ├──refused──▶ failed
 *     │  │                 │ ├──result_lost (write)──▶ outcome_unknown ──recovered_*──▶ succeeded | failed
 *     │  │                 │ └──read_interrupted (read)──▶ failed
 *     │  └─connector_back──┐
 *     └─connector_lost (async)─▶ waiting_for_connection
 *   queued | waiting_for_connection ──cancel | queue_ttl (async)──▶ canceled
 *   sent ──set_refused──▶ queued (its shared message set refused unprocessed: sent again alone)
 *   queued ──sync_timeout (sync)──▶ canceled
 *   queued ──ledger_unreachable (sync)──▶ failed
 *   sent | outcome_unknown ──next_step──▶ queued (a Request of several message sets: its next one)
 *
 * A Request of several message sets (decision 0046) is past its first step once one of them was
 * answered (`step` > 0): an earlier set may have written, so it is never canceled, timed out unsent,
 * expired or failed unsent from then on (the transitions marked `unstarted`).
 *
 * Every change of `status` names one of these transitions: the engine's compare-and-set moves a
 * request only from the transition's `from` statuses and only when its guards (mode, read or write)
 * hold, and the connector's claim takes its statuses from `hand_over`. A request refused at
 * admission is created `failed` (no transition: it was never queued). `sent` can never be
 * canceled, and a sent write is never sent again — unless the application refused its message set
 * unprocessed as a whole (`set_refused`): then nothing of it reached the company file.
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

/** A transition: where it may start, where it ends, and the requests it applies to. */
export interface TransitionRule {
  readonly from: readonly RequestStatus[];
  readonly to: RequestStatus;
  /** Only requests of this mode. */
  readonly mode?: "sync" | "async";
  /** Only writes (`true`) or only reads (`false`). */
  readonly isWrite?: boolean;
  /** Only a Request none of whose message sets was answered yet (decision 0046). */
  readonly unstarted?: true;
  /** The spec's row, or why the spec's rules require a transition its table does not list. */
  readonly basis: string;
}

/** The transitions. Anything not here is refused. */
export const TRANSITIONS = {
  hand_over: {
    from: ["queued"],
    to: "sent",
    basis: "spec: connector check-in delivers the request, its turn",
  },
  cancel: {
    from: ["queued", "waiting_for_connection"],
    to: "canceled",
    unstarted: true,
    basis: "spec: cancel operation, not yet sent",
  },
  sync_timeout: {
    from: ["queued"],
    to: "canceled",
    mode: "sync",
    unstarted: true,
    basis: "spec: caller's timeout elapses before sending (504 REQUEST_TIMEOUT_NOT_SENT)",
  },
  queue_ttl: {
    from: ["queued", "waiting_for_connection"],
    to: "canceled",
    mode: "async",
    unstarted: true,
    basis: "spec: queue TTL elapses, target status not shown (decision 0003: canceled, REQUEST_EXPIRED)",
  },
  answered: {
    from: ["sent"],
    to: "succeeded",
    basis: "spec: application answers, success",
  },
  refused: {
    from: ["sent"],
    to: "failed",
    basis: "spec: application answers, failure (a status code or an HRESULT instead of an answer)",
  },
  result_lost: {
    from: ["sent"],
    to: "outcome_unknown",
    isWrite: true,
    basis: "spec: sent (write), result cannot be confirmed",
  },
  read_interrupted: {
    from: ["sent"],
    to: "failed",
    isWrite: false,
    basis:
      "not in the table; required: a read whose session broke has no answer, cannot be canceled once sent, " +
      "has no sent → queued, and outcome_unknown is for writes: it fails LEDGER_READ_INTERRUPTED (retryable)",
  },
  recovered_applied: {
    from: ["outcome_unknown"],
    to: "succeeded",
    isWrite: true,
    basis: "not in the table; required: `recovered` becomes true when the stored result is read back",
  },
  recovered_not_applied: {
    from: ["outcome_unknown"],
    to: "failed",
    isWrite: true,
    basis:
      "not in the table; required: the recovery query shows the write refused or never applied, so its " +
      "outcome is known (not_applied)",
  },
  connector_back: {
    from: ["waiting_for_connection"],
    to: "queued",
    basis:
      "not in the table; required: waiting_for_connection is for an offline connection, and only queued " +
      "requests are handed over, in order, when the connector checks in",
  },
  connector_lost: {
    from: ["queued"],
    to: "waiting_for_connection",
    mode: "async",
    basis:
      "not in the table; required: waiting_for_connection applies to async requests waiting for an " +
      "offline connection, including those queued before the connection went offline",
  },
  set_refused: {
    from: ["sent"],
    to: "queued",
    basis:
      "not in the table; required (decision 0036): the application refused a message set that carried " +
      "several Requests as a whole, unprocessed, so nothing of it ran; each member is sent again alone, " +
      "in its place in the queue (at most once still holds: the first sending reached nothing)",
  },
  next_step: {
    from: ["sent", "outcome_unknown"],
    to: "queued",
    basis:
      "not in the table; required (decision 0046): a Request of several message sets (an upsert's read " +
      "then its write, a dependent batch's sets) goes back to the head of its queue, alone, once the " +
      "application answered a set (live, or from the recovery query's stored answer), for its next set; " +
      "each set is sent once with its own message-set ID, so at most once holds set by set",
  },
  ledger_unreachable: {
    from: ["queued"],
    to: "failed",
    mode: "sync",
    unstarted: true,
    basis:
      "not in the table; required: the connection codes (LEDGER_CANNOT_START, LEDGER_ACCESS_NOT_GRANTED, …) " +
      "reach a waiting sync caller when the connector reports them, instead of a timeout that hides them " +
      "(a file mode conflict is not one: such requests wait for retryAt)",
  },
} as const satisfies Record<string, TransitionRule>;

export type TransitionName = keyof typeof TRANSITIONS;

/** The transitions' names, in table order. */
export const TRANSITION_NAMES = Object.keys(TRANSITIONS) as TransitionName[];

/** Whether some transition moves a request (of some mode and kind) from `from` to `to`. */
export function isAllowed(from: RequestStatus, to: RequestStatus): boolean {
  return TRANSITION_NAMES.some((name) => {
    const rule: TransitionRule = TRANSITIONS[name];
    return rule.to === to && rule.from.includes(from);
  });
}

/** Whether transition `name` applies to a request in `status` of this mode and kind. */
export function applies(
  name: TransitionName,
  request: { status: string; mode: string; is_write: boolean; step?: number },
): boolean {
  const rule: TransitionRule = TRANSITIONS[name];
  return (
    (rule.from as readonly string[]).includes(request.status) &&
    (rule.mode === undefined || rule.mode === request.mode) &&
    (rule.isWrite === undefined || rule.isWrite === request.is_write) &&
    (rule.unstarted === undefined || (request.step ?? 0) === 0)
  );
}

/** Statuses a request waits in (not yet sent). */
export const WAITING: readonly RequestStatus[] = ["queued", "waiting_for_connection"];

/** Whether the caller's wait is over: final, or the outcome is unknown (the caller is told so). */
export function isSettled(status: string): boolean {
  return (
    status === "succeeded" || status === "failed" || status === "canceled" || status === "outcome_unknown"
  );
}

/** Final statuses: no transition leaves them. */
export function isFinal(status: RequestStatus): boolean {
  return REQUEST_STATUSES.every((to) => !isAllowed(status, to));
}
