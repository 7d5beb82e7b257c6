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

/**
 * Per shape and object type, prepared once: element name → field (a record is read in one pass over
 * its children), and the record with every field absent in output order (copied for each record).
 */
interface ReadPlan {
  readonly index: ReadonlyMap<string, Field>;
  readonly template: Readonly<Record<string, unknown>>;
  readonly arrays: readonly string[];
  /** Fields computed from others once the record is read (`Field.derive`). */
  readonly derived: readonly Field[];
}

const plans = new WeakMap<Shape, Map<string | null, ReadPlan>>();

function planOf(shape: Shape, objectType: string | null): ReadPlan {
  let byType = plans.get(shape);
  if (!byType) plans.set(shape, (byType = new Map<string | null, ReadPlan>()));
  let plan = byType.get(objectType);
  if (plan) return plan;
  const index = new Map<string, Field>();
  const derived = shape.fields.filter((field) => field.derive !== undefined);
  for (const field of shape.fields) {
    if (!field.derive && !index.has(field.slot.name)) index.set(field.slot.name, field);
  }
  // objectType right after id (or first when the shape has no id).
  const template: Record<string, unknown> = {};
  const arrays: string[] = [];
  let typed = objectType === null;
  if (!typed && shape.fields[0]?.json !== "id") {
    template.objectType = objectType;
    typed = true;
  }
  for (const field of shape.fields) {
    if (field.json in template) continue;
    template[field.json] = null;
    if (field.array) arrays.push(field.json);
    if (!typed && field.json === "id") {
      template.objectType = objectType;
      typed = true;
    }
  }
  // Rebuilt in one step: an object grown key by key ends up in V8's slow dictionary mode, and so
  // would every copy of it (copying such a template cost more than reading the record).
  plan = { index, template: Object.fromEntries(Object.entries(template)), arrays, derived };
  byType.set(objectType, plan);
  return plan;
}

/** `parent.json[position]`, built only when a warning needs it. */
function pathOf(parent: string, json: string, position: number): string {
  const base = parent === "" ? json : `${parent}.${json}`;
  return position < 0 ? base : `${base}[${position}]`;
}

/** Reads one record element into its output shape. */
export function readRecord(
  shape: Shape,
  element: XmlElement,
  path: string,
  warnings: ReadWarning[],
  objectType: string | null = shape.objectType,
): Record<string, unknown> {
  // Every field first, in the shape's order, so absent ones stay null (arrays []).
  const plan = planOf(shape, objectType);
  const out: Record<string, unknown> = { ...plan.template };
  for (const json of plan.arrays) out[json] = [];
  for (const child of element.children) {
    const field = plan.index.get(child.name);
    if (!field) continue;
    if (field.array) {
      const list = out[field.json] as unknown[];
      list.push(readField(field, child, path, list.length, warnings));
    } else if (out[field.json] === null) {
      out[field.json] = readField(field, child, path, -1, warnings);
    }
  }
  for (const field of plan.derived) out[field.json] = field.derive?.value(out[field.derive.from]) ?? null;
  return out;
}

function readField(
  field: Field,
  element: XmlElement,
  parent: string,
  position: number,
  warnings: ReadWarning[],
): unknown {
  switch (field.form) {
    case "ref": {
      let id: string | null = null;
      let fullName: string | null = null;
      for (const c of element.children) {
        if (c.name === "ListID") id ??= c.text;
        else if (c.name === "FullName") fullName ??= c.text;
      }
      return { id, fullName };
    }
    case "object":
      return field.shape
        ? readRecord(field.shape, element, pathOf(parent, field.json, position), warnings)
        : null;
    case "value": {
      if (!field.kind) return element.text;
      const decoded = field.kind.fromXml(element.text);
      if (decoded.ok) return field.kind.output(decoded.value);
      const path = pathOf(parent, field.json, position);
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
