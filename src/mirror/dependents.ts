import type { PollQuery } from "../change-feed/poller.ts";
import { resourceNamed } from "../change-feed/resources.ts";
import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import { listFilters, type ParamValue } from "../ledger/typed/filters.ts";
import { dependsOnOtherRecords, holdsQuantities, storedFormParams } from "./groups.ts";

/**
 * Values computed from other records (decision 0044): a customer's balance moves when an invoice
 * is written, an invoice's open amount and linked transactions when a payment is applied, an
 * item's quantity on hand with any inventory line, and none of these changes the record's own
 * modification time, so a poll of modified records alone would keep them stale. A poll of a group
 * whose records hold such values also asks for the transactions modified in its window (every type,
 * with their lines' entities and accounts) and the transactions deleted in it; then it reads again
 * the records those touch:
 *
 * - a list group (customers, vendors, accounts): the records a changed transaction names (its
 *   entity, its lines' accounts…) and their parents (a total balance includes the jobs'); a deleted
 *   transaction names nothing, and quantities move with lines the transactions list does not show:
 *   then the whole group is read again;
 * - a transaction group (invoices, bills): the records that name an entity or a transaction the
 *   changed and deleted transactions name (the customer's other invoices; the invoice a deleted
 *   payment was applied to, through its linked transactions).
 *
 * Names shown in references (`customer.fullName` on an invoice) are the referenced record's when the
 * referring record was last read: a rename alone does not move the referring records (documented).
 */
type Json = Record<string, unknown>;

const MAX_IDS_PER_QUERY = 100;

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00");

function enumValues(resource: ResourceDefinition, param: string): string[] {
  const found = listFilters(resource).params.find((p) => p.name === param);
  const schema = found?.kind.jsonSchema() as { enum?: unknown[] } | undefined;
  return (schema?.enum ?? []).filter((v): v is string => typeof v === "string" && v !== "all");
}

/** The extra queries of a dependent group's poll: transactions modified, then transactions deleted, since the window. */
export function dependentQueries(resource: ResourceDefinition, updatedAfterMs: number): PollQuery[] {
  if (!dependsOnOtherRecords(resource)) return [];
  const transactions = resourceNamed("transactions");
  const deleted = resourceNamed("deletedTransactions");
  if (!transactions || !deleted) return [];
  return [
    {
      resource: transactions,
      values: new Map<string, ParamValue>([
        ["updatedAfter", iso(updatedAfterMs)],
        ["detailLevel", "all"],
      ]),
    },
    {
      resource: deleted,
      values: new Map<string, ParamValue>([
        ["transactionTypes", enumValues(deleted, "transactionTypes")],
        ["deletedAfter", iso(updatedAfterMs)],
      ]),
    },
  ];
}

/** The IDs a record names: `id` and `transactionId` of every object inside it (not its own). */
export function namedIds(record: Json): Set<string> {
  const out = new Set<string>();
  const visit = (value: unknown, top: boolean): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, false);
      return;
    }
    if (typeof value !== "object" || value === null) return;
    for (const [key, inner] of Object.entries(value as Json)) {
      if (!top && (key === "id" || key === "transactionId") && typeof inner === "string") out.add(inner);
      else if (typeof inner === "object") visit(inner, false);
    }
  };
  visit(record, true);
  return out;
}

export type Refresh = { kind: "none" } | { kind: "ids"; ids: string[] } | { kind: "whole" };

/**
 * What a dependent group's poll reads again, from what the transactions queries answered and the
 * copy as it is. `changedHere` are the group's own records the poll already read (not read twice).
 */
export function refreshOf(
  resource: ResourceDefinition,
  changedTransactions: readonly Json[],
  deletedTransactionIds: readonly string[],
  copy: ReadonlyMap<string, Json>,
  changedHere: ReadonlySet<string>,
): Refresh {
  if (changedTransactions.length === 0 && deletedTransactionIds.length === 0) return { kind: "none" };
  if (holdsQuantities(resource)) return { kind: "whole" };
  const affected = new Set<string>();
  if (resource.entry.kind === "list") {
    if (deletedTransactionIds.length > 0) return { kind: "whole" };
    for (const transaction of changedTransactions) {
      for (const id of namedIds(transaction)) {
        // The record and its parents (a total balance includes its sub-records').
        for (let at: Json | undefined = copy.get(id); at;) {
          affected.add(String(at.id));
          const parent = (at.parent as { id?: unknown } | null | undefined)?.id;
          at = typeof parent === "string" && !affected.has(parent) ? copy.get(parent) : undefined;
        }
      }
    }
  } else {
    const named = new Set<string>(deletedTransactionIds);
    for (const transaction of changedTransactions) {
      if (typeof transaction.transactionId === "string") named.add(transaction.transactionId);
      for (const id of namedIds(transaction)) named.add(id);
    }
    for (const [id, record] of copy) {
      if (named.has(id)) affected.add(id);
      else for (const ref of namedIds(record)) if (named.has(ref)) affected.add(id);
    }
  }
  for (const id of changedHere) affected.delete(id);
  for (const id of deletedTransactionIds) affected.delete(id);
  return affected.size === 0 ? { kind: "none" } : { kind: "ids", ids: [...affected].sort() };
}

/** The queries of a refresh: the records again by ID (100 a query), or the whole group. */
export function refreshQueries(resource: ResourceDefinition, refresh: Refresh): PollQuery[] {
  if (refresh.kind === "none") return [];
  const form = storedFormParams(resource);
  if (refresh.kind === "whole") return [{ resource, values: form }];
  // An ID list excludes every other filter: only the form's options go with it.
  form.delete("status");
  const out: PollQuery[] = [];
  for (let i = 0; i < refresh.ids.length; i += MAX_IDS_PER_QUERY) {
    out.push({ resource, values: new Map([...form, ["ids", refresh.ids.slice(i, i + MAX_IDS_PER_QUERY)]]) });
  }
  return out;
}
