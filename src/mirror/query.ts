import { isServiceError, ServiceError } from "../errors/service-error.ts";
import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import { listFilters, type FilterParam, type ParamValue } from "../ledger/typed/filters.ts";
import type { RequestWarning } from "../ledger/typed/actions.ts";
import { errorCodeForStatus } from "../ledger/xml/status-codes.ts";
import {
  balanceField,
  predicateOf,
  REF_FILTERS,
  type MirrorQueryContext,
  type Predicate,
} from "./query-filters.ts";
import { inAnswerOrder, isLineFamily, labelOf, recordKind, type Json } from "./records.ts";
import { storedObjectNames } from "./ref-targets.ts";

export type { Json } from "./records.ts";
export type { MirrorQueryContext } from "./query-filters.ts";
export { boundSeconds } from "./query-filters.ts";
export { inAnswerOrder } from "./records.ts";

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

export type MirrorAnswer =
  { kind: "records"; records: Json[]; warnings?: RequestWarning[] } | { kind: "error"; error: ServiceError };

/** How the mirror treats a query element: answers it exactly, or leaves the call to the application. */
type Support = "exact" | ((value: ParamValue, resource: ResourceDefinition) => boolean);

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
  const pool = context.ordered ? records : inAnswerOrder(resource, records);
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
