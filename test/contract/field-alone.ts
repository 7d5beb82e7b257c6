import type { RandomSource } from "../../src/ledger/fields.ts";
import type { TypedOperation } from "../../src/ledger/operations.ts";
import { sampleBody, type SampleSources } from "../../src/ledger/resources/examples.ts";
import type { Field, Shape } from "../../src/ledger/resources/shape.ts";
import { excludes } from "../../src/ledger/xml/slots.ts";

/**
 * "Every field alone" (issue 25, item 4): for a typed operation with a body, one body per field of
 * its declaration, at any depth, holding that field with a valid value of its kind and nothing else
 * beyond what the operation needs to be callable (the top level's required fields, taken from the
 * operation's own minimal example, minus what the field excludes). A nested field is sent in an
 * object holding it alone, and again beside its object's required fields. Each body must be either
 * accepted or refused with a 400 naming a field: the engine must never write a message the
 * application's schema refuses (that is a 500).
 *
 * Everything is derived from the resource declarations (input shapes) and, for bodies without one
 * (merge, custom field values, custom field definitions), from the operation's example body.
 */
export interface AloneCase {
  /** JSON path of the field sent alone (`lines[0].amount`). */
  readonly field: string;
  /**
   * The declared type holding the field and the field's name there (`DepositLineAdd amount`): the
   * same line type appears in many operations, and the engine treats it the same in each.
   */
  readonly declared: string;
  /**
   * `alone`: nothing else in its object; `beside required`: with the fields its object always needs
   * (a line update's `id`); `beside a minimal object`: with its object's minimal valid body (those,
   * and the first alternative of each choice the object must make), less what the field excludes.
   */
  readonly variant: "alone" | "beside required" | "beside a minimal object";
  readonly body: Record<string, unknown>;
}

/** IDs in the application's format; the case only has to reach the message writer. */
const RECORD_ID = "80000001-1700000000";
const TRANSACTION_ID = "1F-1700000000";

/** A small deterministic generator (a linear congruential one), so a failing case can be replayed. */
function seeded(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

function sources(random: RandomSource): SampleSources {
  let serial = 0;
  return { random, refId: () => RECORD_ID, txnId: () => TRANSACTION_ID, serial: () => ++serial };
}

/** A valid value of one field: its kind's fake, an ID, or its object's minimal body. */
function valueOf(field: Field, src: SampleSources, nested: boolean): unknown {
  let value: unknown;
  if (field.form === "ref") value = RECORD_ID;
  else if (field.form === "object" && field.shape) value = sampleBody(field.shape, src, [field.slot.name]);
  else if (field.slot.name === "TxnID" && nested) value = TRANSACTION_ID;
  else value = field.kind?.fake(src.random) ?? "";
  return field.array ? [value] : value;
}

/** `context` without the fields `field` excludes (other alternatives of its choices) and itself. */
function without(shape: Shape, context: Record<string, unknown>, field: Field): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(context)) {
    const other = shape.fields.find((f) => f.json === name);
    if (name === field.json || (other && excludes(other.slot, field.slot))) continue;
    out[name] = value;
  }
  return out;
}

/** Depth limit: lines hold blocks, blocks hold references; nothing useful lies deeper. */
const MAX_DEPTH = 4;

/** One case as a value of the object holding the field. */
type ObjectCase = Omit<AloneCase, "body"> & { value: Record<string, unknown> };

/** Every (object, field) of `shape` as a value of that object, alone and beside its required fields. */
function objectCases(
  shape: Shape,
  required: Record<string, unknown>,
  src: SampleSources,
  depth: number,
): ObjectCase[] {
  const cases: ObjectCase[] = [];
  for (const field of shape.fields) {
    const value = valueOf(field, src, depth > 0);
    const declared = `${shape.typeKey} ${field.json}`;
    cases.push({ field: field.json, declared, variant: "alone", value: { [field.json]: value } });
    // The fields the object always needs (its minimal body without the choices it made).
    const always = Object.fromEntries(
      Object.entries(required).filter(
        ([name]) => (shape.fields.find((f) => f.json === name)?.slot.min ?? 0) > 0,
      ),
    );
    const besideAlways = { ...without(shape, always, field), [field.json]: value };
    if (Object.keys(besideAlways).length > 1)
      cases.push({ field: field.json, declared, variant: "beside required", value: besideAlways });
    const beside = { ...without(shape, required, field), [field.json]: value };
    if (Object.keys(beside).length > Object.keys(besideAlways).length)
      cases.push({ field: field.json, declared, variant: "beside a minimal object", value: beside });
    if (field.form !== "object" || !field.shape || depth + 1 >= MAX_DEPTH) continue;
    const inner = sampleBody(field.shape, src, [field.slot.name]);
    for (const nested of objectCases(field.shape, inner, src, depth + 1)) {
      const path = field.array ? `${field.json}[0].${nested.field}` : `${field.json}.${nested.field}`;
      const wrapped = field.array ? [nested.value] : nested.value;
      cases.push({
        ...nested,
        field: path,
        value: { ...without(shape, required, field), [field.json]: wrapped },
      });
    }
  }
  return cases;
}

/** The minimal body the operation documents (its required fields), or `{}`. */
function minimalExample(op: TypedOperation): Record<string, unknown> {
  const rule = op.inputs().body;
  if (rule.type !== "json") return {};
  const example = Object.values(rule.examples())[0];
  return example !== null && typeof example === "object" ? { ...(example as Record<string, unknown>) } : {};
}

/** Every "field alone" body of one operation (none for an operation without a JSON body). */
export function aloneCases(op: TypedOperation, seed = 0x5eed): AloneCase[] {
  const rule = op.inputs().body;
  if (rule.type !== "json") return [];
  const src = sources(seeded(seed));
  const required = minimalExample(op);
  const shape = op.bodyShape();
  if (!shape) {
    // No declaration to walk (merge, custom field bodies): each field of the example alone.
    return Object.entries(required).map(([name, value]) => ({
      field: name,
      declared: `${op.operationId} ${name}`,
      variant: "alone" as const,
      body: { [name]: value },
    }));
  }
  // The body's own fields: the shape's, except those the path gives (the record's ID).
  const accepted = shape.fields.filter((f) => !(f.json === "id" && op.inputs().path.includes("id")));
  const top: Shape = { ...shape, fields: accepted };
  return objectCases(top, required, src, 0).map(({ value, ...rest }) => {
    // The update's revision number is always needed to reach the message.
    const body: Record<string, unknown> =
      "revisionNumber" in required && !("revisionNumber" in value)
        ? { revisionNumber: required.revisionNumber, ...value }
        : { ...value };
    // A partly sent line family would make the update read the record first (a sync round trip no
    // connector answers here): the family's other arrays are sent empty, so the message is written now.
    const readFirst = op.readFirst({ id: RECORD_ID, query: new Map(), body });
    for (const { input } of readFirst?.arrays ?? []) body[input] = [];
    return { ...rest, body };
  });
}
