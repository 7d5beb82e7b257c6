import { ServiceError } from "../errors/service-error.ts";
import type { JsonSchema } from "./resources/json-schema.ts";
import type { Field, Shape } from "./resources/shape.ts";
import { node, leaf, type XmlElement } from "./xml/tree.ts";

/**
 * References between batch members (issue 27 item 3, decision 0050). A member's body may hold, in
 * place of any value an ID or a name could go in, an object `{"$ref": "<reference>"}` (no other
 * key) naming a value of an EARLIER member's answer as the batch result shows it. Two spellings,
 * one meaning:
 *
 * - path:    `requests[<i>].data` then any number of `.<name>` / `[<n>]` steps
 *            (`requests[0].data.id`, `requests[2].data.lines[0].id`); `<name>` is
 *            `[A-Za-z_][A-Za-z0-9_]*`, `<i>` and `<n>` decimal without leading zeros;
 * - pointer: an RFC 6901 JSON Pointer (not the `#` fragment form) `/requests/<i>/data/<token>…`,
 *            `~1` for `/` and `~0` for `~` in a token; a token of digits is an index where the
 *            value there is an array, else a name.
 *
 * This module is the grammar, the checks that need no store (where the reference may go, what the
 * referenced answer can hold) and the rewrite of a message that names a list object by full name.
 */

/** A parsed reference: the member it names and the steps into its `data`. */
export interface MemberRef {
  readonly member: number;
  /** Steps into the member's `data`: names, or indices (numbers; a pointer's digits stay strings). */
  readonly steps: ReadonlyArray<string | number>;
}

const INDEX = /^(0|[1-9][0-9]*)$/;
const PATH_HEAD = /^requests\[(0|[1-9][0-9]*)\]\.data/;
const PATH_STEP = /^(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[(0|[1-9][0-9]*)\])/;

/** Parses a reference in either spelling; null when it is neither. */
export function parseMemberRef(text: string): MemberRef | null {
  if (text.startsWith("/")) return parsePointer(text);
  const head = PATH_HEAD.exec(text);
  if (!head) return null;
  const steps: Array<string | number> = [];
  let rest = text.slice(head[0].length);
  while (rest.length > 0) {
    const step = PATH_STEP.exec(rest);
    if (!step) return null;
    steps.push(step[1] !== undefined ? step[1] : Number(step[2]));
    rest = rest.slice(step[0].length);
  }
  return { member: Number(head[1]), steps };
}

function parsePointer(text: string): MemberRef | null {
  const tokens: string[] = [];
  for (const raw of text.slice(1).split("/")) {
    if (/~(?![01])/.test(raw)) return null;
    tokens.push(raw.replace(/~1/g, "/").replace(/~0/g, "~"));
  }
  const [requests, index, data, ...steps] = tokens;
  if (requests !== "requests" || index === undefined || !INDEX.test(index) || data !== "data") return null;
  return { member: Number(index), steps };
}

/** The canonical (path) spelling of a reference, for messages. */
export function refText(ref: MemberRef): string {
  return `requests[${ref.member}].data${ref.steps
    .map((step) => (typeof step === "number" ? `[${step}]` : INDEX.test(step) ? `[${step}]` : `.${step}`))
    .join("")}`;
}

/** Where a `$ref` object sits in a body: its steps from the body's root. */
export type BodyPath = ReadonlyArray<string | number>;

/** `param` text of a body location: `customerId`, `lines[0].itemId`. */
export function bodyParam(path: BodyPath): string {
  let out = "";
  for (const step of path) out += typeof step === "number" ? `[${step}]` : out === "" ? step : `.${step}`;
  return out;
}

/** A `$ref` object found in a body. */
export interface FoundRef {
  readonly at: BodyPath;
  readonly text: string;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Every `$ref` object of a body, in document order. An object with `$ref` and any other key, or a
 * `$ref` that is not a string, is refused (`param` is `paramOf(path)`).
 */
export function findRefs(body: unknown, paramOf: (path: BodyPath) => string): FoundRef[] {
  const found: FoundRef[] = [];
  const walk = (value: unknown, at: Array<string | number>): void => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, [...at, index]));
      return;
    }
    if (!isPlainObject(value)) return;
    if (Object.hasOwn(value, "$ref")) {
      const extra = Object.keys(value).find((key) => key !== "$ref");
      if (extra !== undefined) {
        throw new ServiceError("INVALID_PARAMETER", {
          param: paramOf([...at, extra]),
          message: "An object with `$ref` refers to an earlier member's answer and has no other key.",
        });
      }
      if (typeof value.$ref !== "string") {
        throw new ServiceError("INVALID_PARAMETER", {
          param: paramOf([...at, "$ref"]),
          message: '`$ref` is a string such as `"requests[0].data.id"` or `"/requests/0/data/id"`.',
        });
      }
      found.push({ at, text: value.$ref });
      return;
    }
    for (const [key, item] of Object.entries(value)) walk(item, [...at, key]);
  };
  walk(body, []);
  return found;
}

/** A copy of `body` with the value at each given location replaced. */
export function replaceAt(body: unknown, values: ReadonlyMap<string, unknown>, at: BodyPath = []): unknown {
  const key = JSON.stringify(at);
  if (values.has(key)) return values.get(key);
  if (Array.isArray(body)) return body.map((item, index) => replaceAt(item, values, [...at, index]));
  if (!isPlainObject(body)) return body;
  return Object.fromEntries(
    Object.entries(body).map(([name, item]) => [name, replaceAt(item, values, [...at, name])]),
  );
}

/** The key of a body location in {@link replaceAt}'s map. */
export const locationKey = (at: BodyPath): string => JSON.stringify(at);

/**
 * The input field a reference stands in for: walks the body shape along the location. Null when
 * the location is no field of the shape (the body's own validation then names it).
 */
export function fieldAt(shape: Shape, at: BodyPath): { field: Field; item: boolean } | null {
  let current: Shape | null = shape;
  let field: Field | null = null;
  let item = false;
  for (const step of at) {
    if (typeof step === "number") {
      if (!field?.array || item) return null;
      item = true;
      continue;
    }
    if (field !== null) {
      // Into an object: only an object field, and an array field only through an item.
      if (field.form !== "object" || (field.array && !item)) return null;
      current = field.shape;
    }
    if (current === null) return null;
    field = current.fields.find((f) => f.json === step) ?? null;
    if (field === null) return null;
    item = false;
  }
  return field === null ? null : { field, item };
}

/** What a reference may stand in for: an ID (reference or ID field) or a text. */
export type RefSlot = "id" | "text";

/** Whether a value of the field at a location could be an ID or a name (one value, not an array). */
export function refSlotOf(found: { field: Field; item: boolean }): RefSlot | null {
  const { field, item } = found;
  if (field.array && !item) return null;
  if (field.form === "ref") return "id";
  if (field.form === "value" && field.kind?.kind === "id") return "id";
  if (field.form === "value" && field.kind?.kind === "text") return "text";
  return null;
}

function resolveSchema(schema: JsonSchema, components: Readonly<Record<string, JsonSchema>>): JsonSchema {
  let current = schema;
  for (let hops = 0; hops < 32; hops++) {
    const ref = (current as { $ref?: unknown }).$ref;
    if (typeof ref !== "string") return current;
    const name = ref.replace(/^#\/components\/schemas\//, "");
    const next = components[name];
    if (next === undefined) return {};
    current = next;
  }
  return current;
}

function typesOf(schema: JsonSchema): string[] {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === "string") return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === "string");
  return [];
}

/**
 * Whether an answer of this JSON Schema can hold a string or number at `steps` (object properties,
 * array items, any branch of `oneOf`/`anyOf`/`allOf`).
 */
export function schemaHasScalarAt(
  schema: JsonSchema,
  components: Readonly<Record<string, JsonSchema>>,
  steps: ReadonlyArray<string | number>,
): boolean {
  const resolved = resolveSchema(schema, components);
  const record = resolved as Record<string, unknown>;
  for (const combinator of ["oneOf", "anyOf", "allOf"]) {
    const branches = record[combinator];
    if (
      Array.isArray(branches) &&
      branches.some((b) => schemaHasScalarAt(b as JsonSchema, components, steps))
    ) {
      return true;
    }
  }
  const types = typesOf(resolved);
  const [step, ...rest] = steps;
  if (step === undefined) return types.some((t) => t === "string" || t === "number" || t === "integer");
  const isIndex = typeof step === "number" || INDEX.test(step);
  if (isIndex && types.includes("array")) {
    const items = record.items;
    if (items && typeof items === "object" && schemaHasScalarAt(items as JsonSchema, components, rest))
      return true;
  }
  if (typeof step === "string" && (types.includes("object") || record.properties !== undefined)) {
    const properties = (record.properties ?? {}) as Record<string, JsonSchema>;
    const property = Object.hasOwn(properties, step) ? properties[step] : undefined;
    if (property !== undefined) return schemaHasScalarAt(property, components, rest);
  }
  return false;
}

/**
 * Rewrites a message so that every reference element holding one of the placeholders as its
 * `ListID` names the record by full name instead: `<CustomerRef><ListID>p</ListID></CustomerRef>` →
 * `<CustomerRef><FullName>Acme:Roof</FullName></CustomerRef>`. Returns the message and how many
 * references it rewrote.
 */
export function nameReferences(
  message: XmlElement,
  fullNames: ReadonlyMap<string, string>,
): { message: XmlElement; rewritten: number } {
  let rewritten = 0;
  const walk = (element: XmlElement): XmlElement => {
    const [only] = element.children;
    if (element.children.length === 1 && only?.name === "ListID" && only.children.length === 0) {
      const fullName = fullNames.get(only.text);
      if (fullName !== undefined) {
        rewritten++;
        return node(element.name, [leaf("FullName", fullName)], element.attrs);
      }
    }
    if (element.children.length === 0) return element;
    return node(element.name, element.children.map(walk), element.attrs);
  };
  return { message: walk(message), rewritten };
}
