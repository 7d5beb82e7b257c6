import { allResources, type ResourceDefinition } from "../ledger/resources/definitions.ts";
import { listFilters } from "../ledger/typed/filters.ts";

/**
 * Which typed resources a change feed can watch: the groups whose list query filters by
 * modification time (`updatedAfter`), named by their path segment (`customers`, `invoices`). Derived
 * from the resource registry, like the routes: a group that gains the filter becomes watchable.
 * Deletions are found through the deleted lists by the group's delete type.
 */
let cache: ReadonlyMap<string, ResourceDefinition> | null = null;

/** The watchable groups by path name. */
export function watchableResources(): ReadonlyMap<string, ResourceDefinition> {
  if (cache) return cache;
  const map = new Map<string, ResourceDefinition>();
  for (const resource of allResources()) {
    if (!resource.actions.includes("list") || resource.entry.singleton) continue;
    if (!listFilters(resource).params.some((p) => p.name === "updatedAfter")) continue;
    if (resource.entry.resource === "deletedListObjects" || resource.entry.resource === "deletedTransactions")
      continue;
    map.set(resource.entry.path, resource);
  }
  cache = map;
  return map;
}

/** The deleted list a group's deletions appear in (null when the group cannot be deleted). */
export function deletedListOf(
  resource: ResourceDefinition,
): "deletedListObjects" | "deletedTransactions" | null {
  if (resource.delType === null) return null;
  return resource.entry.kind === "list" ? "deletedListObjects" : "deletedTransactions";
}

/** A registry group by its camelCase name (`deletedListObjects`). */
export function resourceNamed(name: string): ResourceDefinition | undefined {
  return allResources().find((r) => r.entry.resource === name);
}
