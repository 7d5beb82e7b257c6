/**
 * The filters of `…QueryRq`, one rule per filter element, applied to whatever records the query
 * answers with: ID and name lists (3120 / 500 semantics), active status, modified and transaction
 * dates (with date macros), name and reference-number matches and ranges, entity / account / item /
 * class / currency / site filters (with their `…WithChildren` forms), a price level's item, paid
 * status, total balance,
 * and enumeration filters that name a stored field (AccountType…). Unknown filters select everything.
 */
import type Big from "big.js";
import { child, childText, childrenNamed, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { big, openAmount, totalBalance } from "./ledger-math.ts";
import { objectType, objectTypes } from "./objects.ts";
import { fieldText, refId, type LedgerRecord } from "./records.ts";
import { refTarget } from "./refs.ts";
import { formatDate, parseDateTime } from "./time.ts";

type Predicate = (record: LedgerRecord) => boolean;

function matchText(criterion: string, value: string, wanted: string): boolean {
  const v = value.toLowerCase();
  const w = wanted.toLowerCase();
  if (criterion === "StartsWith") return v.startsWith(w);
  if (criterion === "EndsWith") return v.endsWith(w);
  return v.includes(w);
}

function inRange(value: string, from: string | undefined, to: string | undefined): boolean {
  const v = value.toLowerCase();
  return (from === undefined || v >= from.toLowerCase()) && (to === undefined || v <= to.toLowerCase());
}

/** Label of a record for name filters: full name of list objects, RefNumber of transactions. */
function nameOf(record: LedgerRecord, file: CompanyFile): string {
  return objectType(record.object)?.kind === "transaction"
    ? (fieldText(record.fields, "RefNumber") ?? "")
    : file.fullNameOf(record);
}

function modifiedWithin(holder: XmlElement, file: CompanyFile): Predicate {
  const from = childText(holder, "FromModifiedDate");
  const to = childText(holder, "ToModifiedDate");
  const fromSeconds = from === undefined ? undefined : parseDateTime(from, file.utcOffset, false);
  const toSeconds = to === undefined ? undefined : parseDateTime(to, file.utcOffset, true);
  return (r) =>
    (fromSeconds === undefined || r.modified >= fromSeconds) &&
    (toSeconds === undefined || r.modified <= toSeconds);
}

function shiftDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/**
 * `[from, to]` of a date macro, in the file's local dates; undefined = no bound. Both spellings
 * are read: the report macros (`LastQuarter`) and the transaction filters' (`LastCalendarQuarter`,
 * `LastFiscalQuarter`; the simulated company's fiscal year is the calendar year). Weeks start on
 * Sunday; "to date" ends a period at today's place in it (last month to date: from the first of
 * last month to the same day of last month); the next four weeks are the four weeks after this one.
 */
export function macroRange(macro: string, file: CompanyFile): [string | undefined, string | undefined] {
  const today = formatDate(file.nowSeconds(), file.utcOffset);
  const [y, m] = today.split("-").map(Number) as [number, number];
  const monthStart = (year: number, month: number): string =>
    new Date(Date.UTC(year, month - 1, 1)).toISOString().slice(0, 10);
  const weekStart = shiftDays(today, -new Date(`${today}T00:00:00Z`).getUTCDay());
  if (macro === "Today") return [today, today];
  if (macro === "Yesterday") return [shiftDays(today, -1), shiftDays(today, -1)];
  if (macro === "NextFourWeeks") return [shiftDays(weekStart, 7), shiftDays(weekStart, 34)];
  const parts = /^(This|Last|Next)(?:Calendar|Fiscal)?(Week|Month|Quarter|Year)(ToDate)?$/.exec(macro);
  if (!parts) return [undefined, undefined];
  const step = parts[1] === "Last" ? -1 : parts[1] === "Next" ? 1 : 0;
  const period = (k: number): [string, string] => {
    switch (parts[2]) {
      case "Week":
        return [shiftDays(weekStart, 7 * k), shiftDays(weekStart, 7 * k + 6)];
      case "Month":
        return [monthStart(y, m + k), shiftDays(monthStart(y, m + k + 1), -1)];
      case "Quarter": {
        const first = Math.floor((m - 1) / 3) * 3 + 1 + 3 * k;
        return [monthStart(y, first), shiftDays(monthStart(y, first + 3), -1)];
      }
      default:
        return [`${y + k}-01-01`, `${y + k}-12-31`];
    }
  };
  const [from, to] = period(step);
  if (parts[3] === undefined) return [from, to];
  const elapsedDays = Math.round((Date.parse(today) - Date.parse(period(0)[0])) / 86_400_000);
  const end = shiftDays(from, elapsedDays);
  return [from, end < to ? end : to];
}

function txnDateWithin(filter: XmlElement, file: CompanyFile): Predicate {
  const macro = childText(filter, "DateMacro");
  const [from, to] =
    macro === undefined
      ? [childText(filter, "FromTxnDate"), childText(filter, "ToTxnDate")]
      : macroRange(macro, file);
  return (r) => {
    const date = fieldText(r.fields, "TxnDate") ?? "";
    return (from === undefined || date >= from) && (to === undefined || date <= to);
  };
}

/** Whether `target` (or, with children, anything below it) is named by a ListID/FullName filter. */
function namedBy(filter: XmlElement, file: CompanyFile): (targetId: string | undefined) => boolean {
  const ids = childrenNamed(filter, "ListID").map((c) => c.text);
  const names = childrenNamed(filter, "FullName").map((c) => c.text.toLowerCase());
  const idWithChildren = childText(filter, "ListIDWithChildren");
  const nameWithChildren = childText(filter, "FullNameWithChildren")?.toLowerCase();
  return (targetId) => {
    const target = targetId === undefined ? undefined : file.recordById(targetId);
    if (target === undefined) return false;
    const fullName = file.fullNameOf(target).toLowerCase();
    if (ids.includes(target.id) || names.includes(fullName)) return true;
    if (
      nameWithChildren !== undefined &&
      (fullName === nameWithChildren || fullName.startsWith(`${nameWithChildren}:`))
    )
      return true;
    for (let current: LedgerRecord | undefined = target; current !== undefined;) {
      if (current.id === idWithChildren) return true;
      const parent = refId(current.fields, "ParentRef");
      current = parent === undefined ? undefined : file.recordById(parent);
    }
    return false;
  };
}

/** ListIDs of the reference fields (top level and lines) whose target may be one of `objects`. */
function refIds(record: LedgerRecord, fits: (refName: string) => boolean, lines: boolean): string[] {
  const out: string[] = [];
  const visit = (fields: readonly XmlElement[]): void => {
    for (const f of fields) {
      if (f.name.endsWith("Ref") && fits(f.name)) {
        const id = f.children.find((c) => c.name === "ListID")?.text;
        if (id !== undefined) out.push(id);
      }
    }
  };
  visit(record.fields);
  if (lines) for (const line of record.lines) visit(line.fields);
  return out;
}

function refFilter(
  filter: XmlElement,
  file: CompanyFile,
  kinds: readonly string[],
  lines: boolean,
): Predicate {
  const matches = namedBy(filter, file);
  return (r) => {
    const fits = (refName: string): boolean =>
      refName !== "ParentRef" && refTarget(refName, r.object).objects.some((o) => kinds.includes(o));
    return refIds(r, fits, lines).some((id) => matches(id));
  };
}

const ENTITIES = ["Customer", "Vendor", "Employee", "OtherName"];

function compare(operator: string, value: Big, amount: Big): boolean {
  switch (operator) {
    case "LessThan":
      return value.lt(amount);
    case "LessThanEqual":
      return value.lte(amount);
    case "Equal":
      return value.eq(amount);
    case "GreaterThan":
      return value.gt(amount);
    default:
      return value.gte(amount);
  }
}

/** Predicates of the filter elements present in `rq` (list and transaction filters alike). */
export function filterPredicates(rq: XmlElement, file: CompanyFile, isList: boolean): Predicate[] {
  const out: Predicate[] = [];
  const active = childText(rq, "ActiveStatus") ?? (isList ? "ActiveOnly" : "All");
  if (active !== "All") {
    out.push((r) => {
      const isActive = fieldText(r.fields, "IsActive") !== "false";
      return active === "ActiveOnly" ? isActive : !isActive;
    });
  }
  if (child(rq, "FromModifiedDate") !== undefined || child(rq, "ToModifiedDate") !== undefined)
    out.push(modifiedWithin(rq, file));
  for (const name of ["ModifiedDateRangeFilter", "TransactionModifiedDateRangeFilter"]) {
    const filter = child(rq, name);
    if (filter !== undefined) out.push(modifiedWithin(filter, file));
  }
  for (const name of ["TxnDateRangeFilter", "TransactionDateRangeFilter"]) {
    const filter = child(rq, name);
    if (filter !== undefined) out.push(txnDateWithin(filter, file));
  }
  for (const name of ["NameFilter", "RefNumberFilter"]) {
    const filter = child(rq, name);
    if (filter === undefined) continue;
    const criterion = childText(filter, "MatchCriterion") ?? "";
    const wanted = childText(filter, name === "NameFilter" ? "Name" : "RefNumber") ?? "";
    out.push((r) => matchText(criterion, nameOf(r, file), wanted));
  }
  const nameRange = child(rq, "NameRangeFilter");
  if (nameRange !== undefined)
    out.push((r) =>
      inRange(nameOf(r, file), childText(nameRange, "FromName"), childText(nameRange, "ToName")),
    );
  const refRange = child(rq, "RefNumberRangeFilter");
  if (refRange !== undefined)
    out.push((r) =>
      inRange(nameOf(r, file), childText(refRange, "FromRefNumber"), childText(refRange, "ToRefNumber")),
    );
  const refFilters: ReadonlyArray<readonly [string, readonly string[], boolean]> = [
    ["EntityFilter", ENTITIES, false],
    ["TransactionEntityFilter", ENTITIES, false],
    ["TimeTrackingEntityFilter", ENTITIES, false],
    ["AccountFilter", ["Account"], false],
    ["TransactionAccountFilter", ["Account"], true],
    ["ItemFilter", objectTypesStartingWith("Item"), true],
    ["TransactionItemFilter", objectTypesStartingWith("Item"), true],
    ["ClassFilter", ["Class"], true],
    ["TransactionClassFilter", ["Class"], true],
    ["CurrencyFilter", ["Currency"], false],
    ["SiteFilter", ["InventorySite"], true],
  ];
  for (const [name, kinds, lines] of refFilters) {
    const filter = child(rq, name);
    if (filter !== undefined) out.push(refFilter(filter, file, kinds, lines));
  }
  // A price level query's `ItemRef`: the levels whose per-item prices name the item.
  const itemRef = child(rq, "ItemRef");
  if (itemRef !== undefined) {
    const matches = namedBy(itemRef, file);
    out.push((r) => nestedItemIds(r).some((id) => matches(id)));
  }
  const paid = childText(rq, "PaidStatus") ?? childText(rq, "TransactionPaidStatusFilter");
  if (paid === "PaidOnly" || paid === "Closed") out.push((r) => openAmount(r, file).lte(0));
  if (paid === "NotPaidOnly" || paid === "Open") out.push((r) => openAmount(r, file).gt(0));
  const balance = child(rq, "TotalBalanceFilter");
  if (balance !== undefined) {
    const operator = childText(balance, "Operator") ?? "";
    const amount = big(childText(balance, "Amount"));
    out.push((r) => compare(operator, totalBalance(r, file), amount));
  }
  const types = childrenNamed(rq, "TxnTypeFilter").map((c) => c.text);
  const typeFilter = child(rq, "TransactionTypeFilter");
  const wantedTypes =
    typeFilter === undefined ? types : childrenNamed(typeFilter, "TxnTypeFilter").map((c) => c.text);
  if (wantedTypes.length > 0 && !wantedTypes.includes("All")) out.push((r) => wantedTypes.includes(r.object));
  // Enumeration filters named like a stored field (AccountType, PaymentMethodType…).
  for (const name of ["AccountType", "PaymentMethodType"]) {
    const values = childrenNamed(rq, name).map((c) => c.text);
    if (values.length > 0) out.push((r) => values.includes(fieldText(r.fields, name) ?? ""));
  }
  return out;
}

/** ListIDs of every `ItemRef` inside a record's fields and lines, at any depth. */
function nestedItemIds(record: LedgerRecord): string[] {
  const out: string[] = [];
  const visit = (elements: readonly XmlElement[]): void => {
    for (const element of elements) {
      if (element.name === "ItemRef") {
        const id = element.children.find((c) => c.name === "ListID")?.text;
        if (id !== undefined) out.push(id);
      } else visit(element.children);
    }
  };
  visit(record.fields);
  for (const line of record.lines) visit(line.fields);
  return out;
}

function objectTypesStartingWith(prefix: string): string[] {
  return [...objectTypes().keys()].filter((name) => name.startsWith(prefix));
}
