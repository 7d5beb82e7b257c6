import { z } from "zod";
import { serviceIssue } from "../../errors/from-zod.ts";
import { strictObject } from "../fields.ts";
import type { Field, Shape } from "../resources/shape.ts";
import { excludes } from "../xml/slots.ts";

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
  const object = strictObject(entries, { required }).superRefine((value, ctx) => {
    checkChoices(rules, value, ctx);
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

/** Alternatives of a choice exclude each other; a required choice needs one alternative. */
function checkChoices(rules: ChoiceRules, value: Record<string, unknown>, ctx: z.RefinementCtx): void {
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
    return;
  }
  for (const group of rules.requiredChoices) {
    if (group.some((field) => value[field.json] !== undefined)) continue;
    const names = group.map((field) => `\`${field.json}\``).join(", ");
    ctx.addIssue({
      ...serviceIssue("INVALID_PARAMETER", `One of ${names} is required.`),
      path: [group[0]?.json ?? ""],
    });
    return;
  }
  for (const group of rules.requiredFamilies) {
    if (group.some((field) => itemCount(value[field.json]) > 0)) continue;
    const names = group.map((field) => `\`${field.json}\``).join(", ");
    ctx.addIssue({
      ...serviceIssue("INVALID_PARAMETER", `At least one item of ${names} is required.`),
      path: [group[0]?.json ?? ""],
    });
    return;
  }
}

/** How many elements a field's value writes (an array its items; null and absent none). */
function itemCount(value: unknown): number {
  if (value === undefined || value === null) return 0;
  return Array.isArray(value) ? value.length : 1;
}
