import { explainMismatch, matchContent } from "./content-model.ts";
import { valueProblem } from "./request-schema.ts";
import type { CompiledType, LedgerSchema } from "./schema.ts";
import type { XmlElement } from "./tree.ts";

/**
 * Checks an element tree against the schema: element names, order and occurrences, attributes and
 * leaf values. The typed engines check every message they write before it is queued (a failure is a
 * bug in a definition, reported as INTERNAL_ERROR), the simulator checks the requests it receives,
 * and tests check the simulator's answers. Returns the first problem, or null.
 */
export function treeProblem(
  schema: LedgerSchema,
  element: XmlElement,
  type: CompiledType,
  path = element.name,
): string | null {
  for (const [name, value] of element.attrs) {
    const typeKey = type.attributes[name]?.replace(/^!/, "");
    if (typeKey === undefined) return `${path} does not allow the attribute ${name}`;
    const entry = schema.table.simple[typeKey];
    const problem = entry ? valueProblem(entry, value) : null;
    if (problem) return `${path}@${name} ${problem}`;
  }
  for (const [name, typeKey] of Object.entries(type.attributes)) {
    if (typeKey.startsWith("!") && !element.attrs.some(([key]) => key === name)) {
      return `${path} requires the attribute ${name}`;
    }
  }
  if (type.kind === "simple") {
    if (element.children.length > 0) return `${path} holds a value, not elements`;
    const problem = valueProblem(type.entry, element.text);
    return problem ? `${path} ${problem}` : null;
  }
  if (element.text.trim() !== "") return `${path} holds elements, not text`;
  const names = element.children.map((child) => child.name);
  const matched = matchContent(type.model, names);
  if (!Array.isArray(matched)) {
    const explanation = explainMismatch(type.model, names, matched);
    return `${path}: ${explanation.kind} at child ${"at" in explanation ? String(explanation.at) : "?"} (${names.join(",")})`;
  }
  for (let index = 0; index < element.children.length; index++) {
    const particle = matched[index];
    const child = element.children[index];
    if (!particle || !child) continue;
    const problem = treeProblem(
      schema,
      child,
      schema.typeOf(particle.name, particle.typeKey),
      `${path}/${child.name}`,
    );
    if (problem) return problem;
  }
  return null;
}

/** Checks one message element (`InvoiceAddRq`, `InvoiceQueryRs`…) against its declared type. */
export function messageProblem(schema: LedgerSchema, message: XmlElement): string | null {
  if (!schema.requests.has(message.name) && !schema.responses.has(message.name)) {
    return `${message.name} is not a message of the schema`;
  }
  return treeProblem(schema, message, schema.typeOf(message.name, null));
}
