import { ServiceError } from "../errors/service-error.ts";
import type { BatchOnError } from "../ledger/batch.ts";
import {
  bodyParam,
  fieldAt,
  findRefs,
  locationKey,
  nameReferences,
  parseMemberRef,
  refSlotOf,
  refText,
  replaceAt,
  schemaHasScalarAt,
  type BodyPath,
} from "../ledger/batch-refs.ts";
import type { Fill } from "../ledger/batch-program.ts";
import type { TypedOperation } from "../ledger/operations.ts";
import { refTargetAmong, storedObjectNames } from "../ledger/resources/ref-targets.ts";
import type { JsonSchema } from "../ledger/resources/json-schema.ts";
import { ledgerSchema } from "../ledger/xml/schema.ts";
import { messageProblem } from "../ledger/xml/validate-tree.ts";
import type { PreparedMessage } from "./typed-call.ts";

/**
 * Batch members that refer to earlier members (issue 27 item 3, decision 0050): the checks before
 * anything is queued, and the resolution that keeps the batch ONE message set. A reference to the
 * `id` of a list object an earlier member creates, used in a reference field, is sent by the
 * object's full name (its name, after its parent's full name when the parent is itself such a
 * reference): the application resolves the name within the same message set, after the earlier
 * member ran. The grammar and the shape/schema walks are `ledger/batch-refs.ts`.
 */

/** What later members may use of a prepared member. */
export interface MemberFacts {
  readonly operation: TypedOperation;
  /** The object type a create makes (`Customer`, `Invoice`), else null. */
  readonly creates: string | null;
  /** A list object's full name when its body tells it (`Acme:Roof`), else null. */
  readonly fullName: string | null;
}

interface MemberInput {
  readonly index: number;
  readonly prefix: string;
  readonly onError: BatchOnError;
  readonly operation: TypedOperation;
  readonly request: { readonly body?: unknown; readonly query?: unknown };
  readonly pathParams: Readonly<Record<string, unknown>>;
  /** The earlier members, in order. */
  readonly facts: readonly MemberFacts[];
}

/** A reference whose value only the referenced member's answer tells. */
export interface NeedsAnswer {
  readonly param: string;
  readonly message: string;
  /** What the member's message holds until the answer is known, and where the value comes from. */
  readonly fill: Fill;
}

export interface ResolvedRefs {
  /** The body to validate: each reference replaced by a placeholder ID. */
  readonly body: unknown;
  /** References that need an earlier member's answer (the member cannot share its message set). */
  readonly needsAnswer: readonly NeedsAnswer[];
  /** The prepared member with its placeholders written as full names. */
  finish(prepared: PreparedMessage): PreparedMessage;
  /** The references as the batch's fingerprint keeps them (null when there are none). */
  readonly shown: unknown;
  /** What later members may use of this one, from its validated body. */
  facts(validatedBody: Readonly<Record<string, unknown>>): MemberFacts;
}

const refused = (param: string, message: string): ServiceError =>
  new ServiceError("INVALID_PARAMETER", { param, message });

function objectOf(operation: TypedOperation): string | null {
  return operation.resource ? operation.resource.ret.replace(/Ret$/, "") : null;
}

/** Checks a member's references and plans how each is sent. */
export function resolveMemberRefs(member: MemberInput): ResolvedRefs {
  const { index, prefix, operation, facts } = member;
  const paramAt = (at: BodyPath): string => `${prefix}.body.${bodyParam(at)}`;
  for (const part of ["pathParams", "query"] as const) {
    const value = part === "pathParams" ? member.pathParams : member.request.query;
    const [misplaced] = findRefs(value, (at) => `${prefix}.${part}.${bodyParam(at)}`);
    if (misplaced) {
      throw refused(
        `${prefix}.${part}.${bodyParam(misplaced.at)}`,
        "A reference to an earlier member's answer goes in a body field only.",
      );
    }
  }
  const found = findRefs(member.request.body, paramAt);
  const nameFacts = (validated: Readonly<Record<string, unknown>>, parentFullName: string | null) =>
    memberFacts(operation, validated, parentFullName);
  if (found.length === 0) {
    return {
      body: member.request.body,
      needsAnswer: [],
      finish: (prepared) => prepared,
      shown: null,
      facts: (validated) => nameFacts(validated, null),
    };
  }
  if (member.onError === "continueOnError") {
    throw refused(
      "onError",
      "Members that refer to earlier members run only after those succeed: use `stopOnError` (the default).",
    );
  }
  const shape = operation.bodyShape();
  const raw = JSON.stringify(member.request.body);
  const values = new Map<string, unknown>();
  const fullNames = new Map<string, string>();
  let parentFullName: string | null = null;
  const needsAnswer: NeedsAnswer[] = [];
  for (const [n, ref] of found.entries()) {
    const param = paramAt(ref.at);
    const parsed = parseMemberRef(ref.text);
    if (!parsed) {
      throw refused(
        param,
        `\`${ref.text}\` is no reference: write \`requests[<i>].data.<field>\` or the JSON Pointer \`/requests/<i>/data/<field>\`.`,
      );
    }
    const target = facts[parsed.member];
    if (parsed.member >= index || target === undefined) {
      throw refused(
        param,
        `\`${ref.text}\` must name an earlier member (requests[0] to requests[${index - 1}]).`,
      );
    }
    const { operation: targetOperation } = target;
    if (targetOperation.access === "read") {
      throw refused(
        param,
        `\`${ref.text}\` names a read (\`${targetOperation.operationId}\`): only what an earlier write creates or changes can be referred to.`,
      );
    }
    const components: Record<string, JsonSchema> = {};
    if (!schemaHasScalarAt(targetOperation.response(components), components, parsed.steps)) {
      throw refused(
        param,
        `\`${targetOperation.operationId}\` answers no text or number at \`${refText(parsed)}\`.`,
      );
    }
    const slot = shape ? fieldAt(shape, ref.at) : null;
    const kind = slot ? refSlotOf(slot) : null;
    if (!slot || kind === null) {
      throw refused(param, "A reference can stand only for a record ID or a text value of the body.");
    }
    const owner = objectOf(operation) ?? "";
    const isId = parsed.steps.length === 1 && parsed.steps[0] === "id";
    if (isId && slot.field.form === "ref" && target.creates !== null) {
      const fits = refTargetAmong(slot.field.slot.name, owner, storedObjectNames()).objects;
      if (!fits.includes(target.creates)) {
        throw refused(
          param,
          `\`${bodyParam(ref.at)}\` cannot name a ${target.creates}, which \`requests[${parsed.member}]\` creates.`,
        );
      }
    }
    // One message set: an ID of a list object an earlier member creates with a name, sent by name.
    const byName = isId && slot.field.form === "ref" && target.fullName !== null;
    let placeholder = `$ref:${index}:${n}`;
    while (raw.includes(placeholder)) placeholder = `$${placeholder}`;
    values.set(locationKey(ref.at), placeholder);
    if (!byName) {
      needsAnswer.push({
        param,
        message: `\`${ref.text}\` needs \`requests[${parsed.member}]\`'s answer before this member can be written: a batch refers to an earlier member only by the \`id\` of a list object it creates with a \`name\` (sent by full name), in a reference field.`,
        fill: {
          placeholder,
          member: index,
          at: ref.at,
          from: { member: parsed.member, steps: parsed.steps },
        },
      });
    }
    if (byName) fullNames.set(placeholder, target.fullName ?? "");
    if (byName && ref.at.length === 1 && slot.field.slot.name === "ParentRef") {
      parentFullName = target.fullName;
    }
  }
  return {
    body: replaceAt(member.request.body, values),
    needsAnswer,
    finish(prepared) {
      const { message, rewritten } = nameReferences(prepared.message, fullNames);
      if (rewritten !== fullNames.size) {
        throw new ServiceError("INTERNAL_ERROR", {
          cause: new Error(`${fullNames.size} references, ${rewritten} rewritten by name`),
        });
      }
      if (messageProblem(ledgerSchema(), message) !== null) {
        const first = found[0];
        throw refused(
          first ? paramAt(first.at) : `${prefix}.body`,
          "A full name this member would refer to by is longer than the application takes.",
        );
      }
      return { ...prepared, message };
    },
    shown: found.map((ref) => ({ at: ref.at, ref: ref.text })),
    facts: (validated) => nameFacts(validated, parentFullName),
  };
}

/**
 * The full name of the list object a create makes, when its body tells it: its `name`, after its
 * parent's full name when the parent is an earlier member referred to; a parent given by ID leaves
 * it unknown (the application holds the parent's name, not the body).
 */
function memberFacts(
  operation: TypedOperation,
  validated: Readonly<Record<string, unknown>>,
  parentFullName: string | null,
): MemberFacts {
  const resource = operation.resource;
  if (operation.action !== "create" || !resource) return { operation, creates: null, fullName: null };
  const creates = objectOf(operation);
  if (resource.idElement !== "ListID") return { operation, creates, fullName: null };
  const nameField = resource.create?.fields.find((f) => f.json === "name");
  const name = validated.name;
  if (nameField?.slot.name !== "Name" || typeof name !== "string")
    return { operation, creates, fullName: null };
  const parent = resource.create?.fields.find((f) => f.slot.name === "ParentRef");
  if (parent === undefined || validated[parent.json] === undefined)
    return { operation, creates, fullName: name };
  return { operation, creates, fullName: parentFullName === null ? null : `${parentFullName}:${name}` };
}
