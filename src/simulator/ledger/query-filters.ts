/**
 * Selection of records for `…QueryRq`: ID and name lists (3120 / 500 semantics) and the generic
 * list and transaction filters; type-specific filters come from the definition.
 */
import type { CompanyFile } from "./company-file.ts";
import type { LedgerRecord, RecordDefinition } from "./records.ts";
import { STATUS_OK, statusNotFullyCompleted, statusObjectNotFound, type Status } from "./status.ts";
import { parseDateTime } from "./time.ts";
import { child, childText, childrenNamed, type XmlElement } from "./xml-tree.ts";

/** Records selected by a query, before paging. */
export interface Selection {
  readonly status: Status;
  readonly records: LedgerRecord[];
}

function fieldText(record: LedgerRecord, name: string): string | undefined {
  return record.fields.find((f) => f.name === name)?.text;
}

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

function modifiedWithin(record: LedgerRecord, holder: XmlElement, file: CompanyFile): boolean {
  const from = childText(holder, "FromModifiedDate");
  const to = childText(holder, "ToModifiedDate");
  const fromSeconds = from === undefined ? undefined : parseDateTime(from, file.utcOffset, false);
  const toSeconds = to === undefined ? undefined : parseDateTime(to, file.utcOffset, true);
  return (
    (fromSeconds === undefined || record.modified >= fromSeconds) &&
    (toSeconds === undefined || record.modified <= toSeconds)
  );
}

function listFilters(record: LedgerRecord, rq: XmlElement, file: CompanyFile): boolean {
  const active = childText(rq, "ActiveStatus") ?? "ActiveOnly";
  const isActive =
    (fieldText(record, "IsActive") ?? "true") !== "false" && fieldText(record, "IsActive") !== "0";
  if (active === "ActiveOnly" && !isActive) return false;
  if (active === "InactiveOnly" && isActive) return false;
  if (!modifiedWithin(record, rq, file)) return false;
  const fullName = file.fullNameOf(record);
  const nameFilter = child(rq, "NameFilter");
  if (
    nameFilter !== undefined &&
    !matchText(childText(nameFilter, "MatchCriterion") ?? "", fullName, childText(nameFilter, "Name") ?? "")
  ) {
    return false;
  }
  const range = child(rq, "NameRangeFilter");
  return range === undefined || inRange(fullName, childText(range, "FromName"), childText(range, "ToName"));
}

function txnFilters(record: LedgerRecord, rq: XmlElement, file: CompanyFile): boolean {
  const modified = child(rq, "ModifiedDateRangeFilter");
  if (modified !== undefined && !modifiedWithin(record, modified, file)) return false;
  const dates = child(rq, "TxnDateRangeFilter");
  const txnDate = fieldText(record, "TxnDate") ?? "";
  if (
    dates !== undefined &&
    !inRange(txnDate, childText(dates, "FromTxnDate"), childText(dates, "ToTxnDate"))
  )
    return false;
  const refNumber = fieldText(record, "RefNumber") ?? "";
  const refFilter = child(rq, "RefNumberFilter");
  if (
    refFilter !== undefined &&
    !matchText(
      childText(refFilter, "MatchCriterion") ?? "",
      refNumber,
      childText(refFilter, "RefNumber") ?? "",
    )
  ) {
    return false;
  }
  const refRange = child(rq, "RefNumberRangeFilter");
  return (
    refRange === undefined ||
    inRange(refNumber, childText(refRange, "FromRefNumber"), childText(refRange, "ToRefNumber"))
  );
}

function byIds(def: RecordDefinition, ids: readonly string[], file: CompanyFile): Selection {
  const records: LedgerRecord[] = [];
  for (const id of ids) {
    const record = file.recordById(id);
    if (record === undefined || record.object !== def.object)
      return { status: statusObjectNotFound(id), records: [] };
    records.push(record);
  }
  return { status: STATUS_OK, records };
}

function byNames(
  candidates: readonly LedgerRecord[],
  names: readonly string[],
  key: (r: LedgerRecord) => string,
  caseSensitive: boolean,
): Selection {
  const records: LedgerRecord[] = [];
  let missing: string | undefined;
  for (const name of names) {
    const found = candidates.find((r) =>
      caseSensitive ? key(r) === name : key(r).toLowerCase() === name.toLowerCase(),
    );
    if (found === undefined) missing ??= name;
    else if (!records.includes(found)) records.push(found);
  }
  return { status: missing === undefined ? STATUS_OK : statusNotFullyCompleted(missing), records };
}

/** Applies the query's selection criteria; paging (MaxReturned, iterators) is left to the caller. */
export function selectRecords(def: RecordDefinition, rq: XmlElement, file: CompanyFile): Selection {
  const all = file.recordsOf(def.object);
  if (def.kind === "list") {
    const ids = childrenNamed(rq, "ListID").map((c) => c.text);
    if (ids.length > 0) return byIds(def, ids, file);
    const names = childrenNamed(rq, "FullName").map((c) => c.text);
    if (names.length > 0) return byNames(all, names, (r) => file.fullNameOf(r), false);
    const records = all.filter((r) => listFilters(r, rq, file) && def.matchesFilters(r, rq, file));
    records.sort((a, b) => (file.fullNameOf(a).toLowerCase() < file.fullNameOf(b).toLowerCase() ? -1 : 1));
    return { status: STATUS_OK, records };
  }
  const ids = childrenNamed(rq, "TxnID").map((c) => c.text);
  if (ids.length > 0) return byIds(def, ids, file);
  const refKey = (r: LedgerRecord): string => fieldText(r, "RefNumber") ?? "";
  const refs = childrenNamed(rq, "RefNumber").map((c) => c.text);
  if (refs.length > 0) return byNames(all, refs, refKey, false);
  const exactRefs = childrenNamed(rq, "RefNumberCaseSensitive").map((c) => c.text);
  if (exactRefs.length > 0) return byNames(all, exactRefs, refKey, true);
  return {
    status: STATUS_OK,
    records: all.filter((r) => txnFilters(r, rq, file) && def.matchesFilters(r, rq, file)),
  };
}
