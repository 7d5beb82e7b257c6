/**
 * The registry of simulated record types. A new typed resource plugs in by adding its definition
 * here; Add/Mod/Query/Del request handling is derived from the definition.
 */
import type { RecordDefinition } from "../records.ts";
import { accountDefinition } from "./account.ts";
import { customerDefinition } from "./customer.ts";
import { invoiceDefinition } from "./invoice.ts";
import { itemNonInventoryDefinition, itemServiceDefinition } from "./items.ts";

/** Every simulated record type. */
export const LEDGER_DEFINITIONS: readonly RecordDefinition[] = [
  customerDefinition,
  accountDefinition,
  itemServiceDefinition,
  itemNonInventoryDefinition,
  invoiceDefinition,
];

/** Definition by object name (`Customer`). */
export function definitionOf(object: string): RecordDefinition | undefined {
  return LEDGER_DEFINITIONS.find((d) => d.object === object);
}

/** Object names that answer to a reference kind (`Item` → ItemService, ItemNonInventory). */
export function objectsOfKind(refKind: string): string[] {
  return LEDGER_DEFINITIONS.filter((d) => d.refKind === refKind).map((d) => d.object);
}
