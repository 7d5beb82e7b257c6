/**
 * Records the application derives rather than stores: the one-line summary of any transaction
 * (`TransactionRet`) and the entries of the deleted lists (`ListDeletedRet`, `TxnDeletedRet`).
 */
import { ledgerSchema } from "../../ledger/xml/schema.ts";
import { leaf, node, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { computedValue } from "./computed.ts";
import { money, total } from "./ledger-math.ts";
import { fieldText, type LedgerRecord } from "./records.ts";
import { refTarget } from "./refs.ts";
import { formatDateTime } from "./time.ts";

const ENTITIES = ["Customer", "Vendor", "Employee", "OtherName"];

function firstRef(record: LedgerRecord, kinds: readonly string[], file: CompanyFile): XmlElement | undefined {
  for (const field of record.fields) {
    if (!field.name.endsWith("Ref") || field.name === "ParentRef") continue;
    if (!refTarget(field.name, record.object).objects.some((o) => kinds.includes(o))) continue;
    const id = field.children.find((c) => c.name === "ListID")?.text;
    const target = id === undefined ? undefined : file.recordById(id);
    if (id !== undefined && target !== undefined)
      return node("", [leaf("ListID", id), leaf("FullName", file.fullNameOf(target))]);
  }
  return undefined;
}

/** `TransactionRet`: type, ID, times, entity, account, date, number and amount of a transaction. */
export function transactionRet(record: LedgerRecord, file: CompanyFile): XmlElement {
  const types = ledgerSchema().table.simple["enum.TxnType"]?.e ?? [];
  const entity = firstRef(record, ENTITIES, file);
  const account = firstRef(record, ["Account"], file);
  const computed = computedValue("Amount", { file, record, includeLinked: false });
  const amount = fieldText(record.fields, "Amount") ?? computed?.[0]?.text ?? money(total(record, file));
  const refNumber = fieldText(record.fields, "RefNumber");
  const txnDate = fieldText(record.fields, "TxnDate");
  const memo = fieldText(record.fields, "Memo");
  return node("TransactionRet", [
    ...(types.includes(record.object) ? [leaf("TxnType", record.object)] : []),
    leaf("TxnID", record.id),
    leaf("TimeCreated", formatDateTime(record.created, file.utcOffset)),
    leaf("TimeModified", formatDateTime(record.modified, file.utcOffset)),
    ...(entity === undefined ? [] : [node("EntityRef", entity.children)]),
    ...(account === undefined ? [] : [node("AccountRef", account.children)]),
    ...(txnDate === undefined ? [] : [leaf("TxnDate", txnDate)]),
    ...(refNumber === undefined ? [] : [leaf("RefNumber", refNumber)]),
    leaf("Amount", amount),
    ...(memo === undefined ? [] : [leaf("Memo", memo)]),
  ]);
}

/** `ListDeletedRet` / `TxnDeletedRet` of a deleted-log entry. */
export function deletedRet(entry: LedgerRecord, file: CompanyFile, isList: boolean): XmlElement {
  const typeName = isList ? "ListDelType" : "TxnDelType";
  const idName = isList ? "ListID" : "TxnID";
  const labelName = isList ? "FullName" : "RefNumber";
  const label = fieldText(entry.fields, labelName);
  return node(isList ? "ListDeletedRet" : "TxnDeletedRet", [
    leaf(typeName, fieldText(entry.fields, typeName) ?? ""),
    leaf(idName, fieldText(entry.fields, idName) ?? ""),
    leaf("TimeCreated", formatDateTime(entry.created, file.utcOffset)),
    leaf("TimeDeleted", formatDateTime(entry.modified, file.utcOffset)),
    ...(label === undefined ? [] : [leaf(labelName, label)]),
  ]);
}
