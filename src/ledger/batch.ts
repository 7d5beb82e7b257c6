import { toErrorBody } from "../errors/render.ts";
import { ServiceError, type ErrorBody } from "../errors/service-error.ts";
import type { RequestRow } from "../store/requests.ts";
import {
  typedOperation,
  type DecodeInput,
  type Decoded,
  type FinishContext,
  type OperationHandler,
  type TypedOperation,
} from "./operations.ts";
import type { JsonSchema } from "./resources/json-schema.ts";
import { responseMessage, type RequestWarning } from "./typed/actions.ts";
import {
  advance,
  setRange,
  undoOperation,
  type BatchProgram,
  type ProgramMemberResult,
} from "./batch-program.ts";
import { messageSet } from "./xml/message-set.ts";
import { writeTargetsOf } from "./xml/write-targets.ts";

/**
 * Batch (spec "POST /v1/{ledger}/batch", decision 0014): up to 25 typed operations run in order as
 * one message set in one connector round trip, as ONE Request. The members are prepared by the
 * typed-call core one by one (requests/batch.ts); what the Request keeps of them is the plan below
 * (`requests.batch`), so whichever instance receives the answer — or the recovery query's stored
 * answer after a lost one — reads each member's response with its own operation.
 *
 * The result: `{objectType: "batch", onError, results: [...]}`, one entry per member in order:
 * `{operationId, status, httpStatusCode, data, error, warnings}` where `status` is
 * - `succeeded`: `data` is what the member's own endpoint would have answered (`httpStatusCode` its
 *   success status),
 * - `failed`: `error` is the error object the endpoint would have answered with,
 * - `not_processed`: with `stopOnError`, a member after the first failure (the application ran none),
 * - `unknown`: only inside LEDGER_WRITE_OUTCOME_UNKNOWN's `details.members`, while the answer is lost.
 */
export const BATCH_OPERATION = "ledger.batch";
export const BATCH_MEMBERS_MAX = 25;

export type BatchOnError = "stopOnError" | "continueOnError" | "rollback";

/** What the Request keeps of a batch: the members' operations, in order. */
export interface BatchPlan {
  readonly onError: BatchOnError;
  readonly members: ReadonlyArray<{ readonly operationId: string; readonly access: "read" | "write" }>;
}

export type BatchMemberStatus = "succeeded" | "failed" | "not_processed" | "unknown" | "rolled_back";

export interface BatchMemberResult {
  operationId: string;
  status: BatchMemberStatus;
  httpStatusCode: number | null;
  data: unknown;
  error: ErrorBody | null;
  warnings: RequestWarning[];
  /** Under `rollback`: the undo of this member failed (it stays `succeeded`). */
  rollbackError?: unknown;
}

export interface BatchResult {
  objectType: "batch";
  onError: BatchOnError;
  results: BatchMemberResult[];
}

/** The plan stored on a batch Request (null for any other Request). */
export function batchPlanOf(row: Pick<RequestRow, "batch">): BatchPlan | null {
  const plan = row.batch as BatchPlan | null;
  return plan && Array.isArray(plan.members) ? plan : null;
}

/** LEDGER_WRITE_OUTCOME_UNKNOWN's `details.members` (spec: every member; each write member `unknown`). */
export function unknownMembers(plan: BatchPlan): Array<{
  index: number;
  operationId: string;
  access: "read" | "write";
  status: BatchMemberStatus;
}> {
  return plan.members.map((member, index) => ({
    index,
    operationId: member.operationId,
    access: member.access,
    status: "unknown",
  }));
}

function operationOf(operationId: string): TypedOperation {
  const operation = typedOperation(operationId);
  if (!operation) throw new ServiceError("INTERNAL_ERROR", { cause: new Error(`unknown ${operationId}`) });
  return operation;
}

interface MemberRead {
  operation: TypedOperation;
  decoded: Decoded | null;
}

/**
 * Reads the answer of a batch's message set: the application answers the members in order, one
 * response message each, and with `stopOnError` none after the first failure. A member's response
 * is read by its own operation exactly as a single call's would be.
 */
function readMembers(input: DecodeInput, operationIds: readonly string[]): MemberRead[] {
  const messages = input.answer.root.children.find((c) => c.name === "QBXMLMsgsRs")?.children ?? [];
  return operationIds.map((operationId, index) => {
    const operation = operationOf(operationId);
    const element = messages[index];
    if (!element) return { operation, decoded: null };
    const message = responseMessage(element);
    try {
      const { result, warnings } = decodeMember(operation, message, input.request);
      return { operation, decoded: { ok: true, result, warnings } };
    } catch (error) {
      if (error instanceof ServiceError) return { operation, decoded: { ok: false, error } };
      throw error;
    }
  });
}

function decodeMember(
  operation: TypedOperation,
  message: ReturnType<typeof responseMessage>,
  request: RequestRow,
): { result: unknown; warnings: RequestWarning[] } {
  return operation.decodeMessage(message, request);
}

function memberResult(read: MemberRead, publicUrl: string, requestId: string): BatchMemberResult {
  const { operation, decoded } = read;
  if (decoded === null) {
    return {
      operationId: operation.operationId,
      status: "not_processed",
      httpStatusCode: null,
      data: null,
      error: null,
      warnings: [],
    };
  }
  if (!decoded.ok) {
    const error = toErrorBody(decoded.error, requestId, publicUrl);
    return {
      operationId: operation.operationId,
      status: "failed",
      httpStatusCode: error.httpStatusCode,
      data: null,
      error,
      warnings: [],
    };
  }
  return {
    operationId: operation.operationId,
    status: "succeeded",
    httpStatusCode: operation.http.status,
    data: decoded.result,
    error: null,
    warnings: decoded.warnings,
  };
}

/** The batch's answer as its members read it, before their finishing steps. */
interface DecodedBatch {
  plan: BatchPlan;
  reads: MemberRead[];
}

/** The operation-table entry of batch Requests (the engine decodes every answer by operation ID). */
export const batchHandler: OperationHandler = {
  operationId: BATCH_OPERATION,
  decode(input) {
    const plan = batchPlanOf(input.request);
    if (!plan) {
      return {
        ok: false,
        error: new ServiceError("INTERNAL_ERROR", { message: "A batch without members." }),
      };
    }
    const program = batchProgramOf(input.request);
    if (program) {
      // This set's members, or the undo messages after a failure under rollback.
      const [first, end] = setRange(program, program.set);
      const operationIds =
        program.phase === "rollback"
          ? program.undo.map((member) => undoOperationId(plan, member))
          : plan.members.slice(first, end).map((m) => m.operationId);
      const reads = readMembers(input, operationIds);
      const answered = reads.map((read) => memberResult(read, input.publicUrl, input.request.id));
      return {
        ok: true,
        result: { program, plan, reads, answered, publicUrl: input.publicUrl } satisfies ProgramStep,
        warnings: [],
      };
    }
    const decoded: DecodedBatch = {
      plan,
      reads: readMembers(
        input,
        plan.members.map((m) => m.operationId),
      ),
    };
    const publicUrl = input.publicUrl;
    const result: BatchResult = {
      objectType: "batch",
      onError: plan.onError,
      results: decoded.reads.map((read) => memberResult(read, publicUrl, input.request.id)),
    };
    return { ok: true, result: { decoded, result }, warnings: [] };
  },
  async finish(context: FinishContext, request: RequestRow, value: unknown) {
    if (typeof value === "object" && value !== null && "program" in value) {
      return finishStep(context, request, value as ProgramStep);
    }
    const { decoded, result } = value as { decoded: DecodedBatch; result: BatchResult };
    // Members with a finishing step (a list's envelope) take it as a single call would.
    for (const [index, read] of decoded.reads.entries()) {
      const member = result.results[index];
      if (!member || member.status !== "succeeded" || !read.operation.finish) continue;
      const finished = await read.operation.finish(context, request, member.data);
      if (finished.ok) member.data = finished.result;
    }
    const applied = result.results.some(
      (member, index) => member.status === "succeeded" && decoded.plan.members[index]?.access === "write",
    );
    return { ok: true, result, warnings: [], applied };
  },
};

/** A batch Request of several message sets: its program (decision 0050), else null. */
function batchProgramOf(row: Pick<RequestRow, "program">): BatchProgram | null {
  const program = row.program as BatchProgram | null | undefined;
  return program && program.kind === "batch" ? program : null;
}

function undoOperationId(plan: BatchPlan, member: number): string {
  const created = operationOf(plan.members[member]?.operationId ?? "");
  return undoOperation(created)?.operationId ?? created.operationId;
}

/** One answered set of a batch program, as decoded. */
interface ProgramStep {
  program: BatchProgram;
  plan: BatchPlan;
  reads: MemberRead[];
  answered: BatchMemberResult[];
  publicUrl: string;
}

/**
 * After a set of a batch program: members take their finishing steps, then the program advances to
 * its next set (the answer's values filled), to the undo set, or to the batch's result.
 */
async function finishStep(context: FinishContext, request: RequestRow, step: ProgramStep): Promise<Decoded> {
  const { program, plan, reads, answered, publicUrl } = step;
  if (program.phase === "members") {
    for (const [index, read] of reads.entries()) {
      const member = answered[index];
      if (!member || member.status !== "succeeded" || !read.operation.finish) continue;
      const finished = await read.operation.finish(context, request, member.data);
      if (finished.ok) member.data = finished.result;
    }
  }
  const operationIds = plan.members.map((m) => m.operationId);
  const next = advance(program, plan.onError, operationIds, answered as ProgramMemberResult[], (error) =>
    toErrorBody(error, request.id, publicUrl),
  );
  if (!next.done) {
    const detail =
      next.program.phase === "rollback"
        ? `a member failed; undoing ${next.program.undo.length} created record(s)`
        : `next, members ${setRange(next.program, next.program.set).join(" to ")}`;
    return {
      ok: true,
      result: null,
      warnings: [],
      next: {
        document: messageSet(next.messages, next.onError),
        program: next.program,
        writeTargets: writeTargetsOf(next.messages),
        detail,
      },
    };
  }
  const results = next.results as BatchMemberResult[];
  const applied = results.some(
    (member, index) =>
      (member.status === "succeeded" || member.status === "rolled_back") &&
      plan.members[index]?.access === "write",
  );
  const result: BatchResult = { objectType: "batch", onError: plan.onError, results };
  return { ok: true, result, warnings: [], applied };
}

/** The OpenAPI schema of a batch response: one entry per member, typed by its operation. */
export function batchResponseSchema(
  operations: readonly TypedOperation[],
  components: Record<string, JsonSchema>,
): JsonSchema {
  const memberSchemas = operations.map((operation) => {
    const name = `${operation.operationId.replace(/^ledger\./, "").replace(/\./g, "_")}_response`;
    components[name] ??= operation.response(components);
    // Named, so that the discriminator can select it (an inline member cannot be selected).
    const member = `${operation.operationId.replace(/^ledger\./, "").replace(/\./g, "_")}_batchResult`;
    components[member] ??= {
      type: "object",
      required: ["operationId", "status", "httpStatusCode", "data", "error", "warnings"],
      properties: {
        operationId: { type: "string", const: operation.operationId },
        status: { type: "string", enum: ["succeeded", "failed", "not_processed", "rolled_back"] },
        httpStatusCode: { type: ["integer", "null"] },
        data: { oneOf: [{ $ref: `#/components/schemas/${name}` }, { type: "null" }] },
        error: { oneOf: [{ $ref: "#/components/schemas/ErrorObject" }, { type: "null" }] },
        warnings: { type: "array", items: { $ref: "#/components/schemas/RequestWarning" } },
        rollbackError: {
          description: "Under `rollback`: why undoing this member failed (it stays `succeeded`).",
          oneOf: [{ $ref: "#/components/schemas/ErrorObject" }, { type: "null" }],
        },
      },
    };
    return { operationId: operation.operationId, ref: `#/components/schemas/${member}` };
  });
  return {
    type: "object",
    required: ["objectType", "onError", "results"],
    properties: {
      objectType: { type: "string", const: "batch" },
      onError: { type: "string", enum: ["stopOnError", "continueOnError", "rollback"] },
      results: {
        type: "array",
        minItems: 1,
        maxItems: BATCH_MEMBERS_MAX,
        items: {
          oneOf: memberSchemas.map((member) => ({ $ref: member.ref })),
          discriminator: {
            propertyName: "operationId",
            mapping: Object.fromEntries(memberSchemas.map((member) => [member.operationId, member.ref])),
          },
        },
      },
    },
  };
}
