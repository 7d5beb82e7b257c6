import type { JsonSchema, Parameter } from "./surface.ts";

/**
 * Query and path values derived from a parameter's JSON Schema as the OpenAPI document states it:
 * one value the schema accepts (for required parameters and repeated keys), and the bad values the
 * bad-input suite sends to every parameter. Nothing here names a parameter: a parameter added to the
 * document is covered by what its schema says.
 */

/** One bad value of a parameter: the values of its (possibly repeated) key, and what is wrong. */
export interface BadValue {
  /** Short description for failure messages, for example `impossible date`. */
  what: string;
  /** The key's values in order (more than one: the key is repeated). */
  values: string[];
}

/** The longest text any parameter takes (the application's longest text field). */
const LONGEST_TEXT = 4095;
/** The most items a documented array takes when its schema states no `maxItems`. */
const MOST_ITEMS = 100;

const isArray = (schema: JsonSchema): boolean => schema.type === "array";

/** The schema of one value: an array's items, else the schema itself. */
export function scalarOf(schema: JsonSchema): JsonSchema {
  return isArray(schema) ? ((schema.items as JsonSchema | undefined) ?? {}) : schema;
}

/** Every `format` the schema (or one of its alternatives) states. */
function formatsOf(schema: JsonSchema): Set<string> {
  const alternatives = [
    schema,
    ...((schema.anyOf as JsonSchema[] | undefined) ?? []),
    ...((schema.oneOf as JsonSchema[] | undefined) ?? []),
  ];
  return new Set(alternatives.map((s) => s.format).filter((f): f is string => typeof f === "string"));
}

/** A date or date-time by the schema. */
export function isDateLike(schema: JsonSchema): boolean {
  const formats = formatsOf(scalarOf(schema));
  return formats.has("date") || formats.has("date-time");
}

/**
 * The schema restricts its text to a vocabulary or a form (so a word such as `abc` is a wrong
 * type): a constant, an enumeration, a number, a boolean, a date or a pattern.
 */
function isRestricted(scalar: JsonSchema): boolean {
  return (
    scalar.const !== undefined ||
    Array.isArray(scalar.enum) ||
    ["integer", "number", "boolean"].includes(String(scalar.type)) ||
    formatsOf(scalar).size > 0 ||
    typeof scalar.pattern === "string"
  );
}

/**
 * The schema says what the parameter takes, so that its bad values can be derived: a vocabulary
 * or form (see {@link isRestricted}) or a longest length, and for an array also its most items.
 */
export function isDescribed(schema: JsonSchema): boolean {
  const scalar = scalarOf(schema);
  const described = isRestricted(scalar) || typeof scalar.maxLength === "number";
  return isArray(schema) ? described && typeof schema.maxItems === "number" : described;
}

/** Text of any content up to a length (no vocabulary, form or pattern). */
export function isFreeText(schema: JsonSchema): boolean {
  return schema.type === "string" && !isRestricted(schema);
}

/** A value the schema accepts, as query text. */
export function validValue(schema: JsonSchema): string {
  const scalar = scalarOf(schema);
  if (scalar.const !== undefined)
    return typeof scalar.const === "string" ? scalar.const : JSON.stringify(scalar.const);
  if (Array.isArray(scalar.enum) && scalar.enum.length > 0) return String(scalar.enum[0]);
  if (scalar.type === "integer" || scalar.type === "number") {
    return String(typeof scalar.minimum === "number" ? scalar.minimum : 1);
  }
  if (scalar.type === "boolean") return "true";
  const formats = formatsOf(scalar);
  if (formats.has("date")) return "2024-01-31";
  if (formats.has("date-time")) return "2024-01-31T09:30:00Z";
  // Free text or an application record ID (1 to 36 characters): a record ID is both.
  const max = typeof scalar.maxLength === "number" ? scalar.maxLength : LONGEST_TEXT;
  return "80000001-1700000000".slice(0, Math.max(1, max));
}

/**
 * The bad values of a query parameter, by its schema (issue 14): a wrong type, out-of-range
 * numbers, an impossible date, NUL, a lone control character, over-long text, a repeated scalar and
 * too many array items. Every one must be refused with a 4xx naming the parameter.
 */
export function badQueryValues(parameter: Parameter): BadValue[] {
  const schema = parameter.schema;
  const scalar = scalarOf(schema);
  const bad: BadValue[] = [];
  if (isRestricted(scalar)) {
    const word = Array.isArray(scalar.enum) && scalar.enum.includes("abc") ? "abc-not-a-value" : "abc";
    bad.push({ what: "wrong type", values: [word] });
  }
  if (scalar.type === "integer") {
    bad.push({ what: "not an integer", values: ["1.5"] });
    if (typeof scalar.minimum === "number") {
      bad.push({ what: "below its minimum", values: [String(scalar.minimum - 1)] });
    }
    if (typeof scalar.maximum === "number") {
      bad.push({ what: "above its maximum", values: [String(scalar.maximum + 1)] });
    }
  }
  const formats = formatsOf(scalar);
  if (formats.has("date")) bad.push({ what: "impossible date", values: ["2024-02-30"] });
  if (formats.has("date-time")) bad.push({ what: "impossible date", values: ["2024-02-30T09:30:00Z"] });
  bad.push({ what: "NUL", values: ["\u0000"] });
  bad.push({ what: "lone control character", values: ["\u0007"] });
  if (!isRestricted(scalar)) {
    // Beyond the stated bound, or beyond the longest text anything takes when none is stated.
    const max = typeof scalar.maxLength === "number" ? scalar.maxLength : LONGEST_TEXT;
    bad.push({ what: `over-long (${max + 1} characters)`, values: ["9".repeat(max + 1)] });
  }
  if (isArray(schema)) {
    const most = typeof schema.maxItems === "number" ? schema.maxItems : MOST_ITEMS;
    bad.push({
      what: `too many items (${most + 1})`,
      values: Array.from({ length: most + 1 }, () => validValue(schema)),
    });
  } else {
    const value = validValue(schema);
    bad.push({ what: "repeated scalar", values: [value, value] });
  }
  return bad;
}

/** The bad values of a path parameter: over 36 characters (the longest record ID), and NUL. */
export function badPathValues(): BadValue[] {
  return [
    { what: "over-long (37 characters)", values: ["8".repeat(37)] },
    { what: "NUL", values: ["\u0000"] },
  ];
}
