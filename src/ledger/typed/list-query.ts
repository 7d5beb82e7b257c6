import type { ResourceDefinition } from "../resources/definitions.ts";
import { ledgerSchema } from "../xml/schema.ts";
import { slotsOf } from "../xml/slots.ts";
import { node, type XmlElement } from "../xml/tree.ts";
import { listFilters, type ParamValue } from "./filters.ts";

/** Orders a query's child elements by the query type's schema order (the writer's order rule). */
export function inSchemaOrder(requestName: string, children: XmlElement[]): XmlElement[] {
  const order = new Map(slotsOf(ledgerSchema(), requestName).map((slot, index) => [slot.name, index]));
  return [...children].sort((a, b) => (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0));
}

/**
 * A group's list query with these filter values, whole (no iterator, no page size): what the list
 * routes send for an unpaged list, and what the change feed sends for one poll window.
 */
export function listQueryMessage(
  resource: ResourceDefinition,
  values: ReadonlyMap<string, ParamValue>,
): XmlElement {
  const requestName = resource.queryRequest;
  return node(requestName, inSchemaOrder(requestName, listFilters(resource).build(values)));
}
