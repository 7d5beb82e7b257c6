import { ServiceError } from "../../errors/service-error.ts";
import { explainMismatch, matchContent, type Explanation } from "./content-model.ts";
import { ledgerSchema, type CompiledType, type LedgerSchema } from "./schema.ts";
import type { LedgerSchemaTable, SimpleTypeEntry } from "./schema-table.ts";
import type { XmlElement } from "./tree.ts";

/**
 * Schema validation of passthrough request messages (architecture §5: "schema-invalid XML → 400
 * PASSTHROUGH_INVALID_XML before anything is queued"). The application rejects unknown elements,
 * missing required ones and elements out of order, so catching them here saves a round trip to the
 * end user's machine and gives the developer a message that names the exact path.
 *
 * The rules come from `generated/ledger-schema.json`, derived from the SDK's XSDs by
 * `scripts/gen-ledger-schema.ts`. The table is read on first use, and each type's model is compiled
 * the first time an element of that type is seen.
 */

type RequestSchema = LedgerSchema;

/** The schema, read once on first use. */
const requestSchema = ledgerSchema;

/** The derived table (read once); tests and tools use it to reason about the schema. */
export function requestSchemaTable(): LedgerSchemaTable {
  return requestSchema().table;
}

const invalid = (message: string): ServiceError =>
  new ServiceError("PASSTHROUGH_INVALID_XML", { param: "body", message });

/** Where an element sits, formatted only when a message needs it. */
interface Location {
  parent: Location | null;
  siblings: readonly XmlElement[];
  index: number;
}

/** `InvoiceAddRq/InvoiceAdd/InvoiceLineAdd[2]/Amount`: an index only where a name repeats. */
function formatPath(location: Location): string {
  const parts: string[] = [];
  for (let at: Location | null = location; at; at = at.parent) {
    const name = at.siblings[at.index]?.name ?? "";
    let position = 0;
    let count = 0;
    at.siblings.forEach((sibling, i) => {
      if (sibling.name !== name) return;
      count++;
      if (i <= at.index) position = count;
    });
    parts.push(count > 1 ? `${name}[${position}]` : name);
  }
  return parts.reverse().join("/");
}

const code = (name: string): string => `\`${name}\``;

function listOf(names: readonly string[], limit: number, counted = true): string {
  const shown = names.slice(0, limit).join(", ");
  if (names.length <= limit) return shown;
  return counted ? `${shown}, … (${names.length - limit} more)` : `${shown}…`;
}

/**
 * Validates the request messages (the children of `QBXMLMsgsRq`) against the schema; the first
 * problem → PASSTHROUGH_INVALID_XML with `param: "body"` and a message naming its path.
 */
export function validateRequestMessages(messages: readonly XmlElement[]): void {
  const schema = requestSchema();
  messages.forEach((message, index) => {
    const name = message.name;
    if (!schema.requests.has(name)) throw invalid(unknownRequest(schema, name));
    validateElement(schema, message, schema.typeOf(name, null), { parent: null, siblings: messages, index });
  });
}

function unknownRequest(schema: RequestSchema, name: string): string {
  const lower = name.toLowerCase();
  const similar = schema.table.requests.find((known) => known.toLowerCase() === lower);
  const hint = similar ? ` (did you mean ${code(similar)}?)` : "";
  return `${code(name)} is not a request message the application knows${hint}.`;
}

/**
 * Checks one element of the reader's tree. The passthrough reads with `keepMixedText`, so an
 * element's `text` holds any text found beside its children, reported here by path.
 */
function validateElement(schema: RequestSchema, element: XmlElement, type: CompiledType, at: Location): void {
  if (element.attrs.length > 0) checkAttributes(schema, element.attrs, type.attributes, at);
  const children = element.children;
  if (type.kind === "simple") {
    const [first] = children;
    if (first !== undefined) {
      throw invalid(`${code(formatPath(at))} holds a value, not elements (found ${code(first.name)}).`);
    }
    const problem = valueProblem(type.entry, element.text);
    if (problem) throw invalid(`${code(formatPath(at))} ${problem}.`);
    return;
  }
  if (element.text !== "") throw invalid(`${code(formatPath(at))} holds elements, not text.`);
  const names = children.map((c) => c.name);
  const matched = matchContent(type.model, names);
  if (!Array.isArray(matched)) {
    throw invalid(describe(explainMismatch(type.model, names, matched), at, children));
  }
  for (let index = 0; index < children.length; index++) {
    const particle = matched[index];
    const c = children[index];
    if (!particle || !c) continue;
    const childType = schema.typeOf(particle.name, particle.typeKey);
    validateElement(schema, c, childType, { parent: at, siblings: children, index });
  }
}

function describe(explanation: Explanation, at: Location, elements: readonly XmlElement[]): string {
  const here = formatPath(at);
  const child = (index: number): string => formatPath({ parent: at, siblings: elements, index });
  const nameAt = (index: number): string => elements[index]?.name ?? "";
  switch (explanation.kind) {
    case "unknown": {
      const hint = explanation.suggestion ? ` (did you mean ${code(explanation.suggestion)}?)` : "";
      const allowed = explanation.allowed.length > 0 ? listOf(explanation.allowed, 12) : "no elements";
      return `${code(here)} does not allow ${code(nameAt(explanation.at))}${hint} (allowed here: ${allowed}).`;
    }
    case "missing": {
      const [only] = explanation.names;
      if (explanation.element && only !== undefined) return `${code(`${here}/${only}`)} is required.`;
      return `${code(here)} requires one of ${listOf(explanation.names.map(code), 12)}.`;
    }
    case "order":
      return `${code(child(explanation.at))} is out of order: it must come before ${code(nameAt(explanation.before))}.`;
    case "choice": {
      const options = explanation.alternatives.map((names) => listOf(names, 3, false)).join(" | ");
      return `${code(here)} cannot have both ${code(nameAt(explanation.other))} and ${code(nameAt(explanation.at))}: they are alternatives (use one of: ${options}).`;
    }
    case "tooMany": {
      const max = explanation.max;
      const limit = max === 1 ? "only once" : `at most ${max} times`;
      return `${code(child(explanation.at))} may appear ${limit} in ${code(here)}.`;
    }
    case "position": {
      const previous = explanation.at > 0 ? ` after ${code(nameAt(explanation.at - 1))}` : " first";
      return `${code(child(explanation.at))} is not allowed${previous} in ${code(here)}.`;
    }
  }
}

function checkAttributes(
  schema: RequestSchema,
  attributes: ReadonlyArray<readonly [string, string]>,
  allowed: Record<string, string>,
  at: Location,
): void {
  for (const [name, value] of attributes) {
    const typeKey = allowed[name]?.replace(/^!/, "");
    if (typeKey === undefined) {
      const names = Object.keys(allowed);
      const list = names.length > 0 ? `allowed: ${names.join(", ")}` : "it takes none";
      throw invalid(`${code(formatPath(at))} does not allow the attribute ${code(name)} (${list}).`);
    }
    const entry = schema.table.simple[typeKey];
    const problem = entry ? valueProblem(entry, value) : null;
    if (problem) throw invalid(`The attribute ${code(`${formatPath(at)}@${name}`)} ${problem}.`);
  }
  for (const [name, typeKey] of Object.entries(allowed)) {
    if (typeKey.startsWith("!") && !attributes.some(([key]) => key === name)) {
      throw invalid(`${code(formatPath(at))} requires the attribute ${code(name)}.`);
    }
  }
}

/**
 * Lexical checks per base kind: enough to catch obvious mistakes (a word where a number belongs, a
 * US-style date). Precision and ranges of amounts are left to the application.
 */
const KIND_CHECKS: Record<string, readonly [RegExp, string]> = {
  bool: [/^(?:true|false|1|0)?$/, "must be `true` or `false`"],
  int: [/^[+-]?\d+$/, "must be a whole number"],
  date: [/^(?:\d{4}-\d{2}-\d{2}(?:Z|[+-]\d{2}:\d{2})?)?$/, "must be a date written YYYY-MM-DD"],
  datetime: [
    /^(?:\d{4}-\d{1,2}-\d{1,2}(?:T[\d:+-]*)?)?$/,
    "must be a date and time written YYYY-MM-DDThh:mm:ss",
  ],
  amt: [/^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+))?$/, "must be a number"],
  price: [/^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+))?$/, "must be a number"],
  quan: [/^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+))?$/, "must be a number"],
  percent: [/^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+))?$/, "must be a number"],
  float: [/^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+))?$/, "must be a number"],
  guid: [/^(?:0|\{[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}\})$/, "must be a GUID in braces or 0"],
  timeinterval: [/^(?:[+-]?PT(?:\d+H)?(?:\d+M)?(?:\d+S)?)?$/, "must be a duration such as PT1H30M"],
};

/** What is wrong with a leaf value, or null. */
export function valueProblem(entry: SimpleTypeEntry, value: string): string | null {
  if (entry.e !== undefined && !entry.e.includes(value)) {
    return `must be one of ${listOf(entry.e, 20)} (got ${code(value)})`;
  }
  if (entry.max !== undefined && value.length > entry.max) {
    const length = [...value].length;
    if (length > entry.max) return `is longer than ${entry.max} characters (${length})`;
  }
  const check = KIND_CHECKS[entry.b];
  if (check && !check[0].test(value)) return `${check[1]} (got ${code(value)})`;
  if (entry.lo !== undefined && Number(value) < entry.lo) return `must be at least ${entry.lo}`;
  if (entry.hi !== undefined && Number(value) > entry.hi) return `must be at most ${entry.hi}`;
  return null;
}
