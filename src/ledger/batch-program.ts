import { ServiceError } from "../errors/service-error.ts";
import { bodyParam, fieldAt, refSlotOf, type BodyPath } from "./batch-refs.ts";
import { typedOperation, type TypedOperation } from "./operations.ts";
import { leaf, node, type XmlElement } from "./xml/tree.ts";

/**
 * Batches whose members need earlier members' answers (decision 0050): the pieces that do not
 * depend on how the Request engine runs consecutive message sets — where the batch splits, the
 * values an answer gives, the placeholders they fill, and the messages that undo what a batch
 * created (`onError: "rollback"`).
 */

/** A value of an earlier member's answer that a later member's message waits for. */
export interface Fill {
  /** The placeholder written in the member's message (an ID or a text). */
  readonly placeholder: string;
  /** The member whose message holds it, and where in its body the reference was. */
  readonly member: number;
  readonly at: BodyPath;
  /** The member and the steps into its `data` that give the value. */
  readonly from: { readonly member: number; readonly steps: ReadonlyArray<string | number> };
}

/**
 * Splits members into consecutive message sets: a member starts a new set when it needs the answer
 * of a member of the set being built (`needs[j]`: the members whose answers member j waits for).
 * Returns each set's first member.
 */
export function setStarts(count: number, needs: ReadonlyArray<readonly number[]>): number[] {
  const starts = [0];
  for (let j = 1; j < count; j++) {
    const start = starts[starts.length - 1] ?? 0;
    if ((needs[j] ?? []).some((i) => i >= start)) starts.push(j);
  }
  return starts;
}

/** The value at `steps` in an answer's data (a pointer's digit strings index arrays). */
export function valueAt(data: unknown, steps: ReadonlyArray<string | number>): unknown {
  let current: unknown = data;
  for (const step of steps) {
    if (Array.isArray(current)) {
      const index = typeof step === "number" ? step : /^(0|[1-9][0-9]*)$/.test(step) ? Number(step) : NaN;
      current = Number.isInteger(index) ? current[index] : undefined;
    } else if (typeof current === "object" && current !== null && typeof step === "string") {
      current = Object.hasOwn(current, step) ? (current as Record<string, unknown>)[step] : undefined;
    } else {
      return undefined;
    }
  }
  return current;
}

/**
 * The text a fill writes, checked by the body field's own kind exactly as if the caller had sent
 * the value (its length, its character set); a refusal names the member's field.
 */
export function fillText(operation: TypedOperation, fill: Fill, value: unknown, paramPrefix: string): string {
  const param = `${paramPrefix}.body.${bodyParam(fill.at)}`;
  if (typeof value !== "string" && typeof value !== "number") {
    throw new ServiceError("INVALID_PARAMETER", {
      param,
      message: `The referenced answer holds no text or number there (${value === null ? "null" : typeof value}).`,
    });
  }
  const shape = operation.bodyShape();
  const found = shape ? fieldAt(shape, fill.at) : null;
  const kind = found && refSlotOf(found) !== null ? found.field.kind : null;
  if (!kind) throw new ServiceError("INTERNAL_ERROR", { cause: new Error(`no field at ${param}`) });
  const parsed = kind.schema.safeParse(String(value));
  if (!parsed.success) {
    throw new ServiceError("INVALID_PARAMETER", {
      param,
      message: `The referenced value does not fit this field: ${parsed.error.issues[0]?.message ?? "refused"}.`,
    });
  }
  return kind.toXml(parsed.data);
}

/** Writes each placeholder's value in a message (any leaf whose text is exactly the placeholder). */
export function fillMessage(message: XmlElement, values: ReadonlyMap<string, string>): XmlElement {
  const walk = (element: XmlElement): XmlElement => {
    if (element.children.length === 0) {
      const value = values.get(element.text);
      return value === undefined ? element : leaf(element.name, value);
    }
    return node(element.name, element.children.map(walk), element.attrs);
  };
  return walk(message);
}

/**
 * The message that undoes a create (`ledger.<group>.create` → its group's delete, else its void),
 * or null when the group has neither.
 */
export function undoOperation(created: TypedOperation): TypedOperation | null {
  if (created.action !== "create") return null;
  const group = created.operationId.replace(/\.create$/, "");
  for (const action of ["delete", "void"]) {
    const operation = typedOperation(`${group}.${action}`);
    if (operation && !operation.unsupported) return operation;
  }
  return null;
}

export function undoMessage(undo: TypedOperation, id: string): XmlElement {
  return undo.message({ id, query: new Map(), body: {} }, { page: null, kept: {} });
}

/** A batch member's result as the program keeps it between message sets. */
export interface ProgramMemberResult {
  operationId: string;
  status: "succeeded" | "failed" | "not_processed" | "rolled_back";
  httpStatusCode: number | null;
  data: unknown;
  error: unknown;
  warnings: unknown[];
  rollbackError?: unknown;
}

/** What a batch Request that runs as several message sets keeps between them (`requests.program`). */
export interface BatchProgram {
  readonly kind: "batch";
  /** Each message set's first member. */
  readonly starts: readonly number[];
  /** Every member's message as prepared (placeholders where a fill goes). */
  readonly messages: readonly XmlElement[];
  readonly fills: readonly Fill[];
  /** `members`: the set `set` is out; `rollback`: the undo set of `undo` (member indexes) is out. */
  readonly phase: "members" | "rollback";
  readonly set: number;
  readonly undo: readonly number[];
  /** Results of the members answered so far, by member index (null: not yet). */
  readonly results: ReadonlyArray<ProgramMemberResult | null>;
}

/** The members a set of the program holds: [first, end). */
export function setRange(program: BatchProgram, set: number): [number, number] {
  const first = program.starts[set] ?? program.messages.length;
  const end = program.starts[set + 1] ?? program.messages.length;
  return [first, end];
}

export type Advance =
  | { readonly done: true; readonly results: ProgramMemberResult[] }
  | {
      readonly done: false;
      readonly program: BatchProgram;
      readonly messages: XmlElement[];
      readonly onError: "stopOnError" | "continueOnError";
    };

const notProcessed = (operationId: string): ProgramMemberResult => ({
  operationId,
  status: "not_processed",
  httpStatusCode: null,
  data: null,
  error: null,
  warnings: [],
});

/**
 * The next step of a batch program once the answer of its message set is read (`answered`: the
 * results of the set's members, or of the undo messages, in order): the next set with its fills
 * written, the undo set after a failure under `rollback`, or the end.
 */
export function advance(
  program: BatchProgram,
  onError: "stopOnError" | "continueOnError" | "rollback",
  operationIds: readonly string[],
  answered: readonly ProgramMemberResult[],
  errorBody: (error: ServiceError, member: number) => unknown,
): Advance {
  const results = program.results.map((r) => (r ? { ...r } : null));
  if (program.phase === "rollback") {
    program.undo.forEach((member, index) => {
      const current = results[member];
      const undone = answered[index];
      if (!current) return;
      if (undone?.status === "succeeded") current.status = "rolled_back";
      else
        current.rollbackError = undone?.error ?? { code: "NOT_PROCESSED", message: "The undo was not run." };
    });
    return { done: true, results: finalResults(results, operationIds) };
  }
  const [first, end] = setRange(program, program.set);
  answered.forEach((result, offset) => (results[first + offset] = result));
  for (let member = first; member < end; member++)
    results[member] ??= notProcessed(operationIds[member] ?? "");
  let failed = results.slice(first, end).some((r) => r?.status === "failed");
  const nextSet = program.set + 1;
  if (!failed && nextSet < program.starts.length) {
    const [nextFirst, nextEnd] = setRange(program, nextSet);
    const values = new Map<string, string>();
    for (const fill of program.fills) {
      if (fill.member < nextFirst || fill.member >= nextEnd || failed) continue;
      const operation = typedOperation(operationIds[fill.member] ?? "");
      if (!operation) throw new ServiceError("INTERNAL_ERROR");
      try {
        const value = valueAt(results[fill.from.member]?.data, fill.from.steps);
        values.set(fill.placeholder, fillText(operation, fill, value, `requests[${fill.member}]`));
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        const refusal = error as ServiceError;
        const body = errorBody(refusal, fill.member);
        results[fill.member] = {
          operationId: operation.operationId,
          status: "failed",
          httpStatusCode: refusal.httpStatus ?? 400,
          data: null,
          error: body,
          warnings: [],
        };
        failed = true;
      }
    }
    if (!failed) {
      return {
        done: false,
        program: { ...program, set: nextSet, results },
        messages: program.messages.slice(nextFirst, nextEnd).map((message) => fillMessage(message, values)),
        onError: onError === "continueOnError" ? "continueOnError" : "stopOnError",
      };
    }
  }
  if (failed && onError === "rollback") {
    const undo: number[] = [];
    const messages: XmlElement[] = [];
    for (let member = results.length - 1; member >= 0; member--) {
      const result = results[member];
      const created = typedOperation(operationIds[member] ?? "");
      const undoing = created ? undoOperation(created) : null;
      const id = valueAt(result?.data, ["id"]);
      if (result?.status !== "succeeded" || !undoing || typeof id !== "string") continue;
      undo.push(member);
      messages.push(undoMessage(undoing, id));
    }
    if (undo.length > 0) {
      return {
        done: false,
        program: { ...program, phase: "rollback", undo, results },
        messages,
        onError: "continueOnError",
      };
    }
  }
  return { done: true, results: finalResults(results, operationIds) };
}

function finalResults(
  results: ReadonlyArray<ProgramMemberResult | null>,
  operationIds: readonly string[],
): ProgramMemberResult[] {
  return operationIds.map((operationId, member) => results[member] ?? notProcessed(operationId));
}
