import type { Deps } from "../../deps.ts";
import type { ServiceError } from "../../errors/service-error.ts";
import { memberAnswers, readAnswer } from "../../ledger/xml/answer.ts";
import { isFailureHResult } from "../../ledger/xml/status-codes.ts";
import { hashSecret } from "../../platform/secrets.ts";
import { traceRequestStep, traceSettle } from "../../platform/tracing.ts";
import { completeSetFromAnswer, resolveRecovery } from "../../requests/engine.ts";
import type { ConnectorSessionRow } from "../../store/connector-sessions.ts";
import { findSessionWithInFlight, pendingRecoveries, waitingRequests } from "../../store/requests.ts";
import { errorForHResult } from "../company-file.ts";
import {
  APPLICATION_FAILED,
  DONE,
  PROGRESS,
  SESSION_ENDED,
  TEXTS,
  UNEXPECTED_ANSWER,
  type ConnectorContext,
} from "./context.ts";
import { keepAlive } from "./live.ts";
import { moveSession } from "./phases.ts";

/**
 * `receiveResponseXML` (ledger-protocol §1.3): the answer to what was handed over. The request in
 * flight completes from it (50: ask again); in `recovering`, it resolves the writes of the recovery
 * query's message set; in `closing`, it ends the session cleanly (100) unless work arrived. A
 * failure HRESULT instead of an answer fails the request and stops the session (negative, and
 * `getLastError` says why); an answer nobody asked for, or a dead ticket, is answered negatively.
 */
export async function receiveResponseXML(
  ctx: ConnectorContext,
  ticket: string,
  response: string,
  hresult: string,
  message: string,
): Promise<number> {
  const { deps } = ctx;
  ctx.memory.forget(hashSecret(ticket));
  const found = await findSessionWithInFlight(deps.db, hashSecret(ticket));
  const session = await keepAlive(deps, found?.session ?? null);
  if (!session) return SESSION_ENDED;
  const failed = isFailureHResult(hresult);
  if (session.phase === "recovering") return recoveryAnswered(deps, session, response, failed, hresult);
  const inFlight = found?.inFlight ?? [];
  if (inFlight.length > 0) {
    const { retried } = await traceSettle(deps, inFlight, () =>
      completeSetFromAnswer(
        deps,
        inFlight,
        { responseXml: response, hresult, message },
        session.ticket_hash,
        { personalDataWithheld: session.personal_data_allowed === false },
      ),
    );
    // A shared message set the application refused unprocessed: its requests go again, alone.
    if (retried) return PROGRESS;
    if (!failed) {
      // The connector asks for the next request now: it is claimed without reading the session again.
      ctx.memory.noteAnswered({ ...session, last_work_at: new Date(deps.clock.now()) });
      return PROGRESS;
    }
    // The application failed instead of answering: the end user is told why, and the session stops.
    // The connection's status is left to the next check-in, which opens the company file again
    // (a dialog closed meanwhile is then no obstacle): waiting callers are not failed here.
    const error = errorForHResult(hresult, message);
    await moveSession(deps, session.ticket_hash, "report", { last_error: failureText(error, hresult) });
    return APPLICATION_FAILED;
  }
  if (session.phase === "closing") return closingQueryAnswered(deps, session);
  await moveSession(deps, session.ticket_hash, "report", { last_error: TEXTS.unexpectedAnswer });
  return UNEXPECTED_ANSWER;
}

/** The text shown for an application failure: the error's end-user message and the HRESULT. */
export function failureText(error: ServiceError, hresult: string): string {
  return `${error.userFacingMessage} (${hresult.trim()})`;
}

/**
 * The answer to a write-recovery query resolves the write, unless it proves nothing (a failure or
 * an unreadable answer): then the write stays `outcome_unknown`, the session stops, and the next
 * session asks again, so a broken answer can never make a write look unapplied.
 */
async function recoveryAnswered(
  deps: Deps,
  session: ConnectorSessionRow,
  response: string,
  failed: boolean,
  hresult: string,
): Promise<number> {
  const now = new Date(deps.clock.now());
  let unresolved = failed;
  if (!failed) {
    // Read once, whatever number of writes the message set ID resolves; each from its place in the
    // stored answer when its message set carried several requests (decision 0036).
    const answer = readAnswer(response);
    const messages = answer?.summary.statuses.length ?? 0;
    const views = answer && messages > 1 ? memberAnswers(answer, messages) : null;
    for (const row of await pendingRecoveries(deps.db, session.connection_id)) {
      if (row.message_set_id !== session.recovery_message_set_id) continue;
      // A request that went alone (a batch: several messages of its own) reads the whole answer.
      const shared = views !== null && !row.alone && row.set_position !== null;
      const view = shared ? (views[row.set_position ?? 0] ?? null) : answer;
      const resolved = traceRequestStep(deps, "request.recovery", row, () =>
        resolveRecovery(deps, row, view, session.ticket_hash),
      );
      if ((await resolved) === "unresolved") unresolved = true;
    }
  }
  const lastError = !unresolved
    ? null
    : failed
      ? failureText(errorForHResult(hresult, ""), hresult)
      : TEXTS.unreadableRecovery;
  await moveSession(deps, session.ticket_hash, "recovered", {
    recovery_message_set_id: null,
    last_work_at: now,
    ...(lastError === null ? {} : { last_error: lastError }),
  });
  return unresolved ? APPLICATION_FAILED : PROGRESS;
}

/**
 * The closing query was answered: with nothing queued the session ends cleanly (100); work that
 * arrived meanwhile keeps it going.
 */
async function closingQueryAnswered(deps: Deps, session: ConnectorSessionRow): Promise<number> {
  const now = new Date(deps.clock.now());
  const queued = await waitingRequests(deps.db, session.connection_id, ["queued"]);
  const recoveries = await pendingRecoveries(deps.db, session.connection_id);
  if (queued.length > 0 || recoveries.length > 0) {
    await moveSession(deps, session.ticket_hash, "keep_open", { last_work_at: now });
    return PROGRESS;
  }
  await moveSession(deps, session.ticket_hash, "finish", { closed_at: now, last_error: null });
  return DONE;
}
