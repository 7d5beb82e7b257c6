/**
 * ListDel / TxnDel, TxnVoid and ListMerge, and the deleted log behind ListDeletedQuery and
 * TxnDeletedQuery. A deleted object leaves an entry (object `ListDeleted`/`TxnDeleted`) that is kept
 * for {@link DELETED_RETENTION_SECONDS} of company-file time.
 */
import { ledgerSchema } from "../../ledger/xml/schema.ts";
import { slotsOf } from "../../ledger/xml/slots.ts";
import { child, childText, leaf, node, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { objectActions, objectType, retSlotFor, type ObjectType } from "./objects.ts";
import { fieldText, type LedgerRecord } from "./records.ts";
import {
  STATUS_OK,
  statusInUse,
  statusObjectNotFound,
  statusStaleEditSequence,
  type Status,
} from "./status.ts";
import { formatDateTime } from "./time.ts";
import { findRecord, markModified, type OpResult } from "./write-ops.ts";

/** The application lists deleted objects and transactions for 90 days. */
export const DELETED_RETENTION_SECONDS = 90 * 24 * 3600;

/** Object names of deleted-log entries. */
export const DELETED_LIST = "ListDeleted";
export const DELETED_TXN = "TxnDeleted";

function refersTo(fields: readonly XmlElement[], id: string): boolean {
  return fields.some(
    (f) =>
      (f.name !== "ListID" && f.children.some((c) => c.name === "ListID" && c.text === id)) ||
      refersTo(f.children, id),
  );
}

/** Whether any other live record references `id`. */
function isReferenced(id: string, file: CompanyFile): boolean {
  return file
    .allRecords()
    .some(
      (r) =>
        r.id !== id &&
        objectType(r.object) !== undefined &&
        (refersTo(r.fields, id) || r.lines.some((l) => refersTo(l.fields, id))),
    );
}

function label(object: ObjectType, record: LedgerRecord, file: CompanyFile): string | undefined {
  return object.kind === "list" ? file.fullNameOf(record) : fieldText(record.fields, "RefNumber");
}

/** Removes `record` and logs it as deleted now. */
function removeToLog(object: ObjectType, record: LedgerRecord, file: CompanyFile): number {
  const now = file.nowSeconds();
  const isList = object.kind === "list";
  const shown = label(object, record, file);
  file.remove(record.id);
  file.insert({
    object: isList ? DELETED_LIST : DELETED_TXN,
    id: `deleted:${record.id}`,
    created: record.created,
    modified: now,
    editSequence: now,
    fields: [
      leaf(isList ? "ListDelType" : "TxnDelType", object.name),
      leaf(object.idElement, record.id),
      ...(shown === undefined || shown === "" ? [] : [leaf(isList ? "FullName" : "RefNumber", shown)]),
    ],
    lines: [],
    txnNumber: undefined,
  });
  return now;
}

/** `ListDelRq` / `TxnDelRq`. */
export function deleteRecord(kind: "list" | "transaction", request: XmlElement, file: CompanyFile): OpResult {
  const typeField = kind === "list" ? "ListDelType" : "TxnDelType";
  const idField = kind === "list" ? "ListID" : "TxnID";
  const object = objectType(childText(request, typeField) ?? "");
  const id = childText(request, idField) ?? "";
  const record = object === undefined ? undefined : findRecord(object, id, file);
  if (object === undefined || record === undefined || object.kind !== kind || !objectActions(object).del)
    return { status: statusObjectNotFound(id), body: [] };
  const shown = label(object, record, file) ?? "";
  if (kind === "list" && isReferenced(id, file)) return { status: statusInUse(shown), body: [] };
  const deleted = removeToLog(object, record, file);
  const body = [
    leaf(typeField, object.name),
    leaf(idField, id),
    leaf("TimeDeleted", formatDateTime(deleted, file.utcOffset)),
  ];
  if (shown !== "") body.push(leaf(kind === "list" ? "FullName" : "RefNumber", shown));
  return { status: STATUS_OK, body };
}

/** Zeroes every amount (and quantity) of stored fields of a `retKey` element. */
function zeroed(fields: readonly XmlElement[], retKey: string): XmlElement[] {
  const schema = ledgerSchema();
  const slots = schema.isComplex(retKey) ? slotsOf(schema, retKey) : [];
  return fields.map((f) => {
    const slot = slots.find((s) => s.name === f.name) ?? retSlotFor(retKey, f.name);
    if (f.children.length > 0) return node(f.name, zeroed(f.children, slot?.typeKey ?? f.name), f.attrs);
    const base = slot?.type.kind === "simple" ? slot.type.entry.b : undefined;
    if (base === "amt" || /Amount$/.test(f.name)) return leaf(f.name, "0.00");
    if (base === "quan") return leaf(f.name, "0");
    return f;
  });
}

/** `TxnVoidRq`: amounts become zero, the memo says so, the transaction stays. */
export function voidRecord(request: XmlElement, file: CompanyFile): OpResult {
  const object = objectType(childText(request, "TxnVoidType") ?? "");
  const id = childText(request, "TxnID") ?? "";
  const record = object === undefined ? undefined : findRecord(object, id, file);
  if (object === undefined || record === undefined || !objectActions(object).void)
    return { status: statusObjectNotFound(id), body: [] };
  const memo = fieldText(record.fields, "Memo") ?? "";
  record.fields = [
    ...zeroed(record.fields, object.ret).filter((f) => f.name !== "Memo"),
    leaf("Memo", memo.startsWith("VOID:") ? memo : `VOID:${memo === "" ? "" : ` ${memo}`}`.slice(0, 4095)),
  ];
  record.lines = record.lines.map((line) => ({
    ...line,
    fields: zeroed(line.fields, ledgerSchema().keyOf(line.element ?? object.defaultLine ?? "", null)),
  }));
  markModified(record, file);
  const refNumber = fieldText(record.fields, "RefNumber");
  return {
    status: STATUS_OK,
    body: [
      leaf("TxnVoidType", object.name),
      leaf("TxnID", record.id),
      leaf("TimeCreated", formatDateTime(record.created, file.utcOffset)),
      leaf("TimeModified", formatDateTime(record.modified, file.utcOffset)),
      ...(refNumber === undefined ? [] : [leaf("RefNumber", refNumber)]),
    ],
  };
}

function moveRefs(fields: readonly XmlElement[], from: string, to: string): XmlElement[] {
  return fields.map((f) => {
    if (f.children.length === 0) return f;
    const isRef = f.children.some((c) => c.name === "ListID" && c.text === from);
    if (isRef) return node(f.name, [leaf("ListID", to)], f.attrs);
    return node(f.name, moveRefs(f.children, from, to), f.attrs);
  });
}

function mergeSide(element: XmlElement | undefined): { id: string; editSequence: string } {
  return {
    id: element === undefined ? "" : (childText(element, "ListID") ?? ""),
    editSequence: element === undefined ? "" : (childText(element, "EditSequence") ?? ""),
  };
}

/** `ListMergeRq`: every reference to MergeFrom moves to MergeTo, then MergeFrom is deleted. */
export function mergeRecords(request: XmlElement, file: CompanyFile): OpResult {
  const object = objectType(childText(request, "ListMergeType") ?? "");
  const fromSide = mergeSide(child(request, "MergeFrom"));
  const toSide = mergeSide(child(request, "MergeTo"));
  const from = object === undefined ? undefined : findRecord(object, fromSide.id, file);
  const to = object === undefined ? undefined : findRecord(object, toSide.id, file);
  if (object === undefined || !objectActions(object).merge)
    return { status: statusObjectNotFound(fromSide.id), body: [] };
  if (from === undefined) return { status: statusObjectNotFound(fromSide.id), body: [] };
  if (to === undefined || to.id === from.id) return { status: statusObjectNotFound(toSide.id), body: [] };
  const stale: Status | undefined =
    fromSide.editSequence !== String(from.editSequence)
      ? statusStaleEditSequence(fromSide.editSequence)
      : toSide.editSequence !== String(to.editSequence)
        ? statusStaleEditSequence(toSide.editSequence)
        : undefined;
  if (stale !== undefined) return { status: stale, body: [] };
  const fromName = file.fullNameOf(from);
  for (const record of file.allRecords()) {
    if (record.id === from.id || objectType(record.object) === undefined) continue;
    if (!refersTo(record.fields, from.id) && !record.lines.some((l) => refersTo(l.fields, from.id))) continue;
    record.fields = moveRefs(record.fields, from.id, to.id);
    record.lines = record.lines.map((l) => ({ ...l, fields: moveRefs(l.fields, from.id, to.id) }));
    file.touch(record);
  }
  const deleted = removeToLog(object, from, file);
  markModified(to, file);
  return {
    status: STATUS_OK,
    body: [
      leaf("ListMergeType", object.name),
      node("MergedFrom", [
        leaf("ListID", from.id),
        leaf("TimeDeleted", formatDateTime(deleted, file.utcOffset)),
        leaf("FullName", fromName),
      ]),
      node("MergedTo", [
        leaf("ListID", to.id),
        leaf("TimeCreated", formatDateTime(to.created, file.utcOffset)),
        leaf("TimeModified", formatDateTime(to.modified, file.utcOffset)),
        leaf("EditSequence", String(to.editSequence)),
        leaf("FullName", file.fullNameOf(to)),
      ]),
    ],
  };
}
