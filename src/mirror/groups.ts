import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import { listFilters, type ParamValue } from "../ledger/typed/filters.ts";
import { watchableResources } from "../change-feed/resources.ts";

/**
 * Which typed groups can be mirrored, and the form their copy is kept in (decision 0044). A group
 * can be mirrored when the change feed can watch it: its list query filters by modification time,
 * so a poll finds what changed, and its deletions appear in a deleted list. The copy holds each
 * record as the list operation answers it with every record included (inactive ones too), line
 * items and linked transactions: the widest answer, from which narrower ones are cut.
 */

/** The mirrorable groups by path name (`customers`, `invoices`), alphabetical. */
export function mirrorableGroups(): ReadonlyMap<string, ResourceDefinition> {
  return watchableResources();
}

function paramNames(resource: ResourceDefinition): Set<string> {
  return new Set(listFilters(resource).params.map((p) => p.name));
}

/** The list parameters that ask for the copy's form (inactive records, lines, linked transactions). */
export function storedFormParams(resource: ResourceDefinition): Map<string, ParamValue> {
  const params = paramNames(resource);
  const values = new Map<string, ParamValue>();
  if (params.has("status")) values.set("status", "all");
  if (params.has("includeLineItems")) values.set("includeLineItems", true);
  if (params.has("includeLinkedTransactions")) values.set("includeLinkedTransactions", true);
  return values;
}

/** The JSON field linked transactions are read into (present only when a query asks for them). */
export const LINKED_FIELD = "linkedTransactions";

/**
 * Fields whose values the application computes from other records (balances, open and paid
 * amounts, linked transactions, quantities on hand): a change of another record moves them
 * without changing the record's modification time.
 */
const DERIVED_FIELDS = new Set([
  "balance",
  "totalBalance",
  "amountDue",
  "amountDueInHomeCurrency",
  "isPaid",
  "openAmount",
  "appliedAmount",
  "balanceRemaining",
  "balanceRemainingInHomeCurrency",
  "creditRemaining",
  "creditRemainingInHomeCurrency",
  "suggestedDiscountAmount",
  "unusedCredits",
  "appliedToTransactions",
  "refundAppliedToTransactions",
  LINKED_FIELD,
  "sourceAccountBalance",
  "targetAccountBalance",
]);

/**
 * Quantities and the average cost moved by any inventory transaction's lines (which the
 * transactions list does not name).
 */
const QUANTITY_FIELD = /^(quantity(OnHand|On[A-Z]|CanBuild|ToBeBuilt|Required)|averageCost$)/;

const fieldsCache = new Map<ResourceDefinition, ReadonlySet<string>>();

/** The JSON field names of a group's records. */
export function recordFields(resource: ResourceDefinition): ReadonlySet<string> {
  let fields = fieldsCache.get(resource);
  if (!fields) {
    // A group of several kinds (items) holds the fields of each.
    fields = new Set([
      ...resource.output.fields.map((field) => field.json),
      ...[...resource.records.values()].flatMap((entry) => entry.shape.fields.map((field) => field.json)),
    ]);
    fieldsCache.set(resource, fields);
  }
  return fields;
}

/** Whether the group's records hold values computed from other records. */
export function dependsOnOtherRecords(resource: ResourceDefinition): boolean {
  for (const field of recordFields(resource))
    if (DERIVED_FIELDS.has(field) || QUANTITY_FIELD.test(field)) return true;
  return false;
}

/** Whether the group's records hold quantities any inventory transaction may move. */
export function holdsQuantities(resource: ResourceDefinition): boolean {
  for (const field of recordFields(resource)) if (QUANTITY_FIELD.test(field)) return true;
  return false;
}
