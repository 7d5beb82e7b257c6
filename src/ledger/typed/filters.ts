import { ServiceError } from "../../errors/service-error.ts";
import { errorFromZod } from "../../errors/from-zod.ts";
import {
  amount,
  boolean,
  date,
  dateOrDateTime,
  enumOf,
  id,
  integer,
  text as textKind,
  type AnyFieldKind,
} from "../fields.ts";
import type { ResourceDefinition } from "../resources/definitions.ts";
import { jsonEnumValue, nameTable } from "../resources/names.ts";
import { ledgerSchema } from "../xml/schema.ts";
import { excludes, slotsOf, type Slot } from "../xml/slots.ts";
import { leaf, node, type XmlElement } from "../xml/tree.ts";

/**
 * List filters (spec: "List parameters (query)"), derived from each group's query request: every
 * filter the application's query offers becomes query parameters by one rule per filter element
 * (ID lists, name and reference-number matches and ranges, modified and transaction dates, entity,
 * account, class, item and currency filters, paid and active status…). Filters that sit in different
 * alternatives of the query's schema choice cannot be combined (400 INVALID_PARAMETER naming both),
 * so `ids` excludes every other filter exactly as the application does.
 *
 * A parameter's value is checked by a field kind (`ledger/fields.ts`), the same vocabulary as body
 * fields: the kind reads the query text as its JSON value, checks it with its schema (a date must
 * exist in the calendar, text must fit the code page and its length…) and gives the OpenAPI schema.
 */

/** Query strings carry text: a parameter's kind reads it ({@link AnyFieldKind.fromQuery}) and checks it. */
export type ParamKind = AnyFieldKind;

/** Text filter values: 1 to `max` characters of the application's code page. */
export const textParam = (max = 4095): ParamKind => textKind({ max, min: 1 });
/** An application record ID (1 to 36 characters). */
export const idParam: ParamKind = id();
/** A calendar date. */
export const dateParam: ParamKind = date();
/** A date or a date-time (modified-date filters). */
export const dateOrDateTimeParam: ParamKind = dateOrDateTime();
export const booleanParam: ParamKind = boolean();
export const amountParam: ParamKind = amount();
export const integerParam = (min: number, max: number): ParamKind => integer({ min, max });
/** A closed enumeration of JSON values (an empty list reads as text). */
export function enumParam(values: readonly string[]): ParamKind {
  const [first, ...rest] = values;
  return first === undefined ? textParam() : enumOf([first, ...rest]);
}

export interface FilterParam {
  readonly name: string;
  readonly kind: ParamKind;
  /** An array (repeated query key), 1 to 100 items. */
  readonly array: boolean;
  /** The query cannot be sent without it (its element is required and has no default). */
  readonly required?: boolean;
  /** The query element the parameter fills (used for the combination rules). */
  readonly slot: Slot;
  readonly description: string;
}

/** A parsed parameter value. */
export type ParamValue = string | number | boolean | string[];

export interface FilterRule {
  /** The top-level element of the query request this rule fills. */
  readonly element: string;
  /** The rule writes its element even when no parameter is given (a required element has a default). */
  readonly fillsDefault?: boolean;
  params(context: RuleContext): Omit<FilterParam, "slot">[];
  /** Builds the element from the parameters present (null when none of them is). */
  build(values: ReadonlyMap<string, ParamValue>, context: RuleContext): XmlElement | XmlElement[] | null;
}

export interface RuleContext {
  /** The group whose list this is (reports: null). */
  readonly resource: ResourceDefinition | null;
  readonly slot: Slot;
}

const MAX_ITEMS = 100;
const MATCH = [
  ["Contains", "Contains"],
  ["StartsWith", "StartsWith"],
  ["EndsWith", "EndsWith"],
] as const;

const text = textParam;
const idKind: ParamKind = idParam;

/** `ListID`/`FullName` style filter aggregates: `{prefix}Ids` → `<Element><ListID>…`. */
export function idsFilter(element: string, param: string, description: string): FilterRule {
  return {
    element,
    params: () => [{ name: param, kind: idKind, array: true, description }],
    build: (values) => {
      const ids = values.get(param);
      if (!Array.isArray(ids)) return null;
      return node(
        element,
        ids.map((id) => leaf("ListID", id)),
      );
    },
  };
}

export function simpleList(element: string, param: string, kind: ParamKind, description: string): FilterRule {
  return {
    element,
    params: () => [{ name: param, kind, array: true, description }],
    build: (values) => {
      const items = values.get(param);
      return Array.isArray(items) ? items.map((item) => leaf(element, item)) : null;
    },
  };
}

export function enumFilter(element: string, param: string, description: string): FilterRule {
  const values = (context: RuleContext): string[] =>
    (context.slot.type.kind === "simple" ? (context.slot.type.entry.e ?? []) : []).map((v) =>
      jsonEnumValue(nameTable(), element, v),
    );
  return {
    element,
    params: (context) => [{ name: param, kind: enumParam(values(context)), array: false, description }],
    build: (given, context) => {
      const value = given.get(param);
      if (typeof value !== "string") return null;
      const xml = context.slot.type.kind === "simple" ? (context.slot.type.entry.e ?? []) : [];
      const index = values(context).indexOf(value);
      return leaf(element, xml[index] ?? value);
    },
  };
}

export function dateRange(
  element: string,
  from: [string, string],
  to: [string, string],
  kind: ParamKind,
  wrap: string | null,
): FilterRule {
  return {
    element,
    params: () => [
      {
        name: from[1],
        kind,
        array: false,
        description: `On or after this ${kind.kind === "date" ? "date" : "date or date-time"}.`,
      },
      {
        name: to[1],
        kind,
        array: false,
        description: `On or before this ${kind.kind === "date" ? "date" : "date or date-time"}.`,
      },
    ],
    build: (values) => {
      const children: XmlElement[] = [];
      const start = values.get(from[1]);
      const end = values.get(to[1]);
      if (typeof start === "string") children.push(leaf(from[0], kind.toXml(start)));
      if (typeof end === "string") children.push(leaf(to[0], kind.toXml(end)));
      if (children.length === 0) return null;
      return wrap === null ? children : node(wrap, children);
    },
  };
}

function matchFilter(element: string, valueElement: string, prefix: string): FilterRule {
  return {
    element,
    params: () =>
      MATCH.map(([suffix]) => ({
        name: `${prefix}${suffix}`,
        kind: text(),
        array: false,
        description: `Case-insensitive: ${prefix === "name" ? "names" : "reference numbers"} that ${suffix === "Contains" ? "contain" : suffix === "StartsWith" ? "start with" : "end with"} this text.`,
      })),
    build: (values) => {
      const present = MATCH.filter(([suffix]) => values.has(`${prefix}${suffix}`));
      const [first, second] = present;
      if (!first) return null;
      if (second) {
        throw new ServiceError("INVALID_PARAMETER", {
          param: `${prefix}${second[0]}`,
          message: `\`${prefix}${first[0]}\` and \`${prefix}${second[0]}\` cannot be combined: send only one of them.`,
        });
      }
      return node(element, [
        leaf("MatchCriterion", first[1]),
        leaf(valueElement, String(values.get(`${prefix}${first[0]}`))),
      ]);
    },
  };
}

function rangeFilter(element: string, from: string, to: string, prefix: string): FilterRule {
  return {
    element,
    params: () => [
      {
        name: `${prefix}From`,
        kind: text(),
        array: false,
        description: "Range start (inclusive), in the application's sort order.",
      },
      {
        name: `${prefix}To`,
        kind: text(),
        array: false,
        description: "Range end (inclusive), in the application's sort order.",
      },
    ],
    build: (values) => {
      const children: XmlElement[] = [];
      const start = values.get(`${prefix}From`);
      const end = values.get(`${prefix}To`);
      if (typeof start === "string") children.push(leaf(from, start));
      if (typeof end === "string") children.push(leaf(to, end));
      return children.length === 0 ? null : node(element, children);
    },
  };
}

export function booleanFlag(element: string, param: string, description: string): FilterRule {
  return {
    element,
    params: () => [{ name: param, kind: booleanParam, array: false, description }],
    build: (values) => {
      const value = values.get(param);
      return typeof value === "boolean" ? leaf(element, value ? "true" : "false") : null;
    },
  };
}

const BALANCE_OPERATORS = [
  ["totalBalance", "Equal"],
  ["totalBalanceGreaterThan", "GreaterThan"],
  ["totalBalanceGreaterThanOrEqualTo", "GreaterThanEqual"],
  ["totalBalanceLessThan", "LessThan"],
  ["totalBalanceLessThanOrEqualTo", "LessThanEqual"],
] as const;

/** The entity filter's parameter name per group (the market's names). */
const ENTITY_PARAM: Readonly<Record<string, string>> = {
  "bill-check-payments": "vendorIds",
  "bill-credit-card-payments": "vendorIds",
  bills: "vendorIds",
  "item-receipts": "vendorIds",
  "vendor-credits": "vendorIds",
  "purchase-orders": "vendorIds",
  "sales-tax-payment-checks": "vendorIds",
  checks: "payeeIds",
  "credit-card-charges": "payeeIds",
  "credit-card-credits": "payeeIds",
  deposits: "entityIds",
  "journal-entries": "entityIds",
  "time-tracking-activities": "entityIds",
  transactions: "entityIds",
};

function entityParam(context: RuleContext): string {
  return ENTITY_PARAM[context.resource?.entry.path ?? ""] ?? "customerIds";
}

const RULES: readonly FilterRule[] = [
  // ID, name and number lists: each excludes every other filter (schema choice).
  simpleList(
    "ListID",
    "ids",
    idKind,
    "Return only these records (1 to 100 IDs); every other filter is excluded and `limit` is ignored.",
  ),
  simpleList(
    "TxnID",
    "ids",
    idKind,
    "Return only these records (1 to 100 IDs); every other filter is excluded and `limit` is ignored.",
  ),
  {
    element: "FullName",
    params: (context) => [
      {
        name: context.resource?.output.fields.some((f) => f.json === "fullName") ? "fullNames" : "names",
        kind: text(),
        array: true,
        description:
          "Return only records with these names (case-insensitive, 1 to 100); every other filter is excluded.",
      },
    ],
    build: (values) => {
      const names = values.get("fullNames") ?? values.get("names");
      return Array.isArray(names) ? names.map((name) => leaf("FullName", name)) : null;
    },
  },
  {
    element: "Name",
    params: () => [
      {
        name: "names",
        kind: text(),
        array: true,
        description:
          "Return only records with these names (case-insensitive, 1 to 100); every other filter is excluded.",
      },
    ],
    build: (values) => {
      const names = values.get("names");
      return Array.isArray(names) ? names.map((name) => leaf("Name", name)) : null;
    },
  },
  simpleList(
    "RefNumber",
    "refNumbers",
    text(),
    "Return only records with these reference numbers (case-insensitive, 1 to 100); every other filter is excluded.",
  ),
  {
    element: "ActiveStatus",
    fillsDefault: true,
    params: () => [
      {
        name: "status",
        kind: enumParam(["active", "inactive", "all"]),
        array: false,
        description: "Active state; default `active`.",
      },
    ],
    build: (values) => {
      const status = values.get("status") ?? "active";
      return leaf(
        "ActiveStatus",
        status === "all" ? "All" : status === "inactive" ? "InactiveOnly" : "ActiveOnly",
      );
    },
  },
  dateRange(
    "FromModifiedDate",
    ["FromModifiedDate", "updatedAfter"],
    ["ToModifiedDate", "updatedBefore"],
    dateOrDateTimeParam,
    null,
  ),
  // Written by the rule above (both ends of the range are adjacent in every query).
  { element: "ToModifiedDate", params: () => [], build: () => null },
  dateRange(
    "ModifiedDateRangeFilter",
    ["FromModifiedDate", "updatedAfter"],
    ["ToModifiedDate", "updatedBefore"],
    dateOrDateTimeParam,
    "ModifiedDateRangeFilter",
  ),
  dateRange(
    "TransactionModifiedDateRangeFilter",
    ["FromModifiedDate", "updatedAfter"],
    ["ToModifiedDate", "updatedBefore"],
    dateOrDateTimeParam,
    "TransactionModifiedDateRangeFilter",
  ),
  dateRange(
    "TxnDateRangeFilter",
    ["FromTxnDate", "transactionDateFrom"],
    ["ToTxnDate", "transactionDateTo"],
    dateParam,
    "TxnDateRangeFilter",
  ),
  dateRange(
    "TransactionDateRangeFilter",
    ["FromTxnDate", "transactionDateFrom"],
    ["ToTxnDate", "transactionDateTo"],
    dateParam,
    "TransactionDateRangeFilter",
  ),
  dateRange(
    "DeletedDateRangeFilter",
    ["FromDeletedDate", "deletedAfter"],
    ["ToDeletedDate", "deletedBefore"],
    dateOrDateTimeParam,
    "DeletedDateRangeFilter",
  ),
  matchFilter("NameFilter", "Name", "name"),
  rangeFilter("NameRangeFilter", "FromName", "ToName", "name"),
  matchFilter("RefNumberFilter", "RefNumber", "refNumber"),
  rangeFilter("RefNumberRangeFilter", "FromRefNumber", "ToRefNumber", "refNumber"),
  {
    element: "EntityFilter",
    params: (context) => [
      {
        name: entityParam(context),
        kind: idKind,
        array: true,
        description: "Only transactions of these entities (1 to 100 IDs).",
      },
    ],
    build: (values, context) => {
      const ids = values.get(entityParam(context));
      return Array.isArray(ids)
        ? node(
            "EntityFilter",
            ids.map((id) => leaf("ListID", id)),
          )
        : null;
    },
  },
  idsFilter("TransactionEntityFilter", "entityIds", "Only transactions of these entities (1 to 100 IDs)."),
  idsFilter("TimeTrackingEntityFilter", "entityIds", "Only activities of these entities (1 to 100 IDs)."),
  idsFilter("AccountFilter", "accountIds", "Only records of these accounts (1 to 100 IDs)."),
  idsFilter("TransactionAccountFilter", "accountIds", "Only transactions of these accounts (1 to 100 IDs)."),
  idsFilter("CurrencyFilter", "currencyIds", "Only records in these currencies (1 to 100 IDs)."),
  idsFilter("ClassFilter", "classIds", "Only records of these classes (1 to 100 IDs)."),
  idsFilter("TransactionClassFilter", "classIds", "Only transactions of these classes (1 to 100 IDs)."),
  idsFilter("ItemFilter", "itemIds", "Only records of these items (1 to 100 IDs)."),
  idsFilter("TransactionItemFilter", "itemIds", "Only transactions of these items (1 to 100 IDs)."),
  idsFilter("SiteFilter", "siteIds", "Only records of these inventory sites (1 to 100 IDs)."),
  {
    element: "ItemSiteFilter",
    params: () => [
      { name: "itemIds", kind: idKind, array: true, description: "Only these items (1 to 100 IDs)." },
      {
        name: "siteIds",
        kind: idKind,
        array: true,
        description: "Only these inventory sites (1 to 100 IDs).",
      },
    ],
    build: (values) => {
      const items = values.get("itemIds");
      const sites = values.get("siteIds");
      const children: XmlElement[] = [];
      if (Array.isArray(items))
        children.push(
          node(
            "ItemFilter",
            items.map((id) => leaf("ListID", id)),
          ),
        );
      if (Array.isArray(sites))
        children.push(
          node(
            "SiteFilter",
            sites.map((id) => leaf("ListID", id)),
          ),
        );
      return children.length === 0 ? null : node("ItemSiteFilter", children);
    },
  },
  {
    element: "TransactionTypeFilter",
    params: (context) => [
      {
        name: "transactionTypes",
        kind: enumParam(txnTypeValues(context).json),
        array: true,
        description: "Only these transaction types.",
      },
    ],
    build: (values, context) => {
      const chosen = values.get("transactionTypes");
      if (!Array.isArray(chosen)) return null;
      const { xml, json } = txnTypeValues(context);
      return node(
        "TransactionTypeFilter",
        chosen.map((v) => leaf("TxnTypeFilter", xml[json.indexOf(v)] ?? v)),
      );
    },
  },
  {
    element: "PayeeEntityRef",
    params: () => [
      {
        name: "vendorId",
        kind: idKind,
        array: false,
        description: "The vendor whose bills to pay (required).",
      },
    ],
    build: (values) => {
      const id = values.get("vendorId");
      return typeof id === "string" ? node("PayeeEntityRef", [leaf("ListID", id)]) : null;
    },
  },
  {
    element: "APAccountRef",
    params: () => [
      {
        name: "payablesAccountId",
        kind: idKind,
        array: false,
        description: "Only bills of this payables account.",
      },
    ],
    build: (values) => {
      const id = values.get("payablesAccountId");
      return typeof id === "string" ? node("APAccountRef", [leaf("ListID", id)]) : null;
    },
  },
  {
    element: "DueDate",
    params: () => [
      {
        name: "dueDate",
        kind: dateParam,
        array: false,
        description: "Only bills due on or before this date.",
      },
    ],
    build: (values) => {
      const date = values.get("dueDate");
      return typeof date === "string" ? leaf("DueDate", date) : null;
    },
  },
  {
    element: "ItemRef",
    params: () => [
      { name: "itemIds", kind: idKind, array: false, description: "Only records for this item (one ID)." },
    ],
    build: (values) => {
      const id = values.get("itemIds");
      return typeof id === "string" ? node("ItemRef", [leaf("ListID", id)]) : null;
    },
  },
  {
    element: "PaidStatus",
    params: () => [
      {
        name: "paymentStatus",
        kind: enumParam(["all", "paid", "not_paid"]),
        array: false,
        description: "Paid state; default all.",
      },
    ],
    build: (values) => {
      const status = values.get("paymentStatus");
      if (typeof status !== "string") return null;
      return leaf(
        "PaidStatus",
        status === "paid" ? "PaidOnly" : status === "not_paid" ? "NotPaidOnly" : "All",
      );
    },
  },
  {
    element: "TotalBalanceFilter",
    params: () =>
      BALANCE_OPERATORS.map(([name]) => ({
        name,
        kind: amountParam,
        array: false,
        description: "Compare the total balance (decimal string).",
      })),
    build: (values) => {
      const present = BALANCE_OPERATORS.filter(([name]) => values.has(name));
      const [first, second] = present;
      if (!first) return null;
      if (second) {
        throw new ServiceError("INVALID_PARAMETER", {
          param: second[0],
          message: `\`${first[0]}\` and \`${second[0]}\` cannot be combined: send only one of them.`,
        });
      }
      return node("TotalBalanceFilter", [
        leaf("Operator", first[1]),
        leaf("Amount", String(values.get(first[0]))),
      ]);
    },
  },
  enumFilter("AccountType", "accountType", "Only accounts of this type."),
  enumFilter("PaymentMethodType", "paymentMethodType", "Only payment methods of this type."),
  enumFilter("PendingStatus", "pendingStatus", "Pending state."),
  enumFilter("ItemTypeFilter", "itemType", "Only items of this type."),
  enumFilter("TransactionDetailLevelFilter", "detailLevel", "Detail level of the transactions returned."),
  enumFilter("TransactionPostingStatusFilter", "postingStatus", "Posting state."),
  enumFilter("TransactionPaidStatusFilter", "paymentStatus", "Paid state."),
  {
    element: "ListDelType",
    fillsDefault: true,
    params: (context) => [
      {
        name: "objectTypes",
        kind: enumParam(deletedTypes(context)),
        array: true,
        description: "The kinds of deleted records to return (required, 1 or more).",
      },
    ],
    build: (values, context) => deletedTypesElements("ListDelType", values.get("objectTypes"), context),
  },
  {
    element: "TxnDelType",
    fillsDefault: true,
    params: (context) => [
      {
        name: "transactionTypes",
        kind: enumParam(deletedTypes(context)),
        array: true,
        description: "The kinds of deleted transactions to return (required, 1 or more).",
      },
    ],
    build: (values, context) => deletedTypesElements("TxnDelType", values.get("transactionTypes"), context),
  },
  booleanFlag("IncludeLineItems", "includeLineItems", "Include line items (default true)."),
  booleanFlag(
    "IncludeLinkedTxns",
    "includeLinkedTransactions",
    "Include linked transactions (default false).",
  ),
  booleanFlag(
    "IncludeComponentLineItems",
    "includeComponentLineItems",
    "Include component lines (default true).",
  ),
];

function txnTypeValues(context: RuleContext): { xml: string[]; json: string[] } {
  const inner =
    context.slot.type.kind === "complex" ? slotsOf(ledgerSchema(), context.slot.typeKey)[0] : undefined;
  const xml = inner?.type.kind === "simple" ? (inner.type.entry.e ?? []) : [];
  return { xml, json: xml.map((v) => jsonEnumValue(nameTable(), "TxnTypeFilter", v)) };
}

function deletedTypes(context: RuleContext): string[] {
  const values = context.slot.type.kind === "simple" ? (context.slot.type.entry.e ?? []) : [];
  return values.map((v) => jsonEnumValue(nameTable(), context.slot.name, v));
}

function deletedTypesElements(
  element: string,
  given: ParamValue | undefined,
  context: RuleContext,
): XmlElement[] {
  const xml = context.slot.type.kind === "simple" ? (context.slot.type.entry.e ?? []) : [];
  const json = deletedTypes(context);
  const chosen = Array.isArray(given) ? given : json;
  return chosen.map((value) => leaf(element, xml[json.indexOf(value)] ?? value));
}

/** Query elements that are not filters: the engines set them themselves. */
const ENGINE_ELEMENTS = new Set(["MaxReturned", "IncludeRetElement", "OwnerID", "RefNumberCaseSensitive"]);

/** The filters of one group's list operation. */
export interface ListFilters {
  readonly params: readonly FilterParam[];
  /** Element names of the query the filters cannot reach (reported by the coverage script). */
  readonly unexposed: readonly string[];
  /** Builds the query's filter elements, in schema order, from parsed parameter values. */
  build(values: ReadonlyMap<string, ParamValue>): XmlElement[];
}

const cache = new Map<string, ListFilters>();

/** The filters of one group's list operation. */
export function listFilters(resource: ResourceDefinition): ListFilters {
  const cached = cache.get(resource.entry.path);
  if (cached) return cached;
  const filters = deriveFilters(resource.queryRequest, RULES, resource);
  cache.set(resource.entry.path, filters);
  return filters;
}

/**
 * Derives the filters of a query request from a rule table: each top-level element of the query
 * that a rule owns becomes that rule's parameters (elements no rule owns are reported unexposed). A
 * parameter is required when its element is and the rule has no default for it.
 */
export function deriveFilters(
  requestName: string,
  rules: readonly FilterRule[],
  resource: ResourceDefinition | null,
): ListFilters {
  const slots = slotsOf(ledgerSchema(), requestName);
  const params: FilterParam[] = [];
  const owners: { slot: Slot; rule: FilterRule; context: RuleContext; names: string[] }[] = [];
  const unexposed: string[] = [];
  for (const slot of slots) {
    if (ENGINE_ELEMENTS.has(slot.name)) continue;
    const rule = rules.find((r) => r.element === slot.name);
    if (!rule) {
      unexposed.push(slot.name);
      continue;
    }
    const context = { resource, slot };
    const required = slot.min > 0 && slot.choices.length === 0 && !rule.fillsDefault;
    const declared = rule.params(context).filter((p) => !params.some((known) => known.name === p.name));
    params.push(...declared.map((p) => ({ ...p, slot, ...(required ? { required: true } : {}) })));
    owners.push({ slot, rule, context, names: rule.params(context).map((p) => p.name) });
  }
  return {
    params,
    unexposed,
    build(values) {
      checkCombinations(params, values);
      const out: XmlElement[] = [];
      const usesIdList = ["ids", "fullNames", "names", "refNumbers"].some((n) => values.has(n));
      for (const owner of owners) {
        if (usesIdList && owner.slot.choices.length > 0 && !owner.names.some((n) => values.has(n))) continue;
        const built = owner.rule.build(values, owner.context);
        if (built === null) continue;
        out.push(...(Array.isArray(built) ? built : [built]));
      }
      return out;
    },
  };
}

/** Two parameters whose query elements are alternatives of one choice cannot be combined. */
function checkCombinations(params: readonly FilterParam[], values: ReadonlyMap<string, ParamValue>): void {
  const present = params.filter((p) => values.has(p.name));
  for (let i = 0; i < present.length; i++) {
    for (let j = i + 1; j < present.length; j++) {
      const a = present[i];
      const b = present[j];
      if (a && b && excludes(a.slot, b.slot)) {
        throw new ServiceError("INVALID_PARAMETER", {
          param: b.name,
          message: `\`${a.name}\` and \`${b.name}\` cannot be combined: send only one of them.`,
        });
      }
    }
  }
}

/** A query parameter as the core validates it: a filter, or an engine parameter such as `limit`. */
export type QueryParam = Pick<FilterParam, "name" | "kind" | "array" | "description"> & {
  readonly required?: boolean;
};

/**
 * Reads one parameter's raw value — query-string text (an array for a repeated key) or, in a batch
 * member's `query`, a JSON value — with its field kind. Errors name the parameter.
 */
export function parseParam(param: QueryParam, raw: unknown): ParamValue {
  const items = Array.isArray(raw) ? (raw as unknown[]) : [raw];
  if (!param.array && items.length > 1) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: param.name,
      message: `\`${param.name}\` may be given only once.`,
    });
  }
  if (param.array && (items.length < 1 || items.length > MAX_ITEMS)) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: param.name,
      message: `\`${param.name}\` takes 1 to ${MAX_ITEMS} values (repeat the query key for each).`,
    });
  }
  const values = items.map((item) => {
    const result = param.kind.schema.safeParse(typeof item === "string" ? param.kind.fromQuery(item) : item, {
      reportInput: true,
    });
    if (!result.success) throw errorFromZod(result.error, param.name);
    return result.data as string | number | boolean;
  });
  return param.array ? (values as string[]) : (values[0] as ParamValue);
}

/**
 * Validates a whole query against its parameters: unknown parameters (UNKNOWN_PARAMETER), each
 * value by its kind, required parameters (INVALID_PARAMETER), and, for filters, alternatives of one
 * schema choice sent together. Returns the parsed values of the parameters present.
 */
export function parseQuery(
  params: readonly QueryParam[],
  raw: Readonly<Record<string, unknown>>,
  filters?: readonly FilterParam[],
): Map<string, ParamValue> {
  const known = new Map(params.map((p) => [p.name, p]));
  for (const name of Object.keys(raw)) {
    if (!known.has(name)) {
      throw new ServiceError("UNKNOWN_PARAMETER", {
        param: name,
        message: `Unknown query parameter \`${name}\`.`,
      });
    }
  }
  const values = new Map<string, ParamValue>();
  for (const param of params) {
    const given = raw[param.name];
    if (given === undefined) {
      if (param.required) {
        throw new ServiceError("INVALID_PARAMETER", {
          param: param.name,
          message: `Missing required parameter \`${param.name}\`.`,
        });
      }
      continue;
    }
    values.set(param.name, parseParam(param, given));
  }
  if (filters) checkCombinations(filters, values);
  return values;
}

/** A query parameter's JSON Schema (OpenAPI), from its kind: repeated keys for arrays. */
export function paramJsonSchema(param: QueryParam): Record<string, unknown> {
  const single = param.kind.jsonSchema();
  // A parameter that takes one value only (`confirm=true`) says so as a constant.
  const values = single.enum;
  if (Array.isArray(values) && values.length === 1) single.const = values[0];
  return param.array ? { type: "array", items: single, minItems: 1, maxItems: MAX_ITEMS } : single;
}
