import type { Field, Shape } from "../resources/shape.ts";
import { leaf, node, type XmlElement } from "../xml/tree.ts";

/**
 * JSON → XML for input shapes: the elements are written in schema order (the application rejects
 * any other order), references as `<XRef><ListID>…</ListID></XRef>`, null (a clearable field) as an
 * empty element, which the application reads as "clear". Values arrive already validated by the
 * input schema.
 */
export function writeElements(shape: Shape, value: Readonly<Record<string, unknown>>): XmlElement[] {
  const out: XmlElement[] = [];
  for (const field of shape.fields) {
    const given = value[field.json];
    if (given === undefined) continue;
    if (given === null) {
      out.push(leaf(field.slot.name, ""));
      continue;
    }
    const items = field.array && Array.isArray(given) ? given : [given];
    for (const item of items) out.push(writeField(field, item));
  }
  return out;
}

function writeField(field: Field, value: unknown): XmlElement {
  const name = field.slot.name;
  switch (field.form) {
    case "ref":
      return node(name, [leaf("ListID", String(value))]);
    case "object":
      return node(name, field.shape ? writeElements(field.shape, value as Record<string, unknown>) : []);
    case "value":
      return leaf(name, field.kind ? field.kind.toXml(value) : String(value));
  }
}
