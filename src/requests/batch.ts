import { z } from "zod";
import type { Deps } from "../deps.ts";
import { errorFromZod } from "../errors/from-zod.ts";
import { ServiceError } from "../errors/service-error.ts";
import { BATCH_MEMBERS_MAX, BATCH_OPERATION, type BatchOnError, type BatchPlan } from "../ledger/batch.ts";
import { LEDGER_BASE } from "../ledger/action-table.ts";
import { typedOperation } from "../ledger/operations.ts";
import { messageSet } from "../ledger/xml/message-set.ts";
import type { Submission } from "./submit.ts";
import { setRange, setStarts, undoOperation, type BatchProgram, type Fill } from "../ledger/batch-program.ts";
import { resolveMemberRefs, type MemberFacts } from "./batch-refs.ts";
import {
  allOf,
  prepareTypedCall,
  validateTypedInput,
  type PreparedMessage,
  type TypedCallOptions,
} from "./typed-call.ts";

/**
 * A batch (spec "POST /v1/{ledger}/batch", decision 0014) is a loop over the typed-call core: every
 * member is validated and prepared exactly as its own endpoint would be (in `batch` mode: a list is
 * one query of at most `limit`, no cursor; an update that would need a read first is refused),
 * before anything is queued. The members' messages then travel in order as ONE message set with
 * the batch's `onError`, in one Request: one Idempotency-Key, one timeline, one round trip, and
 * the at-most-once recovery resolves the set as a whole.
 */
export const BATCH_PATH = `${LEDGER_BASE}/batch`;

const member = z.strictObject({
  operationId: z.string().min(1).max(100),
  body: z
    .unknown()
    .optional()
    .describe(
      'The member\'s body as its own endpoint takes it. In place of a value, `{"$ref": "requests[0].data.id"}` (or the JSON Pointer `"/requests/0/data/id"`) refers to an earlier member\'s answer (decision 0050).',
    ),
  query: z.unknown().optional(),
  pathParams: z.unknown().optional(),
});

export const batchBody = z.strictObject({
  onError: z.enum(["stopOnError", "continueOnError", "rollback"]).default("stopOnError"),
  requests: z
    .array(member)
    .min(1, { error: "A batch has 1 to 25 members." })
    .max(BATCH_MEMBERS_MAX, { error: "A batch has 1 to 25 members." }),
});

export type BatchBody = z.input<typeof batchBody>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Prepares a batch: the body's shape, then every member through {@link prepareTypedCall} in order
 * (the first invalid member fails the whole call, `param` naming it), then one Submission.
 */
export async function prepareBatch(
  deps: Deps,
  raw: unknown,
  options: Omit<TypedCallOptions, "mode" | "paramPrefix">,
): Promise<Submission> {
  if (!isPlainObject(raw)) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: "body",
      message: "The body must be a JSON object.",
    });
  }
  const parsed = batchBody.safeParse(raw, { reportInput: true });
  if (!parsed.success) throw errorFromZod(parsed.error);
  const { onError, requests } = parsed.data;
  const prepared: PreparedMessage[] = [];
  const facts: MemberFacts[] = [];
  const refsShown: unknown[] = [];
  const fills: Fill[] = [];
  const needs: number[][] = [];
  for (const [index, request] of requests.entries()) {
    const prefix = `requests[${index}]`;
    const operation = typedOperation(request.operationId);
    if (!operation) {
      throw new ServiceError("INVALID_PARAMETER", {
        param: `${prefix}.operationId`,
        message: `\`${request.operationId}\` is not a typed operation (\`ledger.<resource>.<action>\`, as in the OpenAPI document).`,
      });
    }
    const pathParams = request.pathParams === undefined ? {} : request.pathParams;
    if (!isPlainObject(pathParams)) {
      throw new ServiceError("INVALID_PARAMETER", {
        param: `${prefix}.pathParams`,
        message: '`pathParams` must be an object, for example `{"id": "80000001-1700000000"}`.',
      });
    }
    // References to earlier members' answers (decision 0050) are resolved before validation.
    const refs = resolveMemberRefs({ index, prefix, onError, operation, request, pathParams, facts });
    const input = { pathParams, query: request.query, body: refs.body };
    const memberOptions = { ...options, mode: "batch" as const, paramPrefix: prefix };
    // A value only an answer tells: the member waits for it in a later message set (decision 0050).
    for (const waiting of refs.needsAnswer) fills.push(waiting.fill);
    needs.push(refs.needsAnswer.map((waiting) => waiting.fill.from.member));
    if (onError === "rollback" && operation.access === "write" && !undoOperation(operation)) {
      throw new ServiceError("INVALID_PARAMETER", {
        param: `${prefix}.operationId`,
        message:
          "With `onError: rollback` every write member creates a record the batch can delete or void again.",
      });
    }
    const call = await prepareTypedCall(deps, operation, input, memberOptions);
    if (call.kind !== "submit") throw new ServiceError("INTERNAL_ERROR");
    prepared.push(refs.finish(call.prepared));
    refsShown.push(refs.shown);
    facts.push(refs.facts(validateTypedInput(operation, input, memberOptions).body));
  }
  const program = batchProgram(onError, prepared, fills, needs);
  return batchSubmission(onError, prepared, options, parsed.data, refsShown, program);
}

/**
 * A batch that waits for answers, or may have to undo what it created, runs as consecutive message
 * sets of one Request (decision 0046): its program holds every member's message (placeholders
 * where a fill goes) and where the sets start; the first set is the Request's document.
 */
function batchProgram(
  onError: BatchOnError,
  members: readonly PreparedMessage[],
  fills: readonly Fill[],
  needs: ReadonlyArray<readonly number[]>,
): BatchProgram | null {
  if (onError !== "rollback" && fills.length === 0) return null;
  return {
    kind: "batch",
    starts: setStarts(members.length, needs),
    messages: members.map((m) => m.message),
    fills,
    phase: "members",
    set: 0,
    undo: [],
    results: members.map(() => null),
  };
}

function batchSubmission(
  onError: BatchOnError,
  members: readonly PreparedMessage[],
  options: Omit<TypedCallOptions, "mode" | "paramPrefix">,
  input: unknown,
  refs: readonly unknown[],
  program: BatchProgram | null,
): Submission {
  const plan: BatchPlan = {
    onError,
    members: members.map((m) => ({ operationId: m.operation.operationId, access: m.operation.access })),
  };
  const beforeQueue = allOf(members.map((m) => m.beforeQueue));
  return {
    principal: options.principal,
    operationId: BATCH_OPERATION,
    method: "POST",
    path: BATCH_PATH,
    isWrite: members.some((m) => m.operation.access === "write"),
    document: messageSet(
      members.slice(0, program ? setRange(program, 0)[1] : members.length).map((m) => m.message),
      onError === "continueOnError" ? "continueOnError" : "stopOnError",
    ),
    ...(program ? { program } : {}),
    // The same members in the same order are the same batch (a key reused otherwise → 422).
    fingerprintBody: {
      onError,
      members: members.map((m, index) => ({
        operationId: m.operation.operationId,
        path: m.path,
        query: m.query,
        body: m.fingerprint,
        ...(refs[index] === null ? {} : { refs: refs[index] }),
      })),
    },
    options: options.call,
    batch: plan,
    input,
    ...(beforeQueue ? { beforeQueue } : {}),
  };
}
