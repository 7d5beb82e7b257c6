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

export function readRecord(
  shape: Shape,
  element: XmlElement,
  path: string,
  warnings: ReadWarning[],
  objectType: string | null = shape.objectType,
): Record<string, unknown> {
  const byName = new Map<string, XmlElement[]>();
  for (const child of element.children) {
    const list = byName.get(child.name);
    if (list) list.push(child);
    else byName.set(child.name, [child]);
  }
  const out: Record<string, unknown> = {};
  let typed = objectType === null;
  const here = (json: string): string => (path === "" ? json : `${path}.${json}`);
  for (const field of shape.fields) {
    if (field.json in out) continue;
    const found = byName.get(field.slot.name) ?? [];
    if (field.array) {
      out[field.json] = found.map((item, index) =>
        readField(field, item, `${here(field.json)}[${index}]`, warnings),
      );
    } else {
      const first = found[0];
      out[field.json] = first === undefined ? null : readField(field, first, here(field.json), warnings);
    }
    if (!typed && field.json === "id") {
      out.objectType = objectType;
      typed = true;
    }
  }
  if (!typed) return { objectType, ...out };
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
