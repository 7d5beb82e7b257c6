import Big from "big.js";
import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import type { FilterParam, ParamValue } from "../ledger/typed/filters.ts";
import { labelOf, referencedIds, text, type Json } from "./records.ts";
import { storedObjectNames } from "./ref-targets.ts";

/**
 * The predicate of each filter element of a list query over mirrored records, one rule per
 * element (see `query.ts` for the semantics each follows).
 */

/** What a query needs besides its records. */
export interface MirrorQueryContext {
  /** The company file's UTC offset in minutes east (read from its records' timestamps). */
  utcOffsetMinutes: number;
  /** Now, in milliseconds since the epoch. */
  nowMs: number;
  /** The records are given in the application's answer order already (a copy sorts them once). */
  ordered?: boolean;
}

/** Reference filters: the object types they select and whether line references count. */
export const REF_FILTERS: Readonly<
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

/** Whether a record matches one filter element. */
export type Predicate = (record: Json) => boolean;

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
export function balanceField(resource: ResourceDefinition): string | null {
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
export function predicateOf(
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
      // No bound, no predicate: every record passes (and a page does not parse every date).
      if (from === undefined && to === undefined) return null;
      return (r) => {
        const seconds = updatedSeconds(r);
        return (from === undefined || seconds >= from) && (to === undefined || seconds <= to);
      };
    }
    case "TxnDateRangeFilter":
    case "TransactionDateRangeFilter": {
      const from = get("transactionDateFrom");
      const to = get("transactionDateTo");
      if (typeof from !== "string" && typeof to !== "string") return null;
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
    case "RefNumberRangeFilter": {
      const prefix = element === "NameRangeFilter" ? "name" : "refNumber";
      const from = get(`${prefix}From`);
      const to = get(`${prefix}To`);
      if (typeof from !== "string" && typeof to !== "string") return null;
      return (r) => inRange(labelOf(resource, r), from, to);
    }
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
