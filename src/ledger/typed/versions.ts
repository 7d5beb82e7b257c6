import type { Field, Shape } from "../resources/shape.ts";
import type { ElementStep } from "../xml/availability.ts";

/**
 * The JSON path of a typed body's field that wrote an element (`lines[1].itemId` for
 * `InvoiceAddRq/InvoiceAdd/InvoiceLineAdd[2]/ItemRef`), so that an element refused by the
 * connection (spec "Versioning", LEDGER_REGION_UNSUPPORTED) is named as the caller wrote it. `steps`
 * run from the message down; the body is the first element whose type is `shape`'s. Null when the
 * element is not one of the body's fields (the message or body element itself, or an element the
 * engine adds, such as a query's `IncludeLineItems`).
 */
export function fieldPathOf(shape: Shape, steps: readonly ElementStep[]): string | null {
  const start = steps.findIndex((step) => step.typeKey === shape.typeKey);
  if (start < 0 || start === steps.length - 1) return null;
  let current: Shape | null = shape;
  let path = "";
  for (const step of steps.slice(start + 1)) {
    if (current === null) return null;
    const field: Field | undefined = current.fields.find((f) => f.slot.name === step.name);
    if (!field) return null;
    path = path === "" ? field.json : `${path}.${field.json}`;
    if (field.array) path += `[${step.index}]`;
    // A reference's `ListID` is the field itself.
    if (field.form === "ref") return path;
    current = field.shape;
  }
  return path;
}
