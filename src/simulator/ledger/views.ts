/**
 * Records the application derives rather than stores: the one-line summary of any transaction
 * (`TransactionRet`) and the entries of the deleted lists (`ListDeletedRet`, `TxnDeletedRet`).
 */
import { ledgerSchema } from "../../ledger/xml/schema.ts";
import { child, childText, leaf, node, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { computedValue } from "./computed.ts";
import { money, openAmount, quantityCanBuild, stockOf, total } from "./ledger-math.ts";
import { fieldText, refId, type LedgerRecord } from "./records.ts";
import { renderType } from "./render.ts";
import { refTarget } from "./refs.ts";
import { STATUS_OK, statusObjectNotFound } from "./status.ts";
import { formatDateTime } from "./time.ts";
import type { OpResult } from "./write-ops.ts";

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

/** `BillToPayRet`s of a vendor: open bills to pay and open credits to apply. */
export function billsToPay(rq: XmlElement, file: CompanyFile): XmlElement[] {
  const payee = child(rq, "PayeeEntityRef");
  const vendor = payee === undefined ? undefined : file.resolveRef("Bill", node("VendorRef", payee.children));
  if (vendor === undefined) return [];
  const dueBy = childText(rq, "DueDate");
  const out: XmlElement[] = [];
  for (const [object, element, amountName] of [
    ["Bill", "BillToPay", "AmountDue"],
    ["VendorCredit", "CreditToApply", "CreditRemaining"],
  ] as const) {
    for (const record of file.recordsOf(object)) {
      if (refId(record.fields, "VendorRef") !== vendor.id) continue;
      const open = openAmount(record, file);
      const due = fieldText(record.fields, "DueDate");
      if (open.lte(0) || (dueBy !== undefined && due !== undefined && due > dueBy)) continue;
      const fields = [
        leaf("TxnID", record.id),
        leaf("TxnType", object),
        ...record.fields.filter((f) => ["APAccountRef", "TxnDate", "RefNumber", "DueDate"].includes(f.name)),
        leaf(amountName, money(open)),
      ];
      const typeKey = ledgerSchema().keyOf(element, null);
      out.push(
        node("BillToPayRet", [
          node(
            element,
            renderType(typeKey, fields, file, () => undefined),
          ),
        ]),
      );
    }
  }
  return out;
}

/** Payments received into undeposited funds that no deposit holds yet. */
export function paymentsToDeposit(file: CompanyFile): XmlElement[] {
  const deposited = new Set(
    file.recordsOf("Deposit").flatMap((d) => d.lines.map((l) => fieldText(l.fields, "PaymentTxnID") ?? "")),
  );
  const out: XmlElement[] = [];
  for (const object of ["ReceivePayment", "SalesReceipt"]) {
    for (const record of file.recordsOf(object)) {
      if (refId(record.fields, "DepositToAccountRef") !== undefined || deposited.has(record.id)) continue;
      const fields = [
        leaf("TxnID", record.id),
        leaf("TxnType", object),
        ...record.fields.filter((f) => ["CustomerRef", "TxnDate", "RefNumber"].includes(f.name)),
        leaf("Amount", money(total(record, file))),
      ];
      out.push(
        node(
          "ReceivePaymentToDepositRet",
          renderType("ReceivePaymentToDepositRet", fields, file, () => undefined),
        ),
      );
    }
  }
  return out;
}

/** `ItemSitesRet` of an inventory item: its quantities (the simulator keeps a single site). */
export function itemSitesRet(item: LedgerRecord, file: CompanyFile): XmlElement {
  const stock = stockOf(file).get(item.id);
  const refName = item.object === "ItemInventoryAssembly" ? "ItemInventoryAssemblyRef" : "ItemInventoryRef";
  return node("ItemSitesRet", [
    leaf("ListID", item.id),
    leaf("TimeCreated", formatDateTime(item.created, file.utcOffset)),
    leaf("TimeModified", formatDateTime(item.modified, file.utcOffset)),
    leaf("EditSequence", String(item.editSequence)),
    node(refName, [leaf("ListID", item.id), leaf("FullName", file.fullNameOf(item))]),
    leaf("QuantityOnHand", (stock?.onHand ?? 0).toString()),
    leaf("QuantityOnPurchaseOrders", (stock?.onOrder ?? 0).toString()),
    leaf("QuantityOnSalesOrders", (stock?.onSalesOrder ?? 0).toString()),
  ]);
}

/**
 * `ItemAssembliesCanBuildQueryRq`: how many of an inventory assembly the components on hand allow
 * building (the simulator answers from the current stock, whatever the date asked about).
 */
export function assembliesCanBuild(rq: XmlElement, file: CompanyFile): OpResult {
  const ref = child(rq, "ItemInventoryAssemblyRef");
  const listId = ref === undefined ? undefined : childText(ref, "ListID");
  const fullName = ref === undefined ? undefined : childText(ref, "FullName");
  const assembly =
    listId !== undefined
      ? file.recordById(listId)
      : file
          .recordsOf("ItemInventoryAssembly")
          .find((r) => file.fullNameOf(r).toLowerCase() === (fullName ?? "").toLowerCase());
  if (assembly === undefined || assembly.object !== "ItemInventoryAssembly")
    return { status: statusObjectNotFound(listId ?? fullName ?? ""), body: [] };
  const txnDate = childText(rq, "TxnDate");
  return {
    status: STATUS_OK,
    body: [
      node("ItemAssembliesCanBuildRet", [
        node("ItemInventoryAssemblyRef", [
          leaf("ListID", assembly.id),
          leaf("FullName", file.fullNameOf(assembly)),
        ]),
        ...(txnDate === undefined ? [] : [leaf("TxnDate", txnDate)]),
        leaf("QuantityCanBuild", quantityCanBuild(assembly, file).toString()),
      ]),
    ],
  };
}
