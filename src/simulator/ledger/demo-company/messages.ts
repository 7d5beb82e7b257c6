/**
 * Request messages for the demo company, written as plain objects and put into the application's
 * element order by the schema table (the application refuses any other order), so the generator
 * reads like the records it makes. References name their target by FullName, as a person's
 * integration often does.
 */
import { ledgerSchema } from "../../../ledger/xml/schema.ts";
import { slotsOf } from "../../../ledger/xml/slots.ts";
import { leaf, node, type XmlElement } from "../../../ledger/xml/tree.ts";

/** A value of a message element: text, a number or flag (written as text), nested elements, repeats. */
export type SpecValue = string | number | boolean | Spec | readonly SpecValue[] | undefined;

/** The children of an element by name, in any order; `undefined` leaves an element out. */
export interface Spec {
  readonly [name: string]: SpecValue;
}

/** `<XRef><FullName>name</FullName></XRef>`'s content. */
export function ref(fullName: string): Spec {
  return { FullName: fullName };
}

function scalar(value: SpecValue, name: string): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  throw new Error(`demo company: ${name} repeats inside a repeat`);
}

function isSpec(value: SpecValue): value is Spec {
  return typeof value === "object" && !Array.isArray(value);
}

/**
 * The ListID a reference element (`CustomerRef`…) naming `fullName` stands for, when known: a
 * reference by ListID is what the service sends, and the application finds it without a search.
 */
export type RefResolver = (refElement: string, fullName: string) => string | undefined;

/** The elements of `spec` for the schema type `typeKey`, in schema order; throws on an unknown name. */
export function elementsOf(typeKey: string, spec: Spec, resolve?: RefResolver): XmlElement[] {
  const schema = ledgerSchema();
  const slots = slotsOf(schema, typeKey);
  const out: Array<{ index: number; element: XmlElement }> = [];
  for (const [name, value] of Object.entries(spec)) {
    if (value === undefined) continue;
    const index = slots.findIndex((s) => s.name === name);
    const slot = slots[index];
    if (slot === undefined) throw new Error(`demo company: ${typeKey} has no element ${name}`);
    const values: readonly SpecValue[] = Array.isArray(value) ? value : [value];
    for (const item of values) {
      if (item === undefined) continue;
      const listId =
        resolve !== undefined &&
        isSpec(item) &&
        typeof item.FullName === "string" &&
        Object.keys(item).length === 1
          ? resolve(name, item.FullName)
          : undefined;
      const element =
        listId !== undefined
          ? node(name, [leaf("ListID", listId)])
          : isSpec(item)
            ? node(name, elementsOf(slot.typeKey, item, resolve))
            : leaf(name, scalar(item, name));
      out.push({ index, element });
    }
  }
  // Stable: repeated elements keep the caller's order.
  out.sort((a, b) => a.index - b.index);
  return out.map((o) => o.element);
}

/**
 * `<XAddRq><XAdd>…</XAdd><IncludeRetElement>…</IncludeRetElement></XAddRq>`: only the elements
 * named in `answer` (the new ID, a list object's name) come back.
 */
export function addRq(
  object: string,
  spec: Spec,
  answer: readonly string[],
  resolve?: RefResolver,
): XmlElement {
  const schema = ledgerSchema();
  const addKey = schema.keyOf(`${object}Add`, slotsOf(schema, `${object}AddRq`)[0]?.typeKey ?? null);
  return node(`${object}AddRq`, [
    node(`${object}Add`, elementsOf(addKey, spec, resolve)),
    ...answer.map((name) => leaf("IncludeRetElement", name)),
  ]);
}

/** Any other request (a delete, a void, a custom field value), its children in schema order. */
export function otherRq(name: string, spec: Spec, resolve?: RefResolver): XmlElement {
  return node(name, elementsOf(name, spec, resolve));
}
