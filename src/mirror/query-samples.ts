import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import { listFilters, type FilterParam, type ParamValue } from "../ledger/typed/filters.ts";
import type { SeededRandom } from "../platform/seeded-random.ts";
import type { Json } from "./query.ts";

/**
 * Random list queries over every filter a group offers, with values drawn from its records, so
 * that filters hit boundaries (a range ending exactly on a record's name or time, a date-only bound
 * on a record's day, a name in another case) as often as they miss: what the mirror's property
 * test compares with the live application (issue 26, item 4), reusable against any answerer.
 */

/** A query as `answer` takes it: parameter name → parsed value. */
export type ListQuery = Map<string, ParamValue>;

function label(resource: ResourceDefinition, record: Json): string {
  const value = resource.entry.kind === "transaction" ? record.refNumber : (record.fullName ?? record.name);
  return typeof value === "string" ? value : "";
}

/** Random letter case: name filters are case-insensitive. */
function recase(text: string, random: SeededRandom): string {
  const roll = random.int(0, 2);
  if (roll === 0) return text;
  if (roll === 1) return text.toUpperCase();
  return text.toLowerCase();
}

/** A non-empty piece of `text` (prefix, suffix or middle), or `text` itself when short. */
function piece(text: string, where: "start" | "end" | "middle", random: SeededRandom): string {
  if (text.length <= 1) return text;
  const length = random.int(1, Math.min(text.length, 6));
  if (where === "start") return text.slice(0, length);
  if (where === "end") return text.slice(text.length - length);
  const start = random.int(0, text.length - length);
  return text.slice(start, start + length);
}

/** Every reference ID of a record, top level and lines (whatever it names). */
function referenceIds(record: Json): string[] {
  const out: string[] = [];
  const visit = (value: unknown, depth: number): void => {
    if (depth > 2 || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth);
      return;
    }
    const object = value as Json;
    if (typeof object.id === "string" && "fullName" in object && Object.keys(object).length === 2)
      out.push(object.id);
    else for (const inner of Object.values(object)) visit(inner, depth + 1);
  };
  for (const [key, value] of Object.entries(record)) if (key !== "id") visit(value, 0);
  return out;
}

/** A local date-time `YYYY-MM-DDThh:mm:ss` of a record's `updatedAt`, moved by `seconds`. */
function localTime(updatedAt: string, seconds: number): string {
  const offset = /([+-]\d{2}:\d{2})$/.exec(updatedAt)?.[1] ?? "+00:00";
  const sign = offset.startsWith("-") ? -1 : 1;
  const minutes = sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
  const ms = Date.parse(updatedAt) + seconds * 1000 + minutes * 60_000;
  return new Date(ms).toISOString().slice(0, 19);
}

/** A modified-time bound near a record's: a date, a local date-time, or one with an offset. */
function timeBound(updatedAt: string, random: SeededRandom): string {
  const shift = random.pick([0, 0, -1, 1, -3600, 3600]);
  switch (random.int(0, 3)) {
    case 0:
      return updatedAt.slice(0, 10);
    case 1:
      return localTime(updatedAt, shift);
    case 2:
      return new Date(Date.parse(updatedAt) + shift * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
    default:
      return `${localTime(updatedAt, shift)}${updatedAt.slice(19)}`;
  }
}

function sample<T>(items: readonly T[], count: number, random: SeededRandom): T[] {
  const out: T[] = [];
  for (let i = 0; i < count && items.length > 0; i++) out.push(random.pick(items));
  return out;
}

function ordered(a: string, b: string): [string, string] {
  return a.toLowerCase() <= b.toLowerCase() ? [a, b] : [b, a];
}

/** Fills one filter family (the parameters of one query element) into `query`. */
function fill(
  resource: ResourceDefinition,
  element: string,
  params: readonly FilterParam[],
  records: readonly Json[],
  query: ListQuery,
  random: SeededRandom,
  variant: number | undefined,
): void {
  const names = params.map((p) => p.name);
  /** One of `items`: the variant's when one is asked for (so every form is met), else a random one. */
  const choose = <T>(items: readonly T[]): T =>
    variant === undefined ? random.pick(items) : (items[variant % items.length] as T);
  const some = (): Json => random.pick(records);
  switch (element) {
    case "ActiveStatus":
      query.set("status", choose(["active", "inactive", "all"]));
      return;
    case "FromModifiedDate":
    case "ModifiedDateRangeFilter":
    case "TransactionModifiedDateRangeFilter": {
      const [a, b] = [String(some().updatedAt), String(some().updatedAt)].sort(
        (x, y) => Date.parse(x) - Date.parse(y),
      );
      const roll = choose([0, 1, 2]);
      if (roll !== 1) query.set("updatedAfter", timeBound(a ?? "", random));
      if (roll !== 0) query.set("updatedBefore", timeBound(b ?? "", random));
      return;
    }
    case "TxnDateRangeFilter":
    case "TransactionDateRangeFilter": {
      const [a, b] = [String(some().transactionDate), String(some().transactionDate)].sort();
      const roll = choose([0, 1, 2]);
      if (roll !== 1 && a) query.set("transactionDateFrom", a);
      if (roll !== 0 && b) query.set("transactionDateTo", b);
      return;
    }
    case "NameFilter":
    case "RefNumberFilter": {
      const prefix = element === "NameFilter" ? "name" : "refNumber";
      const text = label(resource, some());
      if (text === "") return;
      const [suffix, where] = choose([
        ["Contains", "middle"],
        ["StartsWith", "start"],
        ["EndsWith", "end"],
      ] as const);
      query.set(`${prefix}${suffix}`, recase(piece(text, where, random), random));
      return;
    }
    case "NameRangeFilter":
    case "RefNumberRangeFilter": {
      const prefix = element === "NameRangeFilter" ? "name" : "refNumber";
      const bound = (): string => {
        const text = label(resource, some());
        return recase(random.chance(0.3) ? piece(text, "start", random) : text, random);
      };
      const [from, to] = ordered(bound(), bound());
      const roll = choose([0, 1, 2, 3]);
      if (roll !== 1 && from !== "") query.set(`${prefix}From`, from);
      if (roll !== 0 && to !== "") query.set(`${prefix}To`, to);
      // Now and then a range written backwards: it selects nothing.
      if (roll === 3 && from !== "" && to !== "" && from.toLowerCase() !== to.toLowerCase()) {
        query.set(`${prefix}From`, to);
        query.set(`${prefix}To`, from);
      }
      return;
    }
    case "PaidStatus":
      query.set("paymentStatus", choose(["all", "paid", "not_paid"]));
      return;
    case "TotalBalanceFilter": {
      const operator = choose(names);
      const record = some();
      const balance = record.totalBalance ?? record.balance;
      query.set(operator, typeof balance === "string" && random.chance(0.8) ? balance : "0.00");
      return;
    }
    case "AccountType":
    case "PaymentMethodType": {
      const field = resource.output.fields.find((f) => f.slot.name === element)?.json ?? "";
      const value = some()[field];
      const param = names[0];
      if (typeof value === "string" && param !== undefined) query.set(param, value);
      return;
    }
    case "IncludeLineItems":
      query.set("includeLineItems", choose([true, false]));
      return;
    default: {
      const param = names[0];
      if (param === undefined) return;
      // Reference filters: IDs the records refer to (of any kind: a wrong kind must match nothing).
      const referenced = [...new Set(records.flatMap(referenceIds))];
      // Without references, the records' own IDs (of another kind: they select nothing).
      const ids = referenced.length > 0 ? referenced : records.map((r) => String(r.id));
      query.set(param, [...new Set(sample(ids, random.int(1, 3), random))]);
    }
  }
}

/**
 * Names 1 to 4 records one by one (`ids`, names or `refNumbers`, names in random case, sometimes
 * one twice), with one that does not exist when `missing`.
 */
function fillNamed(
  resource: ResourceDefinition,
  element: string,
  param: FilterParam,
  records: readonly Json[],
  query: ListQuery,
  random: SeededRandom,
  missing: boolean,
): void {
  const byId = element === "ListID" || element === "TxnID";
  const values = sample(records, random.int(1, 4), random)
    .map((r) => (byId ? String(r.id) : recase(label(resource, r), random)))
    .filter((v) => v !== "");
  if (missing) values.splice(random.int(0, values.length), 0, byId ? "FFFFFF-1" : "No Such Name");
  // Two missing: the answer names the first of them.
  if (missing && random.chance(0.5))
    values.splice(random.int(0, values.length), 0, byId ? "FFFFFE-2" : "Not Here Either");
  if (values.length > 0) query.set(param.name, values);
}

/** Elements filled by this generator (reference filters by their `…Filter` name). */
const FAMILIES = new Set([
  "ActiveStatus",
  "FromModifiedDate",
  "ModifiedDateRangeFilter",
  "TransactionModifiedDateRangeFilter",
  "TxnDateRangeFilter",
  "TransactionDateRangeFilter",
  "NameFilter",
  "RefNumberFilter",
  "NameRangeFilter",
  "RefNumberRangeFilter",
  "PaidStatus",
  "TotalBalanceFilter",
  "AccountType",
  "PaymentMethodType",
  "IncludeLineItems",
  "EntityFilter",
  "TransactionEntityFilter",
  "TimeTrackingEntityFilter",
  "AccountFilter",
  "TransactionAccountFilter",
  "ItemFilter",
  "TransactionItemFilter",
  "ClassFilter",
  "TransactionClassFilter",
  "CurrencyFilter",
  "SiteFilter",
]);

const LIST_ELEMENTS = new Set(["ListID", "TxnID", "FullName", "Name", "RefNumber"]);

/**
 * A random list query over `resource`'s filters with values drawn from `records` (the group's
 * records in full form, any order): one in five names records one by one (`ids`, names or
 * `refNumbers`, sometimes with one that does not exist, in another case or repeated), the others
 * combine up to three filter families; `limit` now and then.
 */
export function randomListQuery(
  resource: ResourceDefinition,
  records: readonly Json[],
  random: SeededRandom,
): ListQuery {
  const query: ListQuery = new Map();
  const byElement = filterFamilies(resource);
  const lists = [...byElement.keys()].filter((e) => LIST_ELEMENTS.has(e));
  if (records.length > 0 && lists.length > 0 && random.chance(0.2)) {
    const element = random.pick(lists);
    const param = byElement.get(element)?.[0];
    if (param !== undefined) fillNamed(resource, element, param, records, query, random, random.chance(0.25));
    if (byElement.has("IncludeLineItems") && random.chance(0.3)) query.set("includeLineItems", false);
    if (query.size > 0) return query;
  }
  const families = [...byElement.keys()].filter((e) => FAMILIES.has(e));
  const count = random.int(0, 3);
  for (let i = 0; i < count && families.length > 0 && records.length > 0; i++) {
    const element = random.pick(families);
    fill(resource, element, byElement.get(element) ?? [], records, query, random, undefined);
  }
  // A cursor group pages the live answer by `limit`: pages of 10 or more keep a walk short.
  if (resource.queryElements.has("MaxReturned") && random.chance(0.15))
    query.set("limit", resource.pages ? random.int(10, 60) : random.int(1, 40));
  return query;
}

/** The query string of a query (repeated keys for lists), as a client sends it. */
export function queryString(query: ReadonlyMap<string, ParamValue>): string {
  const search = new URLSearchParams();
  for (const [name, value] of query) {
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item));
  }
  return search.toString();
}

/** A group's filter parameters by the query element they fill. */
function filterFamilies(resource: ResourceDefinition): Map<string, FilterParam[]> {
  const byElement = new Map<string, FilterParam[]>();
  for (const param of listFilters(resource).params) {
    byElement.set(param.slot.name, [...(byElement.get(param.slot.name) ?? []), param]);
  }
  return byElement;
}

/**
 * Queries that each use one filter family of the group in every form it has (each match kind,
 * each balance operator, ranges open at either end or both…), `variants` of each, so that a run
 * covers every parameter whatever the random draws. Values come from `records` as in
 * {@link randomListQuery}.
 */
export function everyFilterQueries(
  resource: ResourceDefinition,
  records: readonly Json[],
  random: SeededRandom,
  variants = 6,
): ListQuery[] {
  const out: ListQuery[] = [];
  if (records.length === 0) return out;
  for (const [element, params] of filterFamilies(resource)) {
    const param = params[0];
    if (LIST_ELEMENTS.has(element) && param !== undefined) {
      for (let variant = 0; variant < variants; variant++) {
        const query: ListQuery = new Map();
        fillNamed(resource, element, param, records, query, random, variant % 2 === 1);
        if (query.size > 0) out.push(query);
      }
    }
    if (!FAMILIES.has(element)) continue;
    for (let variant = 0; variant < variants; variant++) {
      const query: ListQuery = new Map();
      fill(resource, element, params, records, query, random, variant);
      if (query.size > 0) out.push(query);
    }
  }
  return out;
}
