import type { Deps } from "../../deps.ts";
import { systemClock, type Clock } from "../../platform/clock.ts";
import type { SessionMemory } from "./memory.ts";

/** `getLastError`: nothing to report; the connector pauses and asks again. */
export const NOOP = "NoOp";

/** receiveResponseXML: more may come; the connector asks again (0–99 is "percent done"). */
export const PROGRESS = 50;
/** receiveResponseXML: nothing left; the connector closes the session. */
export const DONE = 100;
/** receiveResponseXML: the ticket's session has ended. */
export const SESSION_ENDED = -1;
/** receiveResponseXML: an answer arrived while nothing was handed over. */
export const UNEXPECTED_ANSWER = -2;
/** receiveResponseXML: the application failed instead of answering (an HRESULT). */
export const APPLICATION_FAILED = -3;

/** Texts `getLastError` and `closeConnection` answer; the connector shows them to the end user. */
export const TEXTS = {
  unknownTicket:
    "The session ticket is not valid or has expired. The Web Connector will try again at its next update.",
  ended: "This update session has ended. The Web Connector will start a new one at its next update.",
  replaced: "This update session was replaced by a newer one from this computer. Nothing was lost.",
  expired: "This update session expired. The Web Connector will start a new one at its next update.",
  hungUp:
    "The connection to the service was interrupted. The Web Connector will try again at its next update.",
  unexpectedAnswer:
    "The service received an answer it had not asked for, so this update stops. The Web Connector will try again at its next update.",
  unreadableRecovery:
    "The accounting application's answer could not be read, so this update stops. The Web Connector will try again at its next update.",
} as const;

/** What the session's protocol steps share on one instance (built once by the endpoint). */
export interface ConnectorContext {
  deps: Deps;
  /** Aborted when the server shuts down: held calls return at once. */
  shutdown: AbortSignal;
  /**
   * The calls held right now, each aborted at shutdown by the endpoint. A set instead of a listener
   * per call on the shared `shutdown` signal: with thousands of idle sessions, adding and removing
   * listeners on one signal cost time in proportion to their number at every hold (N²).
   */
  held: Set<AbortController>;
  /** What this instance knows of the sessions whose calls it holds (session/memory.ts, decision 0023). */
  memory: SessionMemory;
  /**
   * The clock of the hold (`CONNECTOR_HOLD_MS`): real time whatever clock the service runs on, since
   * the hold is a transport keep-alive and the connector's HTTP client would give up on a call held
   * longer. Business time rules (the idle close, ticket expiry) use the service clock. Tests inject one.
   */
  holdClock: Clock;
}

/** The hold's clock when none is given: real time. */
export const HOLD_CLOCK: Clock = systemClock;
