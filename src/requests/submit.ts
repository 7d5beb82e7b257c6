import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import type { Tenant } from "../store/tenant.ts";
import { unavailableError } from "../connections/resource.ts";
import { effectiveStatus, lastSeenAt } from "../connections/seen.ts";
import { findCallTarget, type ConnectionRow } from "../store/connections.ts";
import { claimIdempotencyKey, linkIdempotencyKey } from "../store/idempotency.ts";
import {
  findRequestById,
  insertChargedRequest,
  insertRequest,
  markCallerGone,
  requestSecretsPlace,
  type NewRequestRow,
  type RequestRow,
} from "../store/requests.ts";
import {
  connectionChannel,
  endUnsent,
  errorBodyOf,
  settledAtAdmission,
  unchangedOutcome,
  waitsForRetry,
} from "./engine.ts";
import { IDEMPOTENCY_RETENTION_MS, fingerprintText } from "./idempotency-key.ts";
import { isSettled } from "./lifecycle.ts";
import type { CallOptions } from "./call-options.ts";
import { PASSTHROUGH_OPERATION } from "../ledger/operations.ts";
import { newRequestRow } from "./new-request.ts";
import { newId } from "../platform/ids.ts";
import { CallerWatch } from "./request-watch.ts";
import { storedMessageSet, type RequestDocument } from "../ledger/xml/message-set.ts";
import { writeTargetsOf } from "../ledger/xml/write-targets.ts";
import { maskedJsonText, splitSecrets } from "../ledger/xml/redact.ts";
import type { BatchPlan } from "../ledger/batch.ts";
import { isStoreUnavailable } from "../store/unavailable.ts";
import type { Transaction } from "kysely";
import type { DatabaseSchema } from "../store/schema.ts";
import type { ProjectStanding } from "../store/projects.ts";
import { chargeOrRefuse, paymentRefusal, standingOf, unlimitedCharge } from "../tenancy/billing.ts";
import type { UnlimitedCharge } from "../store/usage.ts";

/**
 * Submitting an application operation (spec: Headers on application operations; architecture §1, §3).
 * The Request row exists before anything else happens; sync callers wait on a wake-up with a
 * deadline on the injected clock; async callers get the request back at once.
 */
export interface Submission {
  /**
   * Whose request it is (the caller's key; the change feed: its subscription's project and mode),
   * with the project's standing when the key lookup read it (billing, decision 0019).
   */
  principal: Tenant & { standing?: ProjectStanding | undefined };
  operationId: string;
  method: string;
  path: string;
  isWrite: boolean;
  /**
   * The message set as data: rendered once for storage, and wrapped in the document (with the
   * session's version and message set ID) only at hand-over.
   */
  document: RequestDocument;
  /** The body used for the idempotency fingerprint. */
  fingerprintBody: unknown;
  options: CallOptions;
  /**
   * Checks that need the end user's connection (its message version, for example) and bookkeeping
   * that must exist before the request is queued (a list's cursor). Throwing rejects the call with
   * nothing queued.
   */
  beforeQueue?: (connection: ConnectionRow | null) => Promise<void>;
  /** Aborted when a sync caller hangs up before its answer (webhooks: its events go to every endpoint). */
  hungUp?: AbortSignal;
  /** The service's own request (the change feed): its connection hands out developers' requests first. */
  background?: boolean;
  /** A batch's members, kept on the Request to read its answer member by member. */
  batch?: BatchPlan;
  /**
   * A Request of several message sets (an upsert, decision 0046): what its operation keeps between
   * them. It goes alone, and keeps the head of its queue between its sets.
   */
  program?: unknown;
  /** The call's JSON input as validated (a typed call's query and body), kept for the messages view. */
  input?: unknown;
  /**
   * What billing counts this Request as (decision 0019): a batch counts its members, a passthrough
   * document its request messages; 1 otherwise.
   */
  units?: number;
}

export type SubmitOutcome =
  | { kind: "settled"; row: RequestRow }
  | { kind: "accepted"; row: RequestRow }
  | { kind: "timeout_sent"; row: RequestRow };

export async function submit(deps: Deps, s: Submission): Promise<SubmitOutcome> {
  const capacity = deps.config.CONNECTION_QUEUE_CAPACITY;
  // The end user is looked up in the caller's project and mode (decision 0005): another project's
  // or mode's end user is missing, and its company file is never reached.
  const target = await findCallTarget(deps.db, s.principal, s.options.endUserId, capacity + 1);
  if (!target) {
    throw new ServiceError("RESOURCE_MISSING", {
      param: s.options.endUserParam,
      message: "No such end user.",
    });
  }
  const { connection } = target;

  if (s.beforeQueue) await s.beforeQueue(connection);
  // Billing counts and refuses the developers' calls, never the service's own (decision 0019).
  const standing = s.background ? null : await standingOf(deps, s.principal);
  const refusal =
    admissionError(deps, s, connection, target.waiting >= capacity, target.unansweredSince) ??
    (s.background ? null : paymentRefusal(s.principal, standing));
  const charge: Charge | null = s.background
    ? null
    : {
        unlimited: unlimitedCharge(s.principal, standing, billingUnits(s), deps.clock.now()),
        step: (db) => chargeOrRefuse(db, s.principal, standing, billingUnits(s), deps.clock.now()),
      };
  // A sync caller watches its request from before the row exists: it may settle before the wait.
  const watch = s.options.async ? null : new CallerWatch(deps);
  try {
    const { row, created, refused } = await createOrAttach(deps, s, connection, refusal, charge, watch);
    // Refused at admission: nothing was queued, and the caller (sync or async) gets the error with its
    // own status; the Request records it (spec: `connectionId` is null when rejected before setup).
    if (created && refused) return { kind: "settled", row };
    if (!watch) return { kind: "accepted", row };
    try {
      return await waitForCaller(deps, row, watch, s.options.timeoutSeconds * 1000, s.hungUp);
    } catch (error) {
      throw isStoreUnavailable(error) ? storeLostDuringWait(row, error) : error;
    }
  } finally {
    watch?.close();
  }
}

/**
 * The store stopped answering while a sync caller waited for its Request (decision 0019). The
 * Request exists and could not be canceled, so it may still run: the caller is told to poll it,
 * never to resend (a 503 "retry" here could apply a write twice).
 */
function storeLostDuringWait(row: RequestRow, cause: unknown): ServiceError {
  return new ServiceError("LEDGER_REQUEST_TIMEOUT", {
    message:
      "The service's store stopped answering while this call waited for its Request, which was queued and may still run. Poll it with `GET /v1/requests/{details.requestId}`; never resend.",
    details: { requestId: row.id },
    cause,
  });
}

/** What billing counts a Submission as (decision 0019). */
export function billingUnits(s: Pick<Submission, "batch" | "units">): number {
  return s.batch?.members.length ?? s.units ?? 1;
}

/** How a new Request's units are counted (decision 0019; one statement: decision 0029). */
interface Charge {
  /**
   * Counts them in the transaction that stores the Request; the error when a quota refuses them
   * (the Request is then stored `failed` with it, and nothing is counted).
   */
  step: (db: Transaction<DatabaseSchema>) => Promise<ServiceError | null>;
  /** The same charge when no quota can refuse it: counted by the Request's own insert. */
  unlimited: UnlimitedCharge | null;
}

/** The records a write changes (read from the message tree), so that the engine spaces writes to one record (spec). */
function writeTargetsColumn(s: Submission): { write_targets?: string[] } {
  if (!s.isWrite) return {};
  const targets = writeTargetsOf(s.document.messages);
  return targets.length === 0 ? {} : { write_targets: targets };
}

/**
 * Creates the Request (or attaches to the one the Idempotency-Key names). A new Request refused at
 * admission is created `failed` with `refusal` as its error, and nobody is woken. A new Request
 * that is not refused is charged to the project's usage in the same transaction, which may refuse
 * it instead (`refused` says whether the new Request was refused either way).
 */
async function createOrAttach(
  deps: Deps,
  s: Submission,
  connection: ConnectionRow | null,
  refusal: ServiceError | null,
  charge: Charge | null,
  watch: CallerWatch | null,
): Promise<{ row: RequestRow; created: boolean; refused: boolean }> {
  const now = deps.clock.now();
  const requestId = newId("request");
  watch?.watch(requestId);
  const key = s.options.idempotencyKey;
  const identity = key
    ? fingerprintText({
        method: s.method,
        path: s.path,
        endUserId: s.options.endUserId,
        body: s.fingerprintBody,
      })
    : null;
  const fingerprint = identity === null ? null : deps.sealing.fingerprint(identity);
  const online = connection !== null && isReachable(deps, connection);
  const stored = storedMessageSet(s.document);
  // Stored masked; the secret values wait apart, sealed, for the hand-over (decision 0032).
  const messages = splitSecrets(stored.messagesXml);
  const input = s.input === undefined ? undefined : maskedJsonText(s.input);
  const status =
    s.options.async && connection !== null && !online && connection.status !== "pending_setup"
      ? "waiting_for_connection"
      : "queued";
  const newRow = (
    previousRequestId: string | null,
    id: string,
    refused: ServiceError | null,
  ): NewRequestRow =>
    newRequestRow(
      {
        id,
        project_id: s.principal.projectId,
        is_test: s.principal.mode === "test",
        end_user_id: s.options.endUserId,
        connection_id: connection?.id ?? null,
        operation_id: s.operationId,
        method: s.method,
        path: s.path,
        mode: s.options.async ? "async" : "sync",
        status,
        is_write: s.isWrite,
        request_xml: messages.xml,
        request_on_error: stored.onError,
        alone: goesAlone(s),
        // A Request refused at admission is never sent: its secrets are not kept at all.
        ...(messages.values && !refused
          ? {
              request_secrets: deps.sealing.seal(JSON.stringify(messages.values), requestSecretsPlace(id)),
            }
          : {}),
        queue_ttl_expires_at: s.options.async ? new Date(now + s.options.queueTtlSeconds * 1000) : null,
        idempotency_key_present: key !== null,
        previous_request_id: previousRequestId,
        // A sync caller waits on this instance: if it dies, recovery lets go of the caller.
        caller_instance_id: s.options.async ? null : deps.instanceId,
        ...(s.background ? { background: true } : {}),
        ...(s.batch ? { batch: s.batch } : {}),
        ...(s.program === undefined ? {} : { program: s.program }),
        ...(input === undefined ? {} : { input }),
        ...writeTargetsColumn(s),
      },
      now,
      refused
        ? {
            error: { ...errorBodyOf(deps, refused, id), outcome: unchangedOutcome({ is_write: s.isWrite }) },
            detail: `Refused at admission: ${refused.code}`,
          }
        : null,
    );

  // The refusal of a new Request: admission's, else the quota's (counted in `trx` when it passes).
  const refusalIn = async (trx: Transaction<DatabaseSchema>): Promise<ServiceError | null> =>
    refusal ?? (charge ? await charge.step(trx) : null);

  if (!key || !fingerprint) {
    if (!refusal && charge?.unlimited) {
      // The usual admission: one statement stores the Request, counts it, and wakes other instances.
      const channel = connection ? connectionChannel(connection.id) : null;
      const carried = channel === null ? null : deps.store.notifier.carried(channel);
      const row = await insertChargedRequest(
        deps.db,
        newRow(null, requestId, null),
        charge.unlimited,
        carried,
      );
      if (channel !== null && carried) deps.store.notifier.wakeHere(channel);
      else await wakeConnection(deps, connection);
      return { row, created: true, refused: false };
    }
    const { row, refused } =
      refusal || !charge
        ? { row: await insertRequest(deps.db, newRow(null, requestId, refusal)), refused: refusal }
        : await deps.db.transaction().execute(async (trx) => {
            const billed = await charge.step(trx);
            return { row: await insertRequest(trx, newRow(null, requestId, billed)), refused: billed };
          });
    if (refused) settledAtAdmission(deps, row);
    else await wakeConnection(deps, connection);
    return { row, created: true, refused: refused !== null };
  }

  const result = await deps.db.transaction().execute(async (trx) => {
    const claim = await claimIdempotencyKey(
      trx,
      s.principal,
      {
        key,
        fingerprint,
        request_id: requestId,
        response_box: null,
        response_status: null,
        created_at: new Date(now),
        expires_at: new Date(now + IDEMPOTENCY_RETENTION_MS),
      },
      new Date(now),
    );
    if (claim.claimed) {
      const refused = await refusalIn(trx);
      await insertRequest(trx, newRow(null, requestId, refused));
      return { id: requestId, created: true, refused };
    }
    if (
      !deps.sealing.fingerprintMatches(claim.existing.fingerprint, identity ?? "") ||
      !claim.existing.request_id
    ) {
      throw new ServiceError("IDEMPOTENCY_KEY_REUSED", {
        param: "Idempotency-Key",
        message: "This `Idempotency-Key` was already used with a different request.",
      });
    }
    const earlier = await findRequestById(trx, claim.existing.request_id);
    if (earlier && endedBeforeReachingLedger(earlier)) {
      // A new attempt after one that never reached the application (spec: previousRequestId).
      const refused = await refusalIn(trx);
      await insertRequest(trx, newRow(earlier.id, requestId, refused));
      await linkIdempotencyKey(trx, s.principal, key, requestId);
      return { id: requestId, created: true, refused };
    }
    return { id: claim.existing.request_id, created: false, refused: null };
  });
  // Attached to an earlier request: the caller watches that one, from before reading it.
  if (result.id !== requestId) watch?.watch(result.id);
  const row = await findRequestById(deps.db, result.id);
  if (!row) throw new ServiceError("INTERNAL_ERROR", { cause: new Error(`request ${result.id} vanished`) });
  if (result.created && result.refused) settledAtAdmission(deps, row);
  else await wakeConnection(deps, connection);
  return { row, created: result.created, refused: result.refused !== null };
}

/**
 * Wakes the connection's held connector call (a new request may be waiting for it). The Request is
 * stored by then: a wake-up lost because the store stopped answering (PostgreSQL's NOTIFY) only
 * delays it to the connector's next look, so it does not fail the call.
 */
async function wakeConnection(deps: Deps, connection: ConnectionRow | null): Promise<void> {
  if (!connection) return;
  try {
    await deps.store.notifier.notify(connectionChannel(connection.id));
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    deps.logger.warn({ err: error, connectionId: connection.id }, "wake-up lost: the store does not answer");
  }
}

/**
 * Whether an earlier Request with the same key ended without the application running it, so that a
 * retry is a new attempt (spec: `previousRequestId`) rather than a replay: it was never sent
 * (canceled, refused, expired), or it was sent and then confirmed `not_applied` with no answer of
 * the application at all (no status code, no HRESULT: the recovery query found nothing stored for
 * it) under a retryable error. Replaying that error would break its own retry rule, "the identical
 * request (same Idempotency-Key) can succeed": a client following it could never get the write
 * applied. A write the application answered, even with a refusal or an HRESULT, is replayed.
 */
function endedBeforeReachingLedger(row: RequestRow): boolean {
  if (row.status !== "canceled" && row.status !== "failed") return false;
  if (row.sent_at === null) return true;
  const error = row.error as { retryable?: unknown; integrationCode?: unknown } | null;
  return (
    row.outcome === "not_applied" &&
    row.status_code === null &&
    (error?.integrationCode ?? null) === null &&
    error?.retryable === true
  );
}

/**
 * Whether a Request goes in a message set of its own (decision 0036): one that carries a message set
 * of its own (a passthrough, a batch: its `onError` and message order are the caller's), one of
 * more than one message, and one whose answer has no bound — a report, and the change feed's queries
 * of everything changed since its window (no `MaxReturned`). Several of those in one set could make
 * an answer larger than a connector call may carry (`CONNECTOR_BODY_LIMIT_BYTES`), each alone fits,
 * and a set whose answer is refused would fail its reads again on every retry. A typed call is one
 * message of a bounded answer, and shares a message set with its neighbours.
 */
export function goesAlone(
  s: Pick<Submission, "document" | "operationId" | "batch" | "background" | "program">,
): boolean {
  const [only] = s.document.messages;
  return (
    only === undefined ||
    s.program !== undefined ||
    s.document.messages.length !== 1 ||
    s.operationId === PASSTHROUGH_OPERATION ||
    s.batch !== undefined ||
    s.background === true ||
    only.name.endsWith("ReportQueryRq")
  );
}

function isReachable(deps: Deps, stored: ConnectionRow): boolean {
  const connection = deps.activity.connection(stored);
  return (
    effectiveStatus(connection, deps.clock.now(), deps.config.CONNECTION_OFFLINE_AFTER_MS) !== "offline" &&
    lastSeenAt(connection) !== null
  );
}

/**
 * Admission: the error a new request is refused with, or null to queue it. No connection yet, a
 * disabled connection or a full queue refuse every call; a sync call is also refused when the
 * connector is offline or reports the application unreachable (the connection's own error), or the
 * application does not answer (LEDGER_NOT_RESPONDING), so the caller is told now instead of waiting
 * out its timeout. A file mode conflict is not a refusal: the request waits for the connection's
 * `retryAt` (spec: `file_mode_conflict`). Billing comes after these (submit).
 */
function admissionError(
  deps: Deps,
  s: Submission,
  connection: ConnectionRow | null,
  queueFull: boolean,
  unansweredSince: Date | null,
): ServiceError | null {
  if (!connection || connection.status === "pending_setup")
    return new ServiceError("INTEGRATION_CONNECTION_NOT_SET_UP");
  if (connection.status === "disabled") return new ServiceError("INTEGRATION_CONNECTION_DISABLED");
  if (!s.options.async && !isReachable(deps, connection)) {
    const seen = lastSeenAt(deps.activity.connection(connection));
    return new ServiceError("INTEGRATION_CONNECTION_NOT_ACTIVE", {
      message: seen
        ? `The connector was last seen ${Math.round((deps.clock.now() - seen.getTime()) / 1000)} s ago.`
        : "The connector has not checked in yet.",
    });
  }
  const unavailable = s.options.async ? null : unavailableError(connection);
  if (unavailable && !waitsForRetry(unavailable)) return unavailable;
  const silent = s.options.async ? null : notRespondingError(deps, unansweredSince);
  if (silent) return silent;
  if (queueFull) return new ServiceError("CONNECTION_QUEUE_FULL");
  return null;
}

/**
 * 503 LEDGER_NOT_RESPONDING when the application has owed an answer for longer than
 * `LEDGER_NOT_RESPONDING_MS` (decision 0019): the connector reached it (a session is open), but a
 * request handed over is not answered, or the company file report never came. A sync call would
 * only wait behind it; an async call is queued and runs once the application answers again.
 */
function notRespondingError(deps: Deps, unansweredSince: Date | null): ServiceError | null {
  if (unansweredSince === null) return null;
  const silentMs = deps.clock.now() - unansweredSince.getTime();
  if (silentMs <= deps.config.LEDGER_NOT_RESPONDING_MS) return null;
  const seconds = Math.round(silentMs / 1000);
  return new ServiceError("LEDGER_NOT_RESPONDING", {
    message: `The accounting application has not answered for ${seconds} s: it accepted the connector's session but does not respond.`,
    details: { unansweredSince: unansweredSince.toISOString(), silentSeconds: seconds },
  });
}

/**
 * Waits until the request settles or the caller's deadline passes. At the deadline a request not
 * yet sent is canceled (504 REQUEST_TIMEOUT_NOT_SENT); a sent one keeps running (504
 * LEDGER_REQUEST_TIMEOUT with `details.requestId`).
 */
async function waitForCaller(
  deps: Deps,
  initial: RequestRow,
  watch: CallerWatch,
  timeoutMs: number,
  hungUp?: AbortSignal,
): Promise<SubmitOutcome> {
  const deadline = deps.clock.now() + timeoutMs;
  // A caller that hangs up is gone for webhooks at once; the wait goes on (its deadline still
  // cancels an unsent request).
  const letGo = (): void => void callerGone(deps, initial.id).catch(() => undefined);
  if (hungUp?.aborted) letGo();
  else hungUp?.addEventListener("abort", letGo, { once: true });
  const row = await watch.until(initial, deadline).finally(() => hungUp?.removeEventListener("abort", letGo));
  if (isSettled(row.status)) return { kind: "settled", row };
  const canceled = await endUnsent(
    deps,
    row,
    "sync_timeout",
    new ServiceError("REQUEST_TIMEOUT_NOT_SENT"),
    "The caller's timeout elapsed before sending",
  );
  if (canceled) return { kind: "settled", row: canceled };
  // Sent: the caller lets go first (compare-and-set), so a request that settles from now on has
  // its events sent to every endpoint; if it settled already, the caller gets it.
  await callerGone(deps, row.id);
  const latest = (await findRequestById(deps.db, row.id)) ?? row;
  return isSettled(latest.status) ? { kind: "settled", row: latest } : { kind: "timeout_sent", row: latest };
}

/**
 * The sync caller of `requestId` stopped waiting (timeout after sending, it hung up). Webhooks:
 * the request's events are no longer limited to `includeSyncRequests` endpoints (spec: Events).
 */
export async function callerGone(deps: Deps, requestId: string): Promise<void> {
  await markCallerGone(deps.db, requestId, new Date(deps.clock.now()));
}

/**
 * The error a sync caller receives for a request that settled without a result (decision 0011). It
 * is the stored error, except for the codes that live only on a Request resource (`REQUEST_CANCELED`,
 * `REQUEST_EXPIRED`, null `httpStatusCode`): a caller whose request was canceled by the cancel
 * operation, or whose request (attached by Idempotency-Key to an async one) passed its queue TTL,
 * gets 504 `REQUEST_TIMEOUT_NOT_SENT` — its wait ended before sending and the request is canceled,
 * exactly that code's meaning — with `details.requestId` and `details.reason` (the Request's code).
 */
export function syncCallerError(row: Pick<RequestRow, "id" | "error">): ServiceError {
  const stored = row.error ? errorFromStored(row.error) : new ServiceError("INTERNAL_ERROR");
  if (stored.httpStatus !== null) return stored;
  const why =
    stored.code === "REQUEST_EXPIRED"
      ? "its queue TTL elapsed before it could be sent"
      : "it was canceled (`POST /v1/requests/{id}/cancel`) before it was sent";
  return new ServiceError("REQUEST_TIMEOUT_NOT_SENT", {
    message: `The request was not sent: ${why}. It was not applied.`,
    outcome: stored.outcome,
    details: { requestId: row.id, reason: stored.code },
  });
}

/** Rebuilds a ServiceError from a stored error body (to render it again with this response's ID). */
export function errorFromStored(stored: unknown): ServiceError {
  const body = stored as Partial<ReturnType<typeof errorBodyOf>>;
  if (!body.code) return new ServiceError("INTERNAL_ERROR");
  return new ServiceError(body.code, {
    ...(body.message ? { message: body.message } : {}),
    ...(body.userFacingMessage ? { userFacingMessage: body.userFacingMessage } : {}),
    param: body.param ?? null,
    integrationCode: body.integrationCode ?? null,
    ...(body.outcome ? { outcome: body.outcome } : {}),
    ...(body.details ? { details: body.details as never } : {}),
  });
}
