import type { z } from "zod";
import type { Deps } from "../deps.ts";
import { errorFromZod } from "../errors/from-zod.ts";
import { ServiceError } from "../errors/service-error.ts";
import type { CallInput, MessageContext, PageRequest } from "../ledger/action-table.ts";
import { CURSOR_PAGE_SIZE_MAX, newCursorId, resumeCursor, startCursor } from "../ledger/cursors.ts";
import { typedOperation, type TypedOperation } from "../ledger/operations.ts";
import { idParam, parseQuery, type ParamValue } from "../ledger/typed/filters.ts";
import { gateError, gateMessages } from "../ledger/connection-gate.ts";
import type { Shape } from "../ledger/resources/shape.ts";
import { messageSet } from "../ledger/xml/message-set.ts";
import { ledgerSchema } from "../ledger/xml/schema.ts";
import type { XmlElement } from "../ledger/xml/tree.ts";
import { messageProblem } from "../ledger/xml/validate-tree.ts";
import type { ConnectionRow } from "../store/connections.ts";
import type { Tenant } from "../store/tenant.ts";
import type { CallOptions } from "./call-options.ts";
import { submit, syncCallerError, type Submission } from "./submit.ts";

/**
 * The typed call (issue 14): one path from an operation and its raw input to a Submission, used by
 * the HTTP routes, batch (a loop over {@link validateTypedInput} and {@link prepareTypedCall}), the
 * change feed and the read before a partial update. Nothing reaches the queue before every input —
 * path, query, body — has been validated by the operation's inputs (the action table's one
 * vocabulary of field kinds), and the message the table writes is checked against the request
 * schema (a refusal there is a bug in a definition, never the caller's fault: INTERNAL_ERROR).
 *
 *   raw input ─validate─▶ CallInput ─plan (cursor start/resume, read first)─▶ message tree
 *     ─schema check─▶ Submission { document, fingerprint, write targets, checks before queueing }
 */

/** An operation's input as it arrives: from HTTP (strings) or a batch member (JSON values). */
export interface TypedCallInput {
  readonly pathParams?: Readonly<Record<string, unknown>>;
  readonly query?: unknown;
  /** The JSON body; undefined when none was sent. */
  readonly body?: unknown;
}

/** How a call is run. */
export type CallMode =
  /** A caller's own call: lists page with application cursors, updates read first where needed. */
  | "call"
  /** A batch member: a list is one query of at most `limit` (no cursor); no separate read first. */
  | "batch"
  /** The service's own read of a whole list (the change feed): one query, no page size. */
  | "whole";

export interface TypedCallOptions {
  /** The caller's key (its project, mode and read-only flag). */
  readonly principal: Tenant & { readonly readOnly?: boolean };
  readonly call: CallOptions;
  readonly mode?: CallMode;
  /** The service's own Request (the change feed): handed out after developers' requests. */
  readonly background?: boolean;
  /** Prefix of `param` in errors (a batch member: `requests[2]`). */
  readonly paramPrefix?: string;
}

/** A typed call's message and what must hold before it is queued (batch combines these). */
export interface PreparedMessage {
  readonly operation: TypedOperation;
  readonly message: XmlElement;
  /** The call's identity for Idempotency-Key fingerprints (its route and body). */
  readonly fingerprint: unknown;
  /** The route as the Request records it, with the record's ID. */
  readonly path: string;
  /** The validated query (a batch's fingerprint includes its members' queries). */
  readonly query: Readonly<Record<string, unknown>>;
  /** Checks that need the connection, and bookkeeping before queueing (a new cursor). */
  readonly beforeQueue: ((connection: ConnectionRow | null) => Promise<void>) | null;
}

export type PreparedCall =
  | {
      readonly kind: "submit";
      readonly submission: Submission;
      readonly status: number;
      readonly prepared: PreparedMessage;
    }
  /** Answered without a Request (a list page repeated from its cursor). */
  | { readonly kind: "answer"; readonly result: unknown; readonly status: number };

const MAX_ID_LENGTH = 36;

/** `param` for an input of a member: `requests[2].body.name`, `requests[2].query.limit`. */
function paramOf(prefix: string, part: "body" | "query" | "pathParams", name: string | null): string {
  if (prefix === "") return name ?? part;
  return name === null ? `${prefix}.${part}` : `${prefix}.${part}.${name}`;
}

function rename(
  error: unknown,
  prefix: string,
  part: "body" | "query" | "pathParams",
  param?: string,
): never {
  if (error instanceof ServiceError) {
    throw new ServiceError(error.code, {
      param: param ?? paramOf(prefix, part, error.param),
      message: error.message,
      ...(error.details ? { details: error.details as never } : {}),
    });
  }
  throw error;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseBody(operation: TypedOperation, body: unknown, prefix: string): Record<string, unknown> {
  const rule = operation.inputs().body;
  const invalid = (message: string): ServiceError =>
    new ServiceError("INVALID_PARAMETER", { param: paramOf(prefix, "body", null), message });
  switch (rule.type) {
    case "none":
      if (body !== undefined) throw invalid(`\`${operation.operationId}\` takes no body.`);
      return {};
    case "empty":
      if (body === undefined) return {};
      if (!isPlainObject(body)) throw invalid("The body must be empty or `{}`.");
      for (const name of Object.keys(body)) {
        throw new ServiceError("UNKNOWN_PARAMETER", {
          param: paramOf(prefix, "body", name),
          message: `Unknown parameter \`${name}\`: this operation takes no body fields.`,
        });
      }
      return {};
    case "json": {
      // An empty body is no body: an operation whose fields are all optional accepts it as `{}`.
      const given = body === undefined ? {} : body;
      if (!isPlainObject(given)) throw invalid("The body must be a JSON object.");
      const result = (rule.schema() as z.ZodType).safeParse(given, { reportInput: true });
      if (!result.success) rename(errorFromZod(result.error), prefix, "body");
      return result.data as Record<string, unknown>;
    }
  }
}

function parsePath(operation: TypedOperation, given: Readonly<Record<string, unknown>>, prefix: string) {
  const declared = operation.inputs().path;
  for (const name of Object.keys(given)) {
    if (!declared.includes(name as "id")) {
      throw new ServiceError("UNKNOWN_PARAMETER", {
        param: paramOf(prefix, "pathParams", name),
        message: `Unknown path parameter \`${name}\`.`,
      });
    }
  }
  if (!declared.includes("id")) return null;
  const id = given.id;
  const param = prefix === "" ? "id" : paramOf(prefix, "pathParams", "id");
  if (typeof id === "string" && id.length >= 1 && id.length <= MAX_ID_LENGTH) {
    // The ID travels in the application's message: it must fit its code page like any text.
    const checked = idParam.schema.safeParse(id, { reportInput: true });
    if (!checked.success) rename(errorFromZod(checked.error), "", "pathParams", param);
    return id;
  }
  throw new ServiceError(typeof id === "string" ? "LEDGER_OBJECT_NOT_FOUND" : "INVALID_PARAMETER", {
    param,
    message:
      typeof id === "string"
        ? "No record with this ID exists (record IDs are 1 to 36 characters)."
        : "`id` (the record's ID, 1 to 36 characters) is required.",
  });
}

/**
 * Validates every input of a call — path, query, body — by the operation's inputs, before anything
 * is queued. Errors name the offending parameter (`param`), prefixed for batch members.
 */
export function validateTypedInput(
  operation: TypedOperation,
  input: TypedCallInput,
  options: Pick<TypedCallOptions, "paramPrefix" | "mode"> = {},
): CallInput {
  const prefix = options.paramPrefix ?? "";
  const id = parsePath(operation, input.pathParams ?? {}, prefix);
  const rawQuery = input.query ?? {};
  if (!isPlainObject(rawQuery)) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: paramOf(prefix, "query", null),
      message: "`query` must be an object of parameters.",
    });
  }
  const inputs = operation.inputs();
  if (options.mode === "batch" && rawQuery.cursor !== undefined) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: paramOf(prefix, "query", "cursor"),
      message: "A batch member is one query of at most `limit` records: `cursor` is not accepted.",
    });
  }
  let query: Map<string, ParamValue>;
  try {
    query = parseQuery(inputs.query, rawQuery, inputs.filters);
  } catch (error) {
    rename(error, prefix, "query");
  }
  const body = parseBody(operation, input.body, prefix);
  // Input is checked first (strict input holds everywhere); then an action the application lacks.
  if (operation.unsupported) throw operation.unsupported;
  return { id, query, body };
}

/** A message the engine wrote that the schema refuses is a bug in a definition, never the caller's fault. */
function checkMessage(message: XmlElement): void {
  const problem = messageProblem(ledgerSchema(), message);
  if (problem) {
    throw new ServiceError("INTERNAL_ERROR", {
      cause: new Error(`typed message refused by the schema: ${problem}`),
    });
  }
}

/**
 * The connection gate (decision 0016): the message may use no element newer than the connection's
 * negotiated version, nor one its company file's edition lacks; checked before queueing, when the
 * connection is known. A batch member's refusal names the member's field.
 */
function connectionGate(
  message: XmlElement,
  shape: Shape | null,
  prefix: string,
): (connection: ConnectionRow | null) => Promise<void> {
  return async (connection) => {
    const refusal = gateMessages([message], connection, shape ?? undefined);
    if (!refusal) return;
    if (prefix === "") throw gateError(refusal);
    throw gateError(refusal, refusal.isField ? paramOf(prefix, "body", refusal.path) : prefix);
  };
}

type BeforeQueue = (connection: ConnectionRow | null) => Promise<void>;

/** Runs checks before queueing in order (null when there are none). */
export function allOf(checks: ReadonlyArray<BeforeQueue | null>): BeforeQueue | null {
  const present = checks.filter((check) => check !== null);
  if (present.length === 0) return null;
  return async (connection) => {
    for (const check of present) await check(connection);
  };
}

/** The route of a call as the Request records it (the record's ID in place of `:id`). */
function pathOf(operation: TypedOperation, input: CallInput): string {
  return operation.http.path.replace(":id", encodeURIComponent(input.id ?? ""));
}

interface Planned {
  readonly message: XmlElement;
  readonly beforeQueue: ((connection: ConnectionRow | null) => Promise<void>) | null;
}

/**
 * Prepares one typed call: validates its input, plans the page (a new or continued application
 * cursor) or the read before a partial update, writes the message and returns the Submission the
 * request engine queues — or, for a repeated list page, the answer itself.
 */
export async function prepareTypedCall(
  deps: Deps,
  operation: TypedOperation,
  raw: TypedCallInput,
  options: TypedCallOptions,
): Promise<PreparedCall> {
  const mode = options.mode ?? "call";
  const input = validateTypedInput(operation, raw, options);
  if (operation.access === "write" && options.principal.readOnly) {
    throw new ServiceError("API_KEY_READ_ONLY", {
      ...(options.paramPrefix ? { param: options.paramPrefix } : {}),
    });
  }
  const status = operation.http.status;
  const planned = await plan(deps, operation, input, options, mode);
  if ("result" in planned) return { kind: "answer", result: planned.result, status };
  checkMessage(planned.message);
  const beforeQueue = allOf([
    connectionGate(planned.message, operation.bodyShape(), options.paramPrefix ?? ""),
    planned.beforeQueue,
  ]);
  // An operation of several message sets (upsert) starts its program (decision 0046).
  const program = operation.program(input);
  if (program !== null && mode !== "call") {
    throw new ServiceError("INVALID_PARAMETER", {
      param: paramOf(options.paramPrefix ?? "", "body", null),
      message: `\`${operation.operationId}\` runs several message sets of its own: call it on its own, not as a batch member.`,
    });
  }
  const prepared: PreparedMessage = {
    operation,
    message: planned.message,
    fingerprint: operation.fingerprint(input),
    path: pathOf(operation, input),
    query: Object.fromEntries(input.query),
    beforeQueue,
  };
  const submission: Submission = {
    principal: options.principal,
    operationId: operation.operationId,
    method: operation.http.method,
    path: prepared.path,
    isWrite: operation.access === "write",
    document: messageSet([planned.message]),
    fingerprintBody: prepared.fingerprint,
    input: callInputShown(prepared.query, input.body),
    options: options.call,
    ...(program === null ? {} : { program }),
    ...(options.background ? { background: true } : {}),
    ...(beforeQueue ? { beforeQueue } : {}),
  };
  return { kind: "submit", submission, status, prepared };
}

async function plan(
  deps: Deps,
  operation: TypedOperation,
  input: CallInput,
  options: TypedCallOptions,
  mode: CallMode,
): Promise<Planned | { result: unknown }> {
  const message = (
    context: Partial<MessageContext>,
    beforeQueue: Planned["beforeQueue"] = null,
  ): Planned => ({
    message: operation.message(input, { page: null, kept: {}, ...context }),
    beforeQueue,
  });
  const paging = operation.paging(input);
  if (paging !== null) return planPage(deps, paging, input, options, mode, operation, message);
  const readFirst = operation.readFirst(input);
  if (!readFirst) return message({});
  if (mode !== "call") {
    // Decision 0014: a batch member cannot read first (it would need a round trip of its own).
    const [first] = readFirst.arrays;
    throw new ServiceError("INVALID_PARAMETER", {
      param: paramOf(options.paramPrefix ?? "", "body", first?.input ?? null),
      message: `A batch update must send every line array of a family or none: send \`${readFirst.arrays.map((a) => a.input).join("`, `")}\` too (with the IDs of the lines to keep), or update the record on its own.`,
    });
  }
  const current = await readRecord(deps, operation, input, options);
  const kept = Object.fromEntries(
    readFirst.arrays.map(({ input: name, output }) => [
      name,
      ((current[output] ?? []) as { id: string }[]).map((line) => line.id),
    ]),
  );
  return message({ kept });
}

/** A list's page: one query, a new cursor's first page, or a continued cursor's next page. */
async function planPage(
  deps: Deps,
  paging: "cursor" | "single",
  input: CallInput,
  options: TypedCallOptions,
  mode: CallMode,
  operation: TypedOperation,
  message: (context: Partial<MessageContext>, beforeQueue?: Planned["beforeQueue"]) => Planned,
): Promise<Planned | { result: unknown }> {
  const limit = input.query.get("limit");
  const size = typeof limit === "number" ? limit : null;
  const filters = new Map([...input.query].filter(([name]) => name !== "limit" && name !== "cursor"));
  if (mode !== "call" || (paging === "single" && !input.query.has("cursor"))) {
    const max = mode === "whole" ? null : (size ?? (mode === "batch" ? CURSOR_PAGE_SIZE_MAX : null));
    return message({ page: { kind: "single", max } });
  }
  const cursorToken = input.query.get("cursor");
  if (typeof cursorToken === "string") {
    const resumption = await resumeCursor(deps.db, {
      tenant: options.principal,
      endUserId: options.call.endUserId,
      operationId: operation.operationId,
      token: cursorToken,
      filters: Object.fromEntries(filters),
      nowMs: deps.clock.now(),
    });
    if (resumption.kind === "repeat") return { result: resumption.result };
    const { cursor, page } = resumption;
    const stored = new Map(Object.entries(cursor.filters) as [string, ParamValue][]);
    const continued: PageRequest = {
      kind: "continue",
      cursorId: cursor.id,
      page,
      iteratorId: cursor.iterator_id ?? "",
      size: size ?? cursor.page_size,
    };
    return {
      message: operation.message({ ...input, query: stored }, { page: continued, kept: {} }),
      beforeQueue: null,
    };
  }
  const cursorId = newCursorId();
  const pageSize = size ?? CURSOR_PAGE_SIZE_MAX;
  return message({ page: { kind: "start", cursorId, size: pageSize } }, async (connection) => {
    if (!connection) return;
    await startCursor(deps.db, {
      id: cursorId,
      tenant: options.principal,
      endUserId: options.call.endUserId,
      connectionId: connection.id,
      operationId: operation.operationId,
      filters: Object.fromEntries(filters),
      pageSize,
      nowMs: deps.clock.now(),
    });
  });
}

/**
 * The separate read before a partial line update (spec "Update", rule 5): a retrieve Request of its
 * own, through the same path, waited for synchronously.
 */
async function readRecord(
  deps: Deps,
  operation: TypedOperation,
  input: CallInput,
  options: TypedCallOptions,
): Promise<Record<string, unknown>> {
  const retrieve = operation.resource
    ? typedOperation(`${operation.resource.operationPrefix}.retrieve`)
    : null;
  if (!retrieve)
    throw new ServiceError("INTERNAL_ERROR", { cause: new Error(`${operation.operationId}: no retrieve`) });
  const prepared = await prepareTypedCall(
    deps,
    retrieve,
    { pathParams: { id: input.id } },
    { ...options, call: { ...options.call, async: false, idempotencyKey: null } },
  );
  if (prepared.kind !== "submit") throw new ServiceError("INTERNAL_ERROR");
  const outcome = await submit(deps, prepared.submission);
  const row = outcome.row;
  if (outcome.kind === "settled" && row.status === "succeeded") return row.result as Record<string, unknown>;
  if (outcome.kind === "timeout_sent")
    throw new ServiceError("LEDGER_REQUEST_TIMEOUT", { details: { requestId: row.id } });
  // Refused at admission (never sent: the connection, billing): the update is refused the same way.
  if (row.status === "failed" && row.sent_at === null && row.error !== null) throw syncCallerError(row);
  const stored = row.error as { code?: string; message?: string } | null;
  throw new ServiceError("LEDGER_REQUEST_ERROR", {
    message: `Reading the record before the update failed: ${stored?.message ?? stored?.code ?? row.status}`,
  });
}

/** The call's JSON input as the messages view shows it: the query and body it was given, when any. */
export function callInputShown(
  query: Readonly<Record<string, unknown>>,
  body: unknown,
): Record<string, unknown> {
  const hasBody = typeof body === "object" && body !== null && Object.keys(body).length > 0;
  return {
    ...(Object.keys(query).length > 0 ? { query } : {}),
    ...(hasBody ? { body } : {}),
  };
}
