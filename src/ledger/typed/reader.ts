import type { Field, Shape } from "../resources/shape.ts";
import type { XmlElement } from "../xml/tree.ts";

/**
 * XML → JSON for output shapes (spec: "Response fields are all present. Absent values are null"):
 * every field of the shape appears, arrays as `[]` when absent, references as `{id, fullName}`. A
 * value the reader cannot understand becomes null and a LEDGER_VALUE_UNREADABLE warning whose `path`
 * points into the result (`data[2].lines[0].amount`); the record is never dropped.
 */
export interface ReadWarning {
  code: "LEDGER_VALUE_UNREADABLE";
  statusCode: null;
  message: string;
  path: string;
}

/** Per shape: element name → field, so a record is read in one pass over its children. */
const indexes = new WeakMap<Shape, Map<string, Field>>();

function indexOf(shape: Shape): Map<string, Field> {
  let index = indexes.get(shape);
  if (!index) {
    index = new Map();
    for (const field of shape.fields) if (!index.has(field.slot.name)) index.set(field.slot.name, field);
    indexes.set(shape, index);
  }
  return index;
}

export function readRecord(
  shape: Shape,
  element: XmlElement,
  path: string,
  warnings: ReadWarning[],
  objectType: string | null = shape.objectType,
): Record<string, unknown> {
  // Every field first, in the shape's order (objectType right after id), so absent ones stay null.
  const out: Record<string, unknown> = {};
  let typed = objectType === null;
  if (!typed && shape.fields[0]?.json !== "id") {
    out.objectType = objectType;
    typed = true;
  }
  for (const field of shape.fields) {
    if (field.json in out) continue;
    out[field.json] = field.array ? [] : null;
    if (!typed && field.json === "id") {
      out.objectType = objectType;
      typed = true;
    }
  }
  const index = indexOf(shape);
  const here = (json: string): string => (path === "" ? json : `${path}.${json}`);
  for (const child of element.children) {
    const field = index.get(child.name);
    if (!field) continue;
    if (field.array) {
      const list = out[field.json] as unknown[];
      list.push(readField(field, child, `${here(field.json)}[${list.length}]`, warnings));
    } else if (out[field.json] === null) {
      out[field.json] = readField(field, child, here(field.json), warnings);
    }
  }
  return out;
}

function readField(field: Field, element: XmlElement, path: string, warnings: ReadWarning[]): unknown {
  switch (field.form) {
    case "ref": {
      const id = element.children.find((c) => c.name === "ListID")?.text ?? null;
      const fullName = element.children.find((c) => c.name === "FullName")?.text ?? null;
      return { id, fullName };
    }
    case "object":
      return field.shape ? readRecord(field.shape, element, path, warnings) : null;
    case "value": {
      if (!field.kind) return element.text;
      const decoded = field.kind.fromXml(element.text);
      if (decoded.ok) return field.kind.output(decoded.value);
      warnings.push({
        code: "LEDGER_VALUE_UNREADABLE",
        statusCode: null,
        message: `The application sent a value that could not be read for \`${path}\`; it is null here.`,
        path,
      });
      return null;
    }
  }
}
