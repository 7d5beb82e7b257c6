import { ledgerSchema } from "../xml/schema.ts";
import { slotsOf } from "../xml/slots.ts";
import type { XmlElement } from "../xml/tree.ts";

/** Orders a query's child elements by the query type's schema order (the writer's order rule). */
export function inSchemaOrder(requestName: string, children: XmlElement[]): XmlElement[] {
  const order = new Map(slotsOf(ledgerSchema(), requestName).map((slot, index) => [slot.name, index]));
  return [...children].sort((a, b) => (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0));
}
