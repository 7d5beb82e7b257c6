import Big from "big.js";
import { isServiceError, ServiceError } from "../errors/service-error.ts";
import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import type { Field, Shape } from "../ledger/resources/shape.ts";
import { listFilters, type FilterParam, type ParamValue } from "../ledger/typed/filters.ts";
import type { RequestWarning } from "../ledger/typed/actions.ts";
import { errorCodeForStatus } from "../ledger/xml/status-codes.ts";
import { refTargetObjects, storedObjectNames } from "./ref-targets.ts";

/**
 * The mirror's query evaluator (issue 26): what the application answers to a typed list query,
 * computed from a copy of the group's records as the typed API returns them (read with
 * `status=all` and `includeLineItems=true`). Pure functions over JSON records, no store.
 *
 * Every rule is keyed by the query element a parameter fills (`listFilters(resource)`), so a group
 * gets exactly the rules of the filters its query offers, with no code per group:
 *
 * - `ids` (`ListID`/`TxnID`): the records in the order the IDs were given, each once; an ID that is
 *   not a record of the group makes the whole answer the application's error 3120
 *   (LEDGER_OBJECT_NOT_FOUND, naming the first such ID in the order given), never a partial list.
 * - `names`/`fullNames` (`FullName`/`Name`) and `refNumbers` (`RefNumber`): case-insensitive, in the
 *   order given, each record once; a list object is named by its full name, a transaction by its
 *   reference number, and of several transactions sharing a number only the first created is found.
 *   Names not found leave the found records and add one LEDGER_WARNING (status 500) naming the
 *   first missing one; none found is an empty list with that warning. These lists replace the other
 *   filters, status included (inactive records are returned).
 * - `status`: list groups default to active only (a record without `isActive` counts as active);
 *   transactions have no status.
 * - `updatedAfter`/`updatedBefore`: inclusive, whole seconds; a value without an offset is the
 *   company file's local time ({@link MirrorQueryContext.utcOffsetMinutes}); a date alone is its
 *   first second (`updatedAfter`) or its last (`updatedBefore`).
 * - `transactionDateFrom`/`transactionDateTo`: inclusive dates.
 * - `nameContains`/`StartsWith`/`EndsWith` and `refNumber…` matches: case-insensitive on the full
 *   name (list objects) or the reference number (transactions); `nameFrom`/`nameTo`,
 *   `refNumberFrom`/`refNumberTo`: inclusive, compared lower-cased in UTF-16 code unit order.
 * - Entity, account, item, class, currency and site IDs: a record matches when one of its
 *   references that may name that kind of object (`ARAccountRef` is an account, `CustomerMsgRef` is
 *   not a customer; never `ParentRef`) names a listed ID: top-level references for entity, account
 *   (`AccountFilter`) and currency filters, top level and lines for the transaction account, item,
 *   class and site filters.
 * - `paymentStatus`: paid means nothing left open (`isPaid`); `totalBalance…`: decimal comparison of
 *   `totalBalance` (`balance` in groups without sub-records, such as vendors); `accountType`/`paymentMethodType`: the record's field of that name.
 * - `includeLineItems=false` answers every line family empty, as the application leaves lines out.
 * - Text values are compared trimmed, as the application reads its request's text.
 *
 * Answer order: list objects by lower-cased full name (code unit order), transactions in creation
 * order, which is the numeric order of the counter before the `-` of their ID.
 */

/** A record as the typed API returns it. */
export type Json = Record<string, unknown>;

export interface MirrorQueryContext {
  /** The company file's UTC offset in minutes east (read from its records' timestamps). */
  utcOffsetMinutes: number;
  /** Now, in milliseconds since the epoch. */
  nowMs: number;
}

export type MirrorAnswer =
  { kind: "records"; records: Json[]; warnings?: RequestWarning[] } | { kind: "error"; error: ServiceError };

/** How the mirror treats a query element: answers it exactly, or leaves the call to the application. */
type Support = "exact" | ((value: ParamValue, resource: ResourceDefinition) => boolean);

/** Reference filters: the object types they select and whether line references count. */
const REF_FILTERS: Readonly<
  Record<string, { kinds: (names: readonly string[]) => string[]; lines: boolean }>
> = {
  EntityFilter: { kinds: entities, lines: false },
  TransactionEntityFilter: { kinds: entities, lines: false },
  TimeTrackingEntityFilter: { kinds: entities, lines: false },
  AccountFilter: { kinds: () => ["Account"], lines: false },
  TransactionAccountFilter: { kinds: () => ["Account"], lines: true },
  ItemFilter: { kinds: (names) => names.filter((n) => n.startsWith("Item")), lines: true },
  TransactionItemFilter: { kinds: (names) => names.filter((n) => n.startsWith("Item")), lines: true },
  ClassFilter: { kinds: () => ["Class"], lines: true },
  TransactionClassFilter: { kinds: () => ["Class"], lines: true },
  CurrencyFilter: { kinds: () => ["Currency"], lines: false },
  SiteFilter: { kinds: () => ["InventorySite"], lines: true },
};

function entities(): string[] {
  return ["Customer", "Vendor", "Employee", "OtherName"];
}

/** Query elements the mirror answers, by element name; any other element's parameters go live. */
const SUPPORT: Readonly<Record<string, Support>> = {
  ListID: "exact",
  TxnID: "exact",
  FullName: "exact",
  Name: "exact",
  RefNumber: "exact",
  ActiveStatus: "exact",
  FromModifiedDate: "exact",
  ModifiedDateRangeFilter: "exact",
  TransactionModifiedDateRangeFilter: "exact",
  TxnDateRangeFilter: "exact",
  TransactionDateRangeFilter: "exact",
  NameFilter: "exact",
  NameRangeFilter: "exact",
  RefNumberFilter: "exact",
  RefNumberRangeFilter: "exact",
  PaidStatus: "exact",
  TotalBalanceFilter: (_, resource) => balanceField(resource) !== null,
  AccountType: "exact",
  PaymentMethodType: "exact",
  IncludeLineItems: "exact",
  // The copy holds no linked transactions and no component lines: only their absence is exact.
  IncludeLinkedTxns: (value) => value === false,
  IncludeComponentLineItems: (value) => value === false,
  ...Object.fromEntries(Object.keys(REF_FILTERS).map((name) => [name, "exact" as const])),
};

/**
 * Groups whose answers the mirror cannot order from their records: a transaction view that is not
 * one stored object type (`transactions`) lists each type in the application's type order, which
 * its records do not carry.
 */
function groupUnsupported(resource: ResourceDefinition): boolean {
  return resource.entry.kind === "transaction" && !storedObjectNames().includes(resource.entry.object);
}

const ENGINE_PARAMS = new Set(["limit", "cursor"]);

function paramsByName(resource: ResourceDefinition): Map<string, FilterParam> {
  return new Map(listFilters(resource).params.map((p) => [p.name, p]));
}

/**
 * The first query parameter the mirror cannot answer exactly (that call goes live), or null.
 * `limit` and `cursor` are supported (paging is the caller's). A group whose order the mirror
 * cannot reproduce (the mixed transaction view) names its first parameter, or `resource` when the
 * query has none.
 */
export function unsupportedParam(
  resource: ResourceDefinition,
  query: ReadonlyMap<string, ParamValue>,
): string | null {
  const params = paramsByName(resource);
  for (const [name, value] of query) {
    if (ENGINE_PARAMS.has(name)) continue;
    if (groupUnsupported(resource)) return name;
    const param = params.get(name);
    const support = param === undefined ? undefined : SUPPORT[param.slot.name];
    if (support === undefined) return name;
    if (support !== "exact" && !support(value, resource)) return name;
  }
  return groupUnsupported(resource) ? "resource" : null;
}

// ---------------------------------------------------------------------------------------------
// record fields

function text(record: Json, field: string): string {
  const value = record[field];
  return typeof value === "string" ? value : "";
}

/** The label name filters compare: the full name of a list object, the reference number of a transaction. */
function labelOf(resource: ResourceDefinition, record: Json): string {
  if (resource.entry.kind === "transaction") return text(record, "refNumber");
  const fullName = record.fullName;
  return typeof fullName === "string" ? fullName : text(record, "name");
}

/** Creation order of a transaction: the counter before the `-` of its ID. */
function creationCounter(record: Json): number {
  const id = text(record, "id");
  const counter = Number.parseInt(id.split("-")[0] ?? "", 16);
  return Number.isNaN(counter) ? Number.MAX_SAFE_INTEGER : counter;
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sorts records into the application's answer order (returns a new array). */
export function inAnswerOrder(resource: ResourceDefinition, records: readonly Json[]): Json[] {
  if (resource.entry.kind === "transaction") {
    return [...records].sort((a, b) => creationCounter(a) - creationCounter(b));
  }
  const keyed = records.map((record) => [labelOf(resource, record).toLowerCase(), record] as const);
  keyed.sort((a, b) => compareCodeUnits(a[0], b[0]) || creationCounter(a[1]) - creationCounter(b[1]));
  return keyed.map(([, record]) => record);
}

/** The stored object (`ItemService`) and output shape of a record, from its `objectType`. */
function recordKind(resource: ResourceDefinition, record: Json): { object: string; shape: Shape } {
  for (const [ret, entry] of resource.records) {
    if (entry.objectType === record.objectType || resource.records.size === 1)
      return { object: ret.replace(/Ret$/, ""), shape: entry.shape };
  }
  return { object: resource.entry.object, shape: resource.output };
}

function isLineFamily(field: Field): boolean {
  return field.form === "object" && (field.shape?.fields.some((f) => f.slot.name === "TxnLineID") ?? false);
}

/** IDs of the references of `fields` (top level of `holder`) that may name one of `kinds`. */
function refIds(
  holder: Json,
  fields: readonly Field[],
  owner: string,
  kinds: readonly string[],
  out: string[],
): void {
  for (const field of fields) {
    if (field.form !== "ref" || field.slot.name === "ParentRef") continue;
    if (!refTargetObjects(field.slot.name, owner).some((o) => kinds.includes(o))) continue;
    const values = field.array ? holder[field.json] : [holder[field.json]];
    if (!Array.isArray(values)) continue;
    for (const value of values) {
      const id = (value as { id?: unknown } | null)?.id;
      if (typeof id === "string") out.push(id);
    }
  }
}

function referencedIds(
  resource: ResourceDefinition,
  record: Json,
  kinds: readonly string[],
  lines: boolean,
): string[] {
  const { object, shape } = recordKind(resource, record);
  const out: string[] = [];
  refIds(record, shape.fields, object, kinds, out);
  if (!lines) return out;
  for (const family of shape.fields.filter(isLineFamily)) {
    const value = record[family.json];
    const items = Array.isArray(value) ? value : value === null || value === undefined ? [] : [value];
    for (const line of items as Json[]) refIds(line, family.shape?.fields ?? [], object, kinds, out);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// predicates

type Predicate = (record: Json) => boolean;

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:([+-]\d{2}):(\d{2}))?)?)?)?$/;

/**
 * Epoch seconds of a modified-date bound as the application reads it: local time of the file
 * without an offset; missing parts are the start (`end` false) or the end of the range.
 */
export function boundSeconds(value: string, utcOffsetMinutes: number, end: boolean): number | undefined {
  const m = DATE_TIME.exec(value);
  if (m === null) return undefined;
  const part = (index: number, start: number, last: number): number =>
    m[index] === undefined ? (end ? last : start) : Number(m[index]);
  const utc =
    Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), part(4, 0, 23), part(5, 0, 59), part(6, 0, 59)) /
    1000;
  const offset =
    m[7] === undefined
      ? utcOffsetMinutes
      : (m[7].startsWith("-") ? -1 : 1) * (Math.abs(Number(m[7])) * 60 + Number(m[8]));
  return utc - offset * 60;
}

function updatedSeconds(record: Json): number {
  return Math.floor(Date.parse(text(record, "updatedAt")) / 1000);
}

function matchText(suffix: string, value: string, wanted: string): boolean {
  const v = value.toLowerCase();
  const w = wanted.toLowerCase();
  if (suffix === "StartsWith") return v.startsWith(w);
  if (suffix === "EndsWith") return v.endsWith(w);
  return v.includes(w);
}

function inRange(value: string, from: ParamValue | undefined, to: ParamValue | undefined): boolean {
  const v = value.toLowerCase();
  return (
    (typeof from !== "string" || v >= from.toLowerCase()) && (typeof to !== "string" || v <= to.toLowerCase())
  );
}

/**
 * The field holding what the total balance filter compares: `totalBalance` (own balance plus
 * everything below the record), or `balance` where a record can have nothing below it.
 */
function balanceField(resource: ResourceDefinition): string | null {
  const fields = resource.output.fields;
  const total = fields.find((f) => f.slot.name === "TotalBalance");
  if (total) return total.json;
  if (fields.some((f) => f.slot.name === "ParentRef")) return null;
  return fields.find((f) => f.slot.name === "Balance")?.json ?? null;
}

const BALANCE: Readonly<Record<string, (value: Big, amount: Big) => boolean>> = {
  totalBalance: (v, a) => v.eq(a),
  totalBalanceGreaterThan: (v, a) => v.gt(a),
  totalBalanceGreaterThanOrEqualTo: (v, a) => v.gte(a),
  totalBalanceLessThan: (v, a) => v.lt(a),
  totalBalanceLessThanOrEqualTo: (v, a) => v.lte(a),
};

function big(value: unknown): Big {
  try {
    return new Big(typeof value === "string" || typeof value === "number" ? value : 0);
  } catch {
    return new Big(0);
  }
}

/** The predicate of one query element, from the parameters that fill it. */
function predicateOf(
  resource: ResourceDefinition,
  element: string,
  values: ReadonlyMap<string, ParamValue>,
  params: ReadonlyMap<string, FilterParam>,
  context: MirrorQueryContext,
): Predicate | null {
  const get = (name: string): ParamValue | undefined => values.get(name);
  switch (element) {
    case "ActiveStatus": {
      const status = get("status") ?? "active";
      if (status === "all") return null;
      return (r) => (r.isActive !== false) === (status === "active");
    }
    case "FromModifiedDate":
    case "ModifiedDateRangeFilter":
    case "TransactionModifiedDateRangeFilter": {
      const bound = (name: string, end: boolean): number | undefined => {
        const value = get(name);
        const kind = params.get(name)?.kind;
        if (typeof value !== "string" || kind === undefined) return undefined;
        return boundSeconds(kind.toXml(value), context.utcOffsetMinutes, end);
      };
      const from = bound("updatedAfter", false);
      const to = bound("updatedBefore", true);
      return (r) => {
        const seconds = updatedSeconds(r);
        return (from === undefined || seconds >= from) && (to === undefined || seconds <= to);
      };
    }
    case "TxnDateRangeFilter":
    case "TransactionDateRangeFilter": {
      const from = get("transactionDateFrom");
      const to = get("transactionDateTo");
      return (r) => {
        const date = text(r, "transactionDate");
        return (typeof from !== "string" || date >= from) && (typeof to !== "string" || date <= to);
      };
    }
    case "NameFilter":
    case "RefNumberFilter": {
      const prefix = element === "NameFilter" ? "name" : "refNumber";
      const suffix = ["Contains", "StartsWith", "EndsWith"].find((s) => values.has(`${prefix}${s}`));
      if (suffix === undefined) return null;
      const wanted = String(get(`${prefix}${suffix}`));
      return (r) => matchText(suffix, labelOf(resource, r), wanted);
    }
    case "NameRangeFilter":
      return (r) => inRange(labelOf(resource, r), get("nameFrom"), get("nameTo"));
    case "RefNumberRangeFilter":
      return (r) => inRange(labelOf(resource, r), get("refNumberFrom"), get("refNumberTo"));
    case "PaidStatus": {
      const status = get("paymentStatus");
      if (status === "paid") return (r) => r.isPaid === true;
      if (status === "not_paid") return (r) => r.isPaid !== true;
      return null;
    }
    case "TotalBalanceFilter": {
      const name = Object.keys(BALANCE).find((n) => values.has(n));
      const compare = name === undefined ? undefined : BALANCE[name];
      if (name === undefined || compare === undefined) return null;
      const amount = big(get(name));
      const field = balanceField(resource);
      if (field === null) return null;
      return (r) => compare(big(r[field]), amount);
    }
    case "AccountType":
    case "PaymentMethodType": {
      const param = [...params.values()].find((p) => p.slot.name === element);
      const wanted = param === undefined ? undefined : get(param.name);
      const field = resource.output.fields.find((f) => f.slot.name === element)?.json;
      if (wanted === undefined || field === undefined) return null;
      return (r) => r[field] === wanted;
    }
    default: {
      const rule = REF_FILTERS[element];
      if (rule === undefined) return null;
      const param = [...params.values()].find((p) => p.slot.name === element && values.has(p.name));
      const ids = param === undefined ? undefined : get(param.name);
      if (!Array.isArray(ids)) return null;
      const kinds = rule.kinds(storedObjectNames());
      return (r) => referencedIds(resource, r, kinds, rule.lines).some((id) => ids.includes(id));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// the answer

const LIST_ELEMENTS = ["ListID", "TxnID", "FullName", "Name", "RefNumber"] as const;

/** Status 3120, as the application answers an ID it does not have. */
function notFound(id: string): ServiceError {
  return new ServiceError(errorCodeForStatus(3120), {
    integrationCode: "3120",
    message: `The application answered: Object "${id}" specified in the request cannot be found.  Ledger error message: Invalid argument.  The specified record does not exist in the list.`,
    param: null,
  });
}

/** Status 500, as the application answers names it did not all find. */
function namesMissing(name: string): RequestWarning {
  return {
    code: "LEDGER_WARNING",
    statusCode: 500,
    message: `The query request has not been fully completed. There was a required element ("${name}") that could not be found in the ledger.`,
    path: null,
  };
}

/** Records named one by one (ids, names, refNumbers), in the order named. */
function named(
  resource: ResourceDefinition,
  pool: readonly Json[],
  element: (typeof LIST_ELEMENTS)[number],
  wanted: readonly string[],
): MirrorAnswer {
  const records: Json[] = [];
  if (element === "ListID" || element === "TxnID") {
    for (const id of wanted) {
      const record = pool.find((r) => r.id === id);
      if (record === undefined) return { kind: "error", error: notFound(id) };
      if (!records.includes(record)) records.push(record);
    }
    return { kind: "records", records };
  }
  let missing: string | undefined;
  for (const name of wanted) {
    const lower = name.toLowerCase();
    const found = pool.find((r) => labelOf(resource, r).toLowerCase() === lower);
    if (found === undefined) missing ??= name;
    else if (!records.includes(found)) records.push(found);
  }
  return missing === undefined
    ? { kind: "records", records }
    : { kind: "records", records, warnings: [namesMissing(missing)] };
}

/** The record as this query renders it: without lines when `includeLineItems=false`. */
function rendered(resource: ResourceDefinition, record: Json, query: ReadonlyMap<string, ParamValue>): Json {
  if (query.get("includeLineItems") !== false) return record;
  const out: Json = { ...record };
  for (const family of recordKind(resource, record).shape.fields.filter(isLineFamily)) {
    out[family.json] = family.array ? [] : null;
  }
  return out;
}

function trimmed(value: ParamValue): ParamValue {
  if (typeof value === "string") return value.trim();
  return Array.isArray(value) ? value.map((item) => item.trim()) : value;
}

/**
 * What the application answers for this query, before paging: the matching records in answer
 * order, rendered as it renders them for this query, or the error its answer becomes.
 *
 * `records` is every mirrored record of the group in full form. Parameters that cannot be combined
 * give the API's own 400 INVALID_PARAMETER. `limit` is applied here only where the application
 * applies it as `MaxReturned` to one whole answer: groups without cursors, and not to `ids`/names
 * lists (which ignore it). Groups with cursors are returned whole; the caller pages them
 * (page size `limit ?? 150`). `cursor` is the caller's. Call {@link unsupportedParam} first: an
 * unsupported parameter is ignored here.
 */
export function answer(
  resource: ResourceDefinition,
  records: readonly Json[],
  query: ReadonlyMap<string, ParamValue>,
  context: MirrorQueryContext,
): MirrorAnswer {
  // The application reads its request's leaf text trimmed: `nameContains= ve` looks for `ve`.
  const filters = new Map(
    [...query]
      .filter(([name]) => !ENGINE_PARAMS.has(name))
      .map(([name, value]) => [name, trimmed(value)] as const),
  );
  try {
    listFilters(resource).build(filters);
  } catch (error) {
    if (isServiceError(error)) return { kind: "error", error };
    throw error;
  }
  const params = paramsByName(resource);
  const pool = inAnswerOrder(resource, records);
  const render = (list: readonly Json[]): Json[] => list.map((r) => rendered(resource, r, query));
  for (const [name, param] of params) {
    const value = filters.get(name);
    const element = LIST_ELEMENTS.find((e) => e === param.slot.name);
    if (element === undefined || !Array.isArray(value)) continue;
    const found = named(resource, pool, element, value);
    return found.kind === "error" ? found : { ...found, records: render(found.records) };
  }
  const elements = new Set([...params.values()].map((p) => p.slot.name));
  const predicates: Predicate[] = [];
  // Lists default to active only, even where the query has no status to change it.
  if (resource.entry.kind === "list" && !elements.has("ActiveStatus"))
    predicates.push((r) => r.isActive !== false);
  for (const element of elements) {
    const predicate = predicateOf(resource, element, filters, params, context);
    if (predicate !== null) predicates.push(predicate);
  }
  let selected = pool.filter((r) => predicates.every((p) => p(r)));
  const limit = query.get("limit");
  if (!resource.pages && typeof limit === "number") selected = selected.slice(0, limit);
  return { kind: "records", records: render(selected) };
}
