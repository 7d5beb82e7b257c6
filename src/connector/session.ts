/**
 * The connector session (ledger-protocol §1.2–1.3, programmer's guide ch. 8 and pp.61–82,
 * architecture §2–3), one file per protocol step under `session/`; its phases and their named
 * transitions are the table of `session/phases.ts`, what an instance keeps in memory is
 * `session/memory.ts`. A session is open from `authenticate` until it is closed; at most one
 * document is handed over at a time, and the connector's next call tells what became of it.
 *
 *   authenticate ─▶ open ─ sendRequestXML ─▶ hand over: recovery query | request | closing query
 *                   │                        or hold until work arrives, then "" + NoOp (pause, ask again)
 *                   ├─ receiveResponseXML: the answer to what was handed over → 50 (ask again)
 *                   │    the closing query's answer, nothing queued → 100 → closeConnection (clean end)
 *                   │    a failure HRESULT instead of an answer → the request fails; negative
 *                   │    nothing handed over → negative
 *                   ├─ sendRequestXML again before answering: the answer was lost → a write goes to
 *                   │    `outcome_unknown` and its recovery query is the next work, a read fails
 *                   │    LEDGER_READ_INTERRUPTED; the queue moves on in the same call
 *                   ├─ connectionError → another company file path (at most twice) or "done"
 *                   └─▶ closed: closeConnection, a newer authenticate, ticket expiry (injected
 *                       clock), a hung-up held call, the end of an idle session, connectionError
 *                       "done", or a service restart.
 *
 * A closed or unknown ticket gets "" from sendRequestXML, a negative value from receiveResponseXML
 * and an error text (never NoOp) from getLastError, so the connector stops instead of looping.
 * Business errors are never SOAP faults: they are return values the connector understands.
 */
export {
  APPLICATION_FAILED,
  DONE,
  HOLD_CLOCK,
  NOOP,
  PROGRESS,
  SESSION_ENDED,
  TEXTS,
  UNEXPECTED_ANSWER,
  type ConnectorContext,
} from "./session/context.ts";
export { authenticate } from "./session/authenticate.ts";
export { sendRequestXML, type SendRequestInput } from "./session/send-request.ts";
export { receiveResponseXML } from "./session/receive-response.ts";
export { closeConnection, connectionError, connectorHungUp, getLastError } from "./session/end-calls.ts";
export { ticketIsLive } from "./session/live.ts";
export { SessionMemory } from "./session/memory.ts";
