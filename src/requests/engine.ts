import type { RawBuilder } from "kysely";
import type { Deps } from "../deps.ts";
import { traceHandOver, traceRequestEvent } from "../platform/tracing.ts";
import { toErrorBody } from "../errors/render.ts";
import { ServiceError, type ErrorBody } from "../errors/service-error.ts";
import { memberAnswers, readAnswer, type ParsedAnswer } from "../ledger/xml/answer.ts";
import {
  handOverDocument,
  storedFromDocument,
  storedMessageSet,
  type StoredMessageSet,
} from "../ledger/xml/message-set.ts";
import { isFailureHResult, mappingForHResult } from "../ledger/xml/status-codes.ts";
import { mayHoldSecrets, maskSecretsInText, restoreSecrets, splitSecrets } from "../ledger/xml/redact.ts";
import { newId } from "../platform/ids.ts";
import { randomGuid } from "../platform/random.ts";
import { EVENTS_CHANNEL } from "../store/events.ts";
import { noteExternalIds, type SeenExternalId } from "../store/external-ids.ts";
import { findConnectionById, touchConnection, type ConnectionRow } from "../store/connections.ts";
import {
  claimNextRequest,
  expiredUnsent,
  findRequestById,
  noteRecordWrites,
  queuePositionOf,
  requestSecretsPlace,
  transitionRequest,
  waitingRequests,
  type RequestChanges,
  type RequestRow,
  type TransitionStamps,
} from "../store/requests.ts";
import {
  REQUEST_STATUSES,
  TRANSITIONS,
  isSettled,
  type TransitionName,
  type TransitionRule,
} from "./lifecycle.ts";
import {
  PASSTHROUGH_OPERATION,
  operationHandler,
  typedOperation,
  type Decoded,
  type NextStep,
  type OperationHandler,
} from "../ledger/operations.ts";
import { repairWarning, withholdRepairedValues } from "../ledger/xml/markup-repair.ts";
import { withheldPersonalData } from "../ledger/typed/personal-data.ts";
import { batchPlanOf, unknownMembers } from "../ledger/batch.ts";
import { diagnose } from "./diagnosis.ts";
import { endCursorOfPage } from "../ledger/cursors.ts";
import { timelineEntry } from "./timeline.ts";

/**
 * The Request engine's core transitions. Every change of a request's status goes through
 * {@link transition}, which names a transition of the lifecycle table (lifecycle.ts), moves the
 * request only from that transition's statuses and for the requests it applies to, appends to the
 * timeline and wakes waiters.
 */
export const connectionChannel = (connectionId: string): string => `conn:${connectionId}`;
export const requestChannel = (requestId: string): string => `req:${requestId}`;

/** The statuses of a request still to be handed over, answered or recovered. */
const UNSETTLED_STATUSES: readonly string[] = REQUEST_STATUSES.filter((status) => !isSettled(status));

export function errorBodyOf(deps: Deps, error: ServiceError, requestId: string): ErrorBody {
  return toErrorBody(error, requestId, deps.config.publicUrl);
}

export async function transition(
  deps: Deps,
  row: Pick<RequestRow, "id" | "created_at" | "connection_id" | "is_write">,
  name: TransitionName,
  given: RequestChanges,
  detail: string | null,
  stamps: TransitionStamps = {},
): Promise<RequestRow | null> {
  const changes = withWriteRetryRule(row, given);
  const rule: TransitionRule = TRANSITIONS[name];
  const to = rule.to;
  const now = deps.clock.now();
  // Callers wait for a settled request (in this process they get the row with the wake-up);
  // held connector calls wait for queued work; the webhook dispatcher waits for events.
  const settledChannel = isSettled(to) ? requestChannel(row.id) : null;
  const queuedChannel = to === "queued" && row.connection_id ? connectionChannel(row.connection_id) : null;
  // On PostgreSQL the statement itself wakes other instances (no NOTIFY round trip of its own).
  const { notifier } = deps.store;
  const carries = notifier.carried(EVENTS_CHANNEL) !== null;
  const carried = (channel: string | null): RawBuilder<unknown>[] => {
    const wakeUp = channel === null ? null : notifier.carried(channel);
    return wakeUp ? [wakeUp] : [];
  };
  const moved = await transitionRequest(
    deps.db,
    row.id,
    {
      from: rule.from,
      ...(rule.mode === undefined ? {} : { mode: rule.mode }),
      ...(rule.isWrite === undefined ? {} : { isWrite: rule.isWrite }),
      ...(rule.unstarted === undefined ? {} : { unstarted: true }),
    },
    { ...changes, status: to, updated_at: new Date(now) },
    timelineEntry(to, detail, now, row.created_at),
    stamps,
    // Webhooks: a settling transition writes its request event in the same statement (outbox).
    isSettled(to) ? { id: newId("event"), at: new Date(now) } : null,
    {
      onMove: [...carried(settledChannel), ...carried(queuedChannel)],
      onEvent: isSettled(to) ? notifier.carried(EVENTS_CHANNEL) : null,
    },
  );
  if (!moved) return null;
  const { eventWritten, ...updated } = moved;
  if (isSettled(to)) recordSettled(deps, updated);
  const wakeUp = (channel: string, payload?: unknown): void => {
    if (carries) notifier.wakeHere(channel, payload);
    else wake(deps, channel, payload);
  };
  if (settledChannel !== null) wakeUp(settledChannel, updated);
  if (queuedChannel !== null) wakeUp(queuedChannel);
  if (eventWritten) wakeUp(EVENTS_CHANNEL);
  return updated;
}

/**
 * The stored error of a write that may have been applied never says `retryable` (decision 0045, the
 * rule the HTTP renderer applies to `Svc-Should-Retry`): a Request read later tells the same as
 * the answer its caller got. Its code's own rule stays for every other error.
 */
function withWriteRetryRule(row: Pick<RequestRow, "is_write">, changes: RequestChanges): RequestChanges {
  const error = changes.error as { outcome?: unknown; retryable?: unknown } | null | undefined;
  if (!row.is_write || !error || error.retryable !== true) return changes;
  if (error.outcome !== "unknown" && error.outcome !== "pending") return changes;
  return { ...changes, error: { ...error, retryable: false } };
}

/**
 * Wakes the waiters of `channel` after a transition committed: those in this process at once, as
 * the notifier always does; other instances through PostgreSQL's NOTIFY, which the transition does
 * not wait for (decision 0027: a NOTIFY is a round trip to the server, and the connector's next call
 * waited for it). A wake-up lost because the store stopped answering only delays a waiter on another
 * instance to its own next look (callers' deadlines, the connector's next call, the dispatcher's poll).
 */
function wake(deps: Deps, channel: string, payload?: unknown): void {
  deps.store.notifier.notify(channel, payload).catch((error: unknown) => {
    deps.logger.warn({ err: error, channel }, "wake-up to other instances lost");
  });
}

/** A request created `failed` at admission is counted and logged like any settled one. */
export function settledAtAdmission(deps: Deps, row: RequestRow): void {
  recordSettled(deps, row);
}

/**
 * Whether a connection error leaves waiting requests waiting: a file mode conflict is retried at the
 * connection's `retryAt`, and a request runs then unless its deadline or queue TTL comes first
 * (spec: `waitingReason` `file_mode_conflict`).
 */
export function waitsForRetry(error: ServiceError): boolean {
  return error.code === "LEDGER_FILE_MODE_CONFLICT";
}

/**
 * A request reached a settled status: counted by status, outcome and error code, and logged with the
 * IDs an operator searches by (request, end user, connection).
 */
function recordSettled(deps: Deps, row: RequestRow): void {
  const code = (row.error as { code?: string } | null)?.code ?? "none";
  deps.metrics.requestOutcomes.inc({ status: row.status, outcome: row.outcome, code });
  deps.logger.info(
    {
      requestId: row.id,
      endUserId: row.end_user_id,
      connectionId: row.connection_id,
      status: row.status,
      outcome: row.outcome,
      code,
    },
    "request settled",
  );
}

/** The transitions that end a request before it reached the application. */
export type UnsentEnd = "cancel" | "sync_timeout" | "queue_ttl" | "ledger_unreachable";

/**
 * The outcome of a request that did not change the company file: `not_applied` for a write,
 * `not_applicable` for a read (spec: "`not_applicable` means a read").
 */
export function unchangedOutcome(row: Pick<RequestRow, "is_write">): "not_applied" | "not_applicable" {
  return row.is_write ? "not_applied" : "not_applicable";
}

/** Codes of requests that timed out or expired before sending: their diagnosis is kept. */
const FROZEN_DIAGNOSIS: ReadonlySet<string> = new Set(["REQUEST_TIMEOUT_NOT_SENT", "REQUEST_EXPIRED"]);

/** Ends a request that never reached the application (null when it was not in a status to). */
export async function endUnsent(
  deps: Deps,
  row: RequestRow,
  name: UnsentEnd,
  error: ServiceError,
  detail: string,
): Promise<RequestRow | null> {
  const now = deps.clock.now();
  const outcome = unchangedOutcome(row);
  // A request that timed out or expired before sending keeps the diagnosis of that moment (spec).
  const diagnosis = FROZEN_DIAGNOSIS.has(error.code)
    ? await diagnose(deps, row, await queuePositionOf(deps.db, row))
    : null;
  return transition(
    deps,
    row,
    name,
    {
      outcome,
      completed_at: new Date(now),
      waiting_reason: null,
      // Never sent: its secret values are not kept either (decision 0032).
      request_secrets: null,
      error: { ...errorBodyOf(deps, error, row.id), outcome },
      ...(diagnosis === null ? {} : { diagnosis }),
    },
    detail,
  );
}

/** What the connector is handed next: a write-recovery query, a claimed request, or nothing. */
export type NextWork =
  | { kind: "recovery"; messageSetId: string }
  /** The next request writes to a record written less than a second ago: it is sent at `untilMs`. */
  | { kind: "spaced"; untilMs: number }
  /** Requests handed over as one message set (decision 0036), in order, and the document. */
  | { kind: "request"; rows: ReadonlyArray<Pick<RequestRow, "id" | "is_write" | "created_at">>; xml: string }
  /**
   * Nothing to hand over and no request of the connection left unsettled: only a notification on
   * the connection's channel can change that (a new request, one moved back to `queued`).
   */
  | { kind: "quiet" }
  /** Nothing to hand over now, but requests of the connection are not settled (sent, waiting). */
  | null;

/**
 * The connector's next piece of work (architecture §3): a recovery query comes before anything
 * else; then the oldest queued request, claimed in one statement that commits `sent` before the
 * XML is returned. Unsent requests found past their queue TTL are ended (REQUEST_EXPIRED).
 *
 * A request this session handed over and never got an answer for means the answer was lost (the
 * connector asks for more work instead of answering, programmer's guide p.53): it is interrupted
 * (a write goes to recovery, which is then the next work; a read fails LEDGER_READ_INTERRUPTED)
 * and the queue moves on in the same call.
 */
export async function nextWork(
  deps: Deps,
  connectionId: string,
  ticketHash: string,
  xmlVersion: string,
  lostAlreadyHandled = false,
  heldBy?: string,
): Promise<NextWork> {
  const now = new Date(deps.clock.now());
  const handOver = TRANSITIONS.hand_over;
  const claim = await claimNextRequest(deps.db, {
    connectionId,
    ticketHash,
    xmlVersion,
    now,
    messageSetId: randomGuid(),
    setMaxRequests: deps.config.CONNECTOR_MESSAGE_SET_MAX_REQUESTS,
    setMaxBytes: deps.config.CONNECTOR_MESSAGE_SET_MAX_BYTES,
    handOver,
    expirable: TRANSITIONS.queue_ttl.from,
    entry: timelineEntry(handOver.to, "Handed to the connector", now.getTime(), now),
    // Writes to one record are sent more than a second apart, counted from the previous answer.
    spacingMs: deps.config.RECORD_WRITE_SPACING_MS,
    unsettled: UNSETTLED_STATUSES,
    heldBy,
  });
  // The session (not read first) is no longer open here: the caller reads it and sees why.
  if (!claim.sessionHeld) return null;
  const { claimed, recoveryMessageSetId, hasExpired, lostRequestIds } = claim;
  if (hasExpired) await expireQueued(deps, connectionId);
  if (lostRequestIds.length > 0 && !lostAlreadyHandled) {
    for (const lostId of lostRequestIds) {
      const lost = await findRequestById(deps.db, lostId);
      if (lost)
        await interruptSent(
          deps,
          lost,
          "The connector asked for the next request without answering this one: its answer was lost",
        );
    }
    return nextWork(deps, connectionId, ticketHash, xmlVersion, true, heldBy);
  }
  if (recoveryMessageSetId !== null) return { kind: "recovery", messageSetId: recoveryMessageSetId };
  if (claim.spacedUntil !== null) return { kind: "spaced", untilMs: claim.spacedUntil.getTime() };
  const [head] = claimed;
  if (head === undefined) return claim.unsettled || hasExpired ? null : { kind: "quiet" };
  let xml: string;
  if (claimed.length === 1) {
    const messages = withSecrets(deps, head);
    if (messages === null) {
      // Never hand over masked values: the request ends unsent, and the queue moves on.
      await failUnopenedSecrets(deps, head);
      return nextWork(deps, connectionId, ticketHash, xmlVersion, lostAlreadyHandled, heldBy);
    }
    xml = handOverXml({ ...head, request_xml: messages }, xmlVersion);
  } else {
    // Several callers' requests (no secrets: a request with them goes alone) in one message set that
    // runs them all: one caller's failure never skips another's (decision 0036).
    const write = claimed.find((row) => row.is_write);
    xml = handOverDocument(
      { onError: "continueOnError", messagesXml: claimed.map((row) => row.request_xml ?? "").join("") },
      xmlVersion,
      write ? write.message_set_id : null,
    );
  }
  for (const row of claimed) {
    deps.metrics.handOverSeconds.observe(Math.max(0, now.getTime() - row.created_at.getTime()) / 1000);
  }
  deps.metrics.messageSetRequests.observe(claimed.length);
  traceHandOver(deps, claimed, now);
  deps.logger.debug(
    { requestIds: claimed.map((row) => row.id), connectionId },
    "message set handed to the connector",
  );
  return { kind: "request", rows: claimed, xml };
}

/**
 * The claimed request's messages as the application must get them (decision 0032): the stored
 * messages hold its secret values masked, and the claim returned them sealed (clearing them in the
 * same statement); they are put back here, for the connector only. Null when they do not open
 * (their key is no longer configured): the request must not be sent.
 */
function withSecrets(
  deps: Deps,
  claimed: Pick<RequestRow, "id" | "request_xml" | "request_secrets">,
): string | null {
  if (claimed.request_secrets === null || claimed.request_xml === null) return claimed.request_xml;
  try {
    const values = JSON.parse(
      deps.sealing.open(claimed.request_secrets, requestSecretsPlace(claimed.id)),
    ) as string[];
    return restoreSecrets(claimed.request_xml, values);
  } catch (error) {
    deps.logger.error({ err: error, requestId: claimed.id }, "a request's sealed values do not open");
    return null;
  }
}

/**
 * A claimed request whose sealed values do not open fails unsent (`not_applied`): sending the
 * masked values would write them into the company file.
 */
async function failUnopenedSecrets(
  deps: Deps,
  claimed: Pick<RequestRow, "id" | "created_at" | "is_write">,
): Promise<void> {
  const row = await findRequestById(deps.db, claimed.id);
  if (!row) return;
  const outcome = unchangedOutcome(claimed);
  const error = new ServiceError("INTERNAL_ERROR", {
    message:
      "The request was not sent: its sealed values do not open with the configured SECRETS_KEY or SECRETS_KEY_PREVIOUS. It was not applied.",
    outcome,
  });
  await transition(
    deps,
    row,
    "refused",
    { completed_at: new Date(deps.clock.now()), outcome, error: errorBodyOf(deps, error, row.id) },
    "Not sent: its sealed values do not open with the configured keys",
  );
}

/**
 * The document handed to the connector, built once from the stored messages with the session's
 * version and the claim's message set ID (writes). A Request stored before the upgrade that kept
 * messages apart (`request_on_error` null) holds the whole document: its messages and `onError`
 * are read back first (a text that is no message set is handed over as it is, as before).
 */
export function handOverXml(
  claimed: Pick<RequestRow, "request_xml" | "request_on_error" | "message_set_id">,
  xmlVersion: string,
): string {
  const text = claimed.request_xml ?? "";
  const onError = claimed.request_on_error;
  const stored: StoredMessageSet | null =
    onError === "stopOnError" || onError === "continueOnError"
      ? { onError, messagesXml: text }
      : storedFromDocument(text);
  return stored ? handOverDocument(stored, xmlVersion, claimed.message_set_id) : text;
}

/** Queued requests whose queue TTL passed are ended (REQUEST_EXPIRED); they are never sent. */
async function expireQueued(deps: Deps, connectionId: string): Promise<void> {
  for (const row of await expiredUnsent(deps.db, connectionId, new Date(deps.clock.now()))) {
    await expireUnsent(deps, row);
  }
}

/**
 * Ends an unsent request whose queue TTL passed: `canceled` with REQUEST_EXPIRED. Applied when the
 * request is read, when its connector looks for work, and by the background sweep; null when
 * something else changed it first.
 */
export async function expireUnsent(deps: Deps, row: RequestRow): Promise<RequestRow | null> {
  return endUnsent(
    deps,
    row,
    "queue_ttl",
    new ServiceError("REQUEST_EXPIRED"),
    "Queue TTL elapsed before the request could be sent",
  );
}

/** Completes a sent request from the application's answer (or the HRESULT that replaced it). */
export async function completeFromAnswer(
  deps: Deps,
  row: RequestRow,
  answer: { responseXml: string; hresult: string; message: string },
  ticketHash: string,
  /** The answer already read (a member's view of a message set's answer; null: unreadable). */
  alreadyRead?: ParsedAnswer | null,
  answering: AnsweringSession = {},
): Promise<RequestRow | null> {
  const now = deps.clock.now();
  const session = { ticketHash, at: new Date(now) };
  const base = { completed_at: new Date(now) };
  // The answer as it arrived is kept for the Request's messages view (decision 0028).
  // The answer's size in bytes, measured once: what is kept of it, and whether a read is too large.
  const answerBytes = Buffer.byteLength(answer.responseXml, "utf8");
  const keep = keptAnswer(deps, answer.responseXml, answerBytes, new Date(now));
  const kept = keep ? { session, answer: keep } : { session };
  // The application wrote (or refused) by now: the next write to these records waits from here.
  if (row.connection_id && row.write_targets?.length)
    await noteRecordWrites(deps.db, row.connection_id, row.write_targets, new Date(now));
  if (isFailureHResult(answer.hresult)) {
    // The request processor threw instead of answering (programmer's guide p.77).
    const mapping = mappingForHResult(answer.hresult);
    const detail = `Application error ${answer.hresult.trim()}`;
    if (row.is_write && !mapping.refusedUnprocessed) {
      return transition(
        deps,
        row,
        "result_lost",
        { outcome: "unknown", error: errorBodyOf(deps, outcomeUnknownError(row), row.id) },
        `${detail}: the write may have been applied`,
        kept,
      );
    }
    const error = new ServiceError(mapping.code, {
      integrationCode: answer.hresult.trim(),
      outcome: row.is_write ? "not_applied" : "not_applicable",
      ...(answer.message ? { message: `The application refused the request: ${answer.message}` } : {}),
    });
    return transition(
      deps,
      row,
      "refused",
      {
        ...base,
        outcome: row.is_write ? "not_applied" : "not_applicable",
        error: errorBodyOf(deps, error, row.id),
      },
      detail,
      kept,
    );
  }
  const tooLarge = oversizedRead(deps, row, answerBytes);
  if (tooLarge) {
    await endCursorOfPage(deps.db, row);
    return transition(
      deps,
      row,
      "refused",
      { ...base, outcome: "not_applicable", error: errorBodyOf(deps, tooLarge, row.id) },
      "The answer is larger than the service serves a read from",
      kept,
    );
  }
  // The answer is parsed here, once: the summary and the decoder read the same tree.
  const parsed = alreadyRead === undefined ? readAnswer(answer.responseXml) : alreadyRead;
  const handler = operationHandler(row.operation_id);
  if (!parsed || !handler) {
    const error = new ServiceError("LEDGER_RESPONSE_UNREADABLE", {
      outcome: row.is_write ? "unknown" : "not_applicable",
    });
    return transition(
      deps,
      row,
      row.is_write ? "result_lost" : "refused",
      {
        ...base,
        outcome: row.is_write ? "unknown" : "not_applicable",
        error: errorBodyOf(deps, error, row.id),
      },
      "The answer could not be read",
      kept,
    );
  }
  const first = parsed.summary.statuses[0];
  const ledger = { status_code: first?.statusCode ?? null, status_severity: first?.statusSeverity ?? null };
  const read = handler.decode({
    answer: parsed,
    publicUrl: deps.config.publicUrl,
    request: row,
    connection: await connectionFor(deps, handler, row),
    nowMs: now,
  });
  const decoded = withWithheld(
    answering,
    withRepairs(row, parsed, await finishDecoded(deps, handler, row, read, ticketHash, now)),
  );
  if (decoded.ok && decoded.next) return goOn(deps, row, decoded.next, { session });
  if (decoded.ok) await noteExternalIdsOf(deps, row, decoded.result);
  if (decoded.ok) {
    return transition(
      deps,
      row,
      "answered",
      {
        ...base,
        ...ledger,
        outcome: !row.is_write ? "not_applicable" : decoded.applied === false ? "not_applied" : "applied",
        result: decoded.result,
        warnings: decoded.warnings,
        error: null,
      },
      "The application answered",
      {
        ...kept,
        ...(row.connection_id
          ? { connectionSucceeded: { connectionId: row.connection_id, at: new Date(now) } }
          : {}),
      },
    );
  }
  return transition(
    deps,
    row,
    "refused",
    {
      ...base,
      ...ledger,
      outcome: row.is_write ? "not_applied" : "not_applicable",
      error: errorBodyOf(deps, decoded.error, row.id),
    },
    `The application answered with status ${first?.statusCode ?? "?"}`,
    kept,
  );
}

/**
 * Completes the requests of one message set from its answer (decision 0036), in order: alone, as
 * {@link completeFromAnswer}; several, each from the response message at its place (read once,
 * and each member's view decoded by its own operation) — or, when an HRESULT replaced the answer,
 * each with that failure (a write goes to `outcome_unknown` unless the application refused the set
 * unprocessed). A set the application refused unprocessed as a whole is sent again one request at a
 * time: its members go back to `queued`, each to go alone (`retried` is then true, and the
 * connector is asked for more at once).
 */
export async function completeSetFromAnswer(
  deps: Deps,
  rows: readonly RequestRow[],
  answer: { responseXml: string; hresult: string; message: string },
  ticketHash: string,
  session: AnsweringSession = {},
): Promise<{ retried: boolean }> {
  const [only] = rows;
  if (rows.length === 1 && only) {
    await completeFromAnswer(deps, only, answer, ticketHash, undefined, session);
    return { retried: false };
  }
  if (isFailureHResult(answer.hresult)) {
    if (mappingForHResult(answer.hresult).refusedUnprocessed) {
      for (const row of rows) {
        await transition(
          deps,
          row,
          "set_refused",
          {
            alone: true,
            sent_at: null,
            connector_asked_at: null,
            ticket_hash: null,
            message_set_id: null,
            set_position: null,
            xml_version: null,
            outcome: unchangedOutcome(row),
          },
          `The application refused the message set it shared as a whole (${answer.hresult.trim()}): it is sent again alone`,
        );
      }
      return { retried: true };
    }
    for (const row of rows) await completeFromAnswer(deps, row, answer, ticketHash, undefined, session);
    return { retried: false };
  }
  const parsed = readAnswer(answer.responseXml);
  const views = parsed ? memberAnswers(parsed, rows.length) : null;
  for (const [i, row] of rows.entries()) {
    const view = views?.[i] ?? null;
    await completeFromAnswer(
      deps,
      row,
      { ...answer, responseXml: view?.xml ?? answer.responseXml },
      ticketHash,
      view,
      session,
    );
  }
  return { retried: false };
}

/**
 * The answer kept with its Request: the XML up to `REQUEST_ANSWER_KEEP_BYTES`, secrets masked, else
 * its size only (decision 0028); nothing when there is no document. Shown redacted by
 * `GET /v1/requests/{id}/messages`.
 */
function keptAnswer(
  deps: Deps,
  xml: string,
  bytes: number,
  at: Date,
): { xml: string | null; bytes: number; at: Date } | null {
  // A failure reported instead of an answer has no document (its HRESULT is in the error).
  if (xml === "") return null;
  // Kept with its secrets masked (decision 0032): nothing reads the full values back.
  return { xml: bytes <= deps.config.REQUEST_ANSWER_KEEP_BYTES ? maskSecretsInText(xml) : null, bytes, at };
}

/**
 * LEDGER_RESPONSE_TOO_LARGE (decision 0019): a read whose answer is larger than
 * `LEDGER_RESPONSE_LIMIT_BYTES` is not decoded or stored; the caller narrows the filters or lowers
 * `limit`. A document holding a write is always read whole: its outcome must be known.
 */
function oversizedRead(deps: Deps, row: RequestRow, bytes: number): ServiceError | null {
  if (row.is_write) return null;
  const limit = deps.config.LEDGER_RESPONSE_LIMIT_BYTES;
  if (bytes <= limit) return null;
  return new ServiceError("LEDGER_RESPONSE_TOO_LARGE", {
    message: `The application's answer is ${bytes} bytes, more than the ${limit} bytes the service serves a read from. Narrow the filters or lower \`limit\`.`,
    details: { responseBytes: bytes, limitBytes: limit },
  });
}

/** What the session that carried an answer knows of the application (its company file report). */
export interface AnsweringSession {
  /** The company file withholds personal data from this application (`IsPersonalDataAccessAllowed` false). */
  personalDataWithheld?: boolean;
}

/**
 * An answer from an application that withholds personal data (its company file report said so):
 * every card number or social security number of a typed result is null, with a
 * LEDGER_PERSONAL_DATA_WITHHELD warning at its path (ledger/typed/personal-data.ts).
 */
function withWithheld(session: AnsweringSession, decoded: Decoded): Decoded {
  if (!decoded.ok || session.personalDataWithheld !== true) return decoded;
  const withheld = withheldPersonalData(decoded.result);
  return withheld.length === 0 ? decoded : { ...decoded, warnings: [...decoded.warnings, ...withheld] };
}

/**
 * An answer that was read only after characters XML forbids were replaced (ledger/xml/markup-repair.ts):
 * a typed result gives each value that held one as null with a LEDGER_MARKUP_REPAIRED warning at its
 * path; a passthrough returns the repaired document with one warning.
 */
function withRepairs(row: RequestRow, parsed: ParsedAnswer, decoded: Decoded): Decoded {
  if (!decoded.ok || parsed.repaired === undefined) return decoded;
  const repairs =
    row.operation_id === PASSTHROUGH_OPERATION
      ? [repairWarning(null)]
      : withholdRepairedValues(decoded.result);
  return { ...decoded, warnings: [...decoded.warnings, ...repairs] };
}

/** Runs the operation's finishing step (list pages book their cursor), keeping the read's warnings. */
async function finishDecoded(
  deps: Deps,
  handler: OperationHandler,
  row: RequestRow,
  read: Decoded,
  ticketHash: string,
  nowMs: number,
): Promise<Decoded> {
  if (!read.ok || !handler.finish) return read;
  const finished = await handler.finish({ db: deps.db, nowMs, ticketHash }, row, read.result);
  return finished.ok ? { ...finished, warnings: [...read.warnings, ...finished.warnings] } : finished;
}

/** The connection row, read only for operations whose decoding uses it (the health check). */
async function connectionFor(
  deps: Deps,
  handler: OperationHandler,
  row: RequestRow,
): Promise<ConnectionRow | null> {
  return handler.usesConnection && row.connection_id ? findConnectionById(deps.db, row.connection_id) : null;
}

/**
 * A Request of several message sets (decision 0046) whose set was answered (live, or recovered from
 * the application's stored answer) goes on: back to the head of its connection's queue, alone, with
 * its next set's messages (secret values sealed apart, as at admission) and its operation's plan.
 * It keeps its place (`seq`), so nothing queued after it runs between its sets, and it is never
 * ended unsent from here (`step` > 0). The next set gets its own message-set ID at its hand-over.
 */
async function goOn(
  deps: Deps,
  row: RequestRow,
  next: NextStep,
  stamps: TransitionStamps,
  how: "answered" | "recovered" = "answered",
): Promise<RequestRow | null> {
  const stored = storedMessageSet(next.document);
  const messages = splitSecrets(stored.messagesXml);
  return transition(
    deps,
    row,
    "next_step",
    {
      request_xml: messages.xml,
      request_on_error: stored.onError,
      request_secrets: messages.values
        ? deps.sealing.seal(JSON.stringify(messages.values), requestSecretsPlace(row.id))
        : null,
      program: next.program,
      step: row.step + 1,
      alone: true,
      write_targets: next.writeTargets && next.writeTargets.length > 0 ? [...next.writeTargets] : null,
      ticket_hash: null,
      message_set_id: null,
      set_position: null,
      queue_ttl_expires_at: null,
      outcome: row.is_write ? "pending" : "not_applicable",
      error: null,
    },
    `Message set ${row.step + 1} ${how === "recovered" ? "recovered from the application's stored answer" : "answered"}: ${next.detail}`,
    stamps,
  );
}

/**
 * The service's index of externalIds (decision 0046): every typed record an answer holds with an
 * `externalId` (a record, a list page, an upsert's record) is noted for its end user and group, so
 * an upsert keyed by `externalId` finds it. Nothing is written for an answer that holds none.
 */
async function noteExternalIdsOf(deps: Deps, row: RequestRow, result: unknown): Promise<void> {
  if (row.end_user_id === null) return;
  const resource = typedOperation(row.operation_id)?.resource;
  if (!resource || typeof result !== "object" || result === null) return;
  const value = result as { objectType?: unknown; data?: unknown };
  const records =
    value.objectType === "list" && Array.isArray(value.data)
      ? (value.data as unknown[])
      : value.objectType === "upsert"
        ? [value.data]
        : [result];
  const seen: SeenExternalId[] = [];
  for (const record of records) {
    const { id, externalId } = (record ?? {}) as { id?: unknown; externalId?: unknown };
    if (typeof id === "string" && typeof externalId === "string") seen.push({ externalId, recordId: id });
  }
  await noteExternalIds(deps.db, row.end_user_id, resource.entry.path, seen, new Date(deps.clock.now()));
}

/** A write whose answer was lost; a batch's lists every member (spec: `details.members`). */
function outcomeUnknownError(row: RequestRow): ServiceError {
  const plan = batchPlanOf(row);
  return new ServiceError("LEDGER_WRITE_OUTCOME_UNKNOWN", {
    details: { requestId: row.id, ...(plan ? { members: unknownMembers(plan) } : {}) },
  });
}

/**
 * The session carrying a sent request broke (re-authentication, connection error, close without an
 * answer, or a restart of the service). Writes become `outcome_unknown` and wait for recovery;
 * reads fail with LEDGER_READ_INTERRUPTED (safe to retry). Never re-sent.
 */
export async function interruptSent(deps: Deps, row: RequestRow, why: string): Promise<RequestRow | null> {
  traceRequestEvent(deps, "request.interrupted", row, why);
  const now = deps.clock.now();
  // Evidence for the diagnosis of what waits next (`session_interrupted`).
  if (row.connection_id !== null)
    await touchConnection(deps.db, row.connection_id, { session_interrupted_at: new Date(now) });
  if (row.is_write) {
    return transition(
      deps,
      row,
      "result_lost",
      { outcome: "unknown", error: errorBodyOf(deps, outcomeUnknownError(row), row.id) },
      why,
    );
  }
  const error = new ServiceError("LEDGER_READ_INTERRUPTED");
  return transition(
    deps,
    row,
    "read_interrupted",
    { completed_at: new Date(now), outcome: "not_applicable", error: errorBodyOf(deps, error, row.id) },
    why,
  );
}

/**
 * Resolves an `outcome_unknown` write from the recovery query's answer: a stored result completes
 * it (`recovered: true`); no stored state (status 600) means it was not applied. Any other answer
 * (unreadable, empty, a set with no stored responses) proves nothing: the write stays
 * `outcome_unknown` for the next recovery query, and `unresolved` is returned. The answer is parsed
 * once by the caller ({@link readAnswer}; null when unreadable) for every write it resolves.
 */
export async function resolveRecovery(
  deps: Deps,
  row: RequestRow,
  answer: ParsedAnswer | null,
  ticketHash: string,
): Promise<RequestRow | null | "unresolved"> {
  const now = deps.clock.now();
  if (answer === null) return "unresolved";
  const summary = answer.summary;
  const nothingStored = summary.messageSetStatusCode === 600;
  if (!nothingStored && summary.statuses.length === 0) return "unresolved";
  if (!nothingStored) {
    const sent = { ...row, status: "sent" };
    const handler = operationHandler(row.operation_id);
    const first = summary.statuses[0];
    // The stored answer is read and finished exactly as a live answer would be.
    const decoded = handler
      ? withRepairs(
          sent,
          answer,
          await finishDecoded(
            deps,
            handler,
            sent,
            handler.decode({
              answer,
              publicUrl: deps.config.publicUrl,
              request: sent,
              connection: await connectionFor(deps, handler, row),
              nowMs: now,
            }),
            ticketHash,
            now,
          ),
        )
      : null;
    if (decoded?.ok && decoded.next) return goOn(deps, row, decoded.next, {}, "recovered");
    if (decoded?.ok) {
      await noteExternalIdsOf(deps, row, decoded.result);
      return transition(
        deps,
        row,
        "recovered_applied",
        {
          completed_at: new Date(now),
          outcome: decoded.applied === false ? "not_applied" : "applied",
          recovered: true,
          status_code: first?.statusCode ?? null,
          status_severity: first?.statusSeverity ?? null,
          result: decoded.result,
          warnings: decoded.warnings,
          error: null,
        },
        "Recovered: the application had applied the write",
      );
    }
    const error = decoded && !decoded.ok ? decoded.error : new ServiceError("LEDGER_RESPONSE_UNREADABLE");
    return transition(
      deps,
      row,
      "recovered_not_applied",
      {
        completed_at: new Date(now),
        outcome: "not_applied",
        recovered: true,
        status_code: first?.statusCode ?? null,
        status_severity: first?.statusSeverity ?? null,
        error: errorBodyOf(deps, error, row.id),
      },
      "Recovered: the application had refused the write",
    );
  }
  if (row.step > 0 && row.request_xml !== null && !mayHoldSecrets(row.request_xml)) {
    // A later message set of a Request of several (decision 0046) that never ran: its earlier sets
    // did, so the Request is not "not applied". The application confirmed nothing of this set ran:
    // it goes back to the head of the queue and is sent again, with a new message-set ID.
    return transition(
      deps,
      row,
      "next_step",
      {
        ticket_hash: null,
        message_set_id: null,
        set_position: null,
        queue_ttl_expires_at: null,
        outcome: "pending",
        error: null,
        alone: true,
      },
      `Recovery: the application holds no result of message set ${row.step + 1}, which never ran: it is sent again`,
    );
  }
  const error = new ServiceError("LEDGER_CONNECTION_ERROR", {
    message:
      "The connection broke before the application processed this write; the application confirmed it was not applied. It is safe to send it again.",
    outcome: "not_applied",
  });
  return transition(
    deps,
    row,
    "recovered_not_applied",
    { completed_at: new Date(now), outcome: "not_applied", error: errorBodyOf(deps, error, row.id) },
    "Recovery: the application holds no result, the write was not applied",
  );
}

/**
 * Fails the sync requests waiting on a connection whose application cannot be reached now (their
 * callers get the connection's error at once). Async requests wait; so does every request when the
 * error is retried at `retryAt` ({@link waitsForRetry}).
 */
export async function failWaitingSync(
  deps: Deps,
  connectionId: string,
  error: ServiceError,
  detail: string,
): Promise<void> {
  if (waitsForRetry(error)) return;
  for (const row of await waitingRequests(deps.db, connectionId, TRANSITIONS.ledger_unreachable.from)) {
    if (row.mode === "sync") await endUnsent(deps, row, "ledger_unreachable", error, detail);
  }
}
