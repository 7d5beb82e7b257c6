import type { Deps } from "../../deps.ts";
import {
  moveSessionPhase,
  type ConnectorSessionRow,
  type SessionChanges,
} from "../../store/connector-sessions.ts";

/**
 * The connector session machine (issue 24): where a session is in the protocol is one stored
 * column, `phase`, and every change of a session row goes through {@link moveSession} with a named
 * transition of {@link SESSION_TRANSITIONS}, which says from which phases it may start, where it
 * leads and which columns it writes (as requests/lifecycle.ts does for Requests). Two stamps are not
 * transitions: the activity stamps of connector calls (store/activity-stamps.ts) and the claim's
 * `last_work_at` when it hands a request over.
 *
 *   authenticate ─▶ opened ─ accept_file ─▶ ready ─ recover ─▶ recovering ─ recovered | recovery_lost ─▶ ready
 *                     │  refuse_file,             │  close_idle ─▶ closing ─ keep_open ─▶ ready
 *                     │  retry_open (stay)        │                   └─ finish ─▶ closed (the clean end, 100)
 *                     └──────────── close (from every open phase) ─────────────────▶ closed
 *
 * Two states are not stored, because something else records them: a request document in flight is
 * the Request's own `sent` status on the session's ticket (writing it twice would let the two
 * disagree), and a held `sendRequestXML` is the instance's memory of the call (session/memory.ts).
 * `state` (open | closed) is derived from the phase by the database (migration 0033).
 */
export const SESSION_PHASES = ["opened", "ready", "recovering", "closing", "closed"] as const;
export type SessionPhase = (typeof SESSION_PHASES)[number];

/** The phases of a session that has not ended. */
export const OPEN_PHASES = [
  "opened",
  "ready",
  "recovering",
  "closing",
] as const satisfies readonly SessionPhase[];

type Column = keyof SessionChanges;

export interface SessionTransition {
  readonly from: readonly SessionPhase[];
  /** The phase it leads to; `stay` keeps the phase (a change of what the session records). */
  readonly to: SessionPhase | "stay";
  readonly writes: readonly Column[];
}

export const SESSION_TRANSITIONS = {
  /** The first `sendRequestXML` reported the company file and the connection accepted it. */
  accept_file: {
    from: ["opened"],
    to: "ready",
    writes: ["ledger_answered_at", "xml_version", "company_file_path", "personal_data_allowed"],
  },
  /** The reported company file was refused; the reason is what `getLastError` answers. */
  refuse_file: { from: ["opened"], to: "stay", writes: ["last_error", "ledger_answered_at"] },
  /** `connectionError` with another company file path to try (at most twice). */
  retry_open: { from: ["opened"], to: "stay", writes: ["connection_errors"] },
  /** The claim handed an outcome-unknown write's recovery query over (in the claim's statement). */
  recover: { from: ["ready"], to: "recovering", writes: ["recovery_message_set_id", "last_work_at"] },
  /** The recovery query's answer came, resolving the writes or not (then `last_error` says why). */
  recovered: {
    from: ["recovering"],
    to: "ready",
    writes: ["recovery_message_set_id", "last_work_at", "last_error"],
  },
  /** `sendRequestXML` again instead of the recovery query's answer: lost; the claim hands it again. */
  recovery_lost: { from: ["recovering"], to: "ready", writes: ["recovery_message_set_id"] },
  /** Idle for `CONNECTOR_IDLE_CLOSE_MS`: the closing query is handed over. */
  close_idle: { from: ["ready"], to: "closing", writes: ["last_error"] },
  /** The closing query's answer came while work waited, or it was lost (`sendRequestXML` again). */
  keep_open: { from: ["closing"], to: "ready", writes: ["last_work_at"] },
  /** The closing query's answer came and nothing waits: the protocol's clean end (100). */
  finish: { from: ["closing"], to: "closed", writes: ["closed_at", "last_error"] },
  /** What `getLastError` answers from now on: an application failure, an unexpected answer, or nothing (null). */
  report: { from: OPEN_PHASES, to: "stay", writes: ["last_error"] },
  /**
   * The session ends: `closeConnection`, a newer check-in, ticket expiry, a hang-up, `connectionError`
   * "done" (also the recovery of a dead instance's sessions, store/instances.ts, for many at once).
   */
  close: { from: OPEN_PHASES, to: "closed", writes: ["closed_at", "last_error"] },
  /** Another instance holds the session's HTTP calls now (its connector's call reached it). */
  take_over: { from: OPEN_PHASES, to: "stay", writes: ["instance_id"] },
} as const satisfies Record<string, SessionTransition>;

export type SessionTransitionName = keyof typeof SESSION_TRANSITIONS;

/** The columns transition `N` writes. */
export type WritesOf<N extends SessionTransitionName> = (typeof SESSION_TRANSITIONS)[N]["writes"][number];

/**
 * Moves a session by transition `name`, writing `changes` (only the columns the transition lists:
 * the type says so), if it is still in one of the transition's phases: a compare-and-set, so a
 * move that lost a race changes nothing and returns null. The row as it is now otherwise.
 */
export async function moveSession<N extends SessionTransitionName>(
  deps: Pick<Deps, "db">,
  ticketHash: string,
  name: N,
  changes: Required<Pick<SessionChanges, WritesOf<N>>> | Pick<SessionChanges, WritesOf<N>>,
): Promise<ConnectorSessionRow | null> {
  const transition: SessionTransition = SESSION_TRANSITIONS[name];
  const written: SessionChanges = {};
  for (const column of transition.writes) {
    const value = (changes as SessionChanges)[column];
    if (value !== undefined) (written as Record<string, unknown>)[column] = value;
  }
  return moveSessionPhase(
    deps.db,
    ticketHash,
    transition.from,
    transition.to === "stay" ? null : transition.to,
    written,
  );
}

/** Whether the session has not ended. */
export function isOpen(session: Pick<ConnectorSessionRow, "phase">): boolean {
  return session.phase !== "closed";
}
