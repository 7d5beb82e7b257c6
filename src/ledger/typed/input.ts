import { z } from "zod";
import { serviceIssue } from "../../errors/from-zod.ts";
import { strictObject } from "../fields.ts";
import type { Field, Shape } from "../resources/shape.ts";
import { explainMismatch, matchContent } from "../xml/content-model.ts";
import { ledgerSchema } from "../xml/schema.ts";
import { excludes, type ChoiceStep } from "../xml/slots.ts";

/**
 * Strict input schemas built from input shapes (house style §2.3: field kinds build the Zod
 * schemas). Unknown fields give UNKNOWN_PARAMETER, null on a field that cannot be cleared gives
 * FIELD_NOT_CLEARABLE, each kind raises its own codes (DECIMAL_PRECISION_EXCEEDED, STRING_TOO_LONG,
 * UNSUPPORTED_CHARACTER…), alternatives of one schema choice exclude each other and a required
 * choice needs one of its alternatives — all with `param` as the JSON path (`lines[2].itemId`).
 */
export interface InputOptions {
  /** Fields of the shape the body must not carry (for example the record ID, taken from the path). */
  omit?: ReadonlySet<string>;
  /** Extra fields (for example `clear<Lines>` flags that the schema spells differently). */
  extra?: Readonly<Record<string, z.ZodType>>;
  /** Make every field optional (filters, partial bodies). */
  allOptional?: boolean;
}

const cache = new WeakMap<Shape, Map<string, z.ZodType>>();

/** The strict schema of an input shape. */
export function inputSchema(shape: Shape, options: InputOptions = {}): z.ZodType<Record<string, unknown>> {
  const cacheKey = !options.extra && !options.allOptional ? [...(options.omit ?? [])].join(",") : null;
  if (cacheKey !== null) {
    const cached = cache.get(shape)?.get(cacheKey);
    if (cached) return cached as z.ZodType<Record<string, unknown>>;
  }
  const fields = shape.fields.filter((field) => !options.omit?.has(field.json));
  const entries: Record<string, z.ZodType> = {};
  const required: string[] = [];
  for (const field of fields) {
    entries[field.json] = fieldSchema(field);
    if (field.slot.min > 0 && !options.allOptional) required.push(field.json);
  }
  for (const [name, schema] of Object.entries(options.extra ?? {})) entries[name] = schema;
  const rules = choiceRules(fields, options.allOptional ?? false);
  const alternatives = alternativeRules(fields);
  const object = strictObject(entries, { required }).superRefine((value, ctx) => {
    if (checkChoices(rules, value, ctx)) return;
    if (checkAlternatives(alternatives, value, ctx)) return;
    const issue = options.allOptional ? null : contentIssue(shape, options.omit, value);
    if (issue) ctx.addIssue({ ...serviceIssue("INVALID_PARAMETER", issue.message), path: issue.path });
  });
  if (cacheKey !== null) {
    const perShape = cache.get(shape) ?? new Map<string, z.ZodType>();
    perShape.set(cacheKey, object);
    cache.set(shape, perShape);
  }
  return object;
}

function fieldSchema(field: Field): z.ZodType {
  const single: z.ZodType =
    field.form === "object" && field.shape ? inputSchema(field.shape) : (field.kind?.schema ?? z.never());
  if (!field.array) return single;
  const max = field.slot.max;
  let array = z.array(single, { error: `Expected an array.` });
  if (field.slot.min > 0)
    array = array.min(field.slot.min, { error: `At least ${field.slot.min} item(s) are required.` });
  if (Number.isFinite(max)) array = array.max(max, { error: `At most ${max} items are allowed.` });
  return array;
}

/**
 * The choice rules of a field list, worked out once per schema: the pairs of fields that exclude
 * each other (alternatives of one choice), the required choices and the required repeated choices.
 */
interface ChoiceRules {
  exclusions: readonly (readonly [Field, Field])[];
  requiredChoices: readonly (readonly Field[])[];
  requiredFamilies: readonly (readonly Field[])[];
}

function choiceRules(fields: readonly Field[], allOptional: boolean): ChoiceRules {
  const exclusions: [Field, Field][] = [];
  for (let i = 0; i < fields.length; i++) {
    for (let j = i + 1; j < fields.length; j++) {
      const a = fields[i];
      const b = fields[j];
      if (a && b && excludes(a.slot, b.slot)) exclusions.push([a, b]);
    }
  }
  if (allOptional) return { exclusions, requiredChoices: [], requiredFamilies: [] };
  const requiredChoices = new Map<number, Field[]>();
  for (const field of fields) {
    const step = field.slot.choices.find((c) => c.required);
    if (!step || field.slot.choices[0]?.id !== step.id) continue;
    const group = requiredChoices.get(step.id) ?? [];
    group.push(field);
    requiredChoices.set(step.id, group);
  }
  // A repeated choice that must occur (`(DebitLine|CreditLine)+`) needs one item among its fields.
  const requiredFamilies = new Map<number, Field[]>();
  for (const field of fields) {
    if (field.slot.family === null || !field.slot.familyRequired) continue;
    requiredFamilies.set(field.slot.family, [...(requiredFamilies.get(field.slot.family) ?? []), field]);
  }
  return {
    exclusions,
    requiredChoices: [...requiredChoices.values()],
    requiredFamilies: [...requiredFamilies.values()],
  };
}

/**
 * Alternatives of a choice exclude each other; a required choice needs one alternative. Returns
 * whether it raised an issue.
 */
function checkChoices(rules: ChoiceRules, value: Record<string, unknown>, ctx: z.RefinementCtx): boolean {
  // Pairs are in field order, so the first present pair names the same fields as a scan of the body would.
  const pair = rules.exclusions.find(([a, b]) => value[a.json] !== undefined && value[b.json] !== undefined);
  if (pair) {
    const [a, b] = pair;
    ctx.addIssue({
      ...serviceIssue(
        "INVALID_PARAMETER",
        `\`${a.json}\` and \`${b.json}\` cannot be combined: send only one of them.`,
      ),
      path: [b.json],
    });
    return true;
  }
  for (const group of rules.requiredChoices) {
    if (group.some((field) => value[field.json] !== undefined)) continue;
    const names = group.map((field) => `\`${field.json}\``).join(", ");
    ctx.addIssue({
      ...serviceIssue("INVALID_PARAMETER", `One of ${names} is required.`),
      path: [group[0]?.json ?? ""],
    });
    return true;
  }
  for (const group of rules.requiredFamilies) {
    if (group.some((field) => itemCount(value[field.json]) > 0)) continue;
    const names = group.map((field) => `\`${field.json}\``).join(", ");
    ctx.addIssue({
      ...serviceIssue("INVALID_PARAMETER", `At least one item of ${names} is required.`),
      path: [group[0]?.json ?? ""],
    });
    return true;
  }
  return false;
}

/** How many elements a field's value writes (an array its items; null and absent none). */
function itemCount(value: unknown): number {
  if (value === undefined || value === null) return 0;
  return Array.isArray(value) ? value.length : 1;
}

/**
 * Within a choice's alternative, the elements the alternative requires: a deposit line that sends
 * `amount` takes the `(EntityRef?, AccountRef, …, Amount?)` alternative, so it must send `accountId`.
 * The flat field view makes every element of an alternative optional; this restores the rule for
 * every choice a present field sits in (issue 25: such a body was written as a message the schema
 * refuses, a 500). Returns whether it raised an issue.
 */
function checkAlternatives(
  rules: ReadonlyMap<Field, readonly (readonly Field[])[]>,
  value: Record<string, unknown>,
  ctx: z.RefinementCtx,
): boolean {
  for (const [present, steps] of rules) {
    if (value[present.json] === undefined) continue;
    for (const candidates of steps) {
      const missing = candidates.find((field) => value[field.json] === undefined);
      if (!missing) continue;
      ctx.addIssue({
        ...serviceIssue(
          "INVALID_PARAMETER",
          `\`${missing.json}\` is required when \`${present.json}\` is sent.`,
        ),
        path: [missing.json],
      });
      return true;
    }
  }
  return false;
}

/**
 * {@link checkAlternatives}' rules, worked out once per schema: per field in a choice, per choice
 * step it sits in, the fields that alternative requires (in field order; steps none requires left out).
 */
function alternativeRules(fields: readonly Field[]): ReadonlyMap<Field, readonly (readonly Field[])[]> {
  const rules = new Map<Field, (readonly Field[])[]>();
  for (const present of fields) {
    const steps: (readonly Field[])[] = [];
    for (const step of present.slot.choices) {
      const candidates = fields.filter(
        (field) =>
          field.slot.family === null &&
          field.slot.minInAlternative > 0 &&
          sameStep(field.slot.choices.at(-1), step),
      );
      if (candidates.length > 0) steps.push(candidates);
    }
    if (steps.length > 0) rules.set(present, steps);
  }
  return rules;
}

function sameStep(a: ChoiceStep | undefined, b: ChoiceStep): boolean {
  return a !== undefined && a.id === b.id && a.alternative === b.alternative;
}

/** How many elements a field's value writes: an array its items, null one (an empty element). */
function elementCount(field: Field, value: unknown): number {
  if (value === undefined) return 0;
  return field.array && Array.isArray(value) ? value.length : 1;
}

/**
 * Bodies known to fit their type's content model, by the fields they send and how many of each
 * (the omitted ones first): an integration's bodies repeat a few forms (the same fields, the same
 * number of lines), and matching is the dearest step of validating one (an invoice and its lines:
 * ~10 µs). Bounded: a shape's set is dropped whole past 512 forms.
 */
const fitting = new WeakMap<Shape, Set<string>>();

function formOf(omit: ReadonlySet<string> | undefined, value: Readonly<Record<string, unknown>>): string {
  let form = omit === undefined ? "|" : `${[...omit].join(",")}|`;
  for (const key in value) {
    const given = value[key];
    if (given !== undefined) form += `${key}:${Array.isArray(given) ? given.length : 1},`;
  }
  return form;
}

/**
 * The last word on an object's content: the element names the body writes, matched against the
 * schema's content model of its type, exactly as the message will be checked before queueing. Any
 * rule the field checks above do not express (an optional sequence whose second element is
 * required, occurrence limits…) is refused here as INVALID_PARAMETER naming the field, never written
 * as a message the schema refuses (issue 25). Fields the path supplies (`omit`) count as present.
 * Returns the refusal (its message and the field's path within the object), or null.
 */
export function contentIssue(
  shape: Shape,
  omit: ReadonlySet<string> | undefined,
  value: Readonly<Record<string, unknown>>,
): { message: string; path: string[] } | null {
  const form = formOf(omit, value);
  let known = fitting.get(shape);
  if (known?.has(form)) return null;
  const type = ledgerSchema().typeOf(shape.typeKey, shape.typeKey);
  if (type.kind !== "complex") return null;
  const names: string[] = [];
  const owners: Field[] = [];
  for (const field of shape.fields) {
    const count = omit?.has(field.json)
      ? Math.min(field.slot.min, 1)
      : elementCount(field, value[field.json]);
    for (let i = 0; i < count; i++) {
      names.push(field.slot.name);
      owners.push(field);
    }
  }
  const matched = matchContent(type.model, names);
  if (Array.isArray(matched)) {
    if (!known || known.size >= 512) fitting.set(shape, (known = new Set()));
    known.add(form);
    return null;
  }
  const explanation = explainMismatch(type.model, names, matched);
  const byName = (name: string): Field | undefined => shape.fields.find((f) => f.slot.name === name);
  let field: Field | undefined;
  let message: string;
  if (explanation.kind === "missing") {
    const wanted = explanation.names.map(byName).filter((f): f is Field => f !== undefined);
    const given = owners.filter((f) => value[f.json] !== undefined);
    // Among the fields that fit beside what was sent, one its alternative requires, if any.
    const fitting = wanted.filter((f) => !given.some((g) => excludes(g.slot, f.slot)));
    field = fitting.find((f) => f.slot.minInAlternative > 0) ?? fitting[0] ?? wanted[0];
    message =
      wanted.length > 1
        ? `One of ${wanted.map((f) => `\`${f.json}\``).join(", ")} is required here.`
        : `\`${field?.json ?? ""}\` is required here.`;
  } else {
    const at = "at" in explanation ? explanation.at : 0;
    field = owners[at];
    message = `\`${field?.json ?? ""}\` cannot be sent with the other fields as given.`;
  }
  // A field the path supplies is not the caller's to fix: name the first one the body sent instead.
  if (field === undefined || omit?.has(field.json)) field = owners.find((f) => !omit?.has(f.json));
  return { message, path: field ? [field.json] : [] };
}
