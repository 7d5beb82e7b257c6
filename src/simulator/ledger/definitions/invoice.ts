/**
 * Invoice (transaction with InvoiceLine lines). Element names and order follow InvoiceAdd /
 * InvoiceMod / InvoiceQueryRq / InvoiceRet / InvoiceLine{Add,Mod,Ret} of qbXML 13.0. No sales tax,
 * payments or linked transactions are simulated: tax is 0.00 and the balance equals the subtotal.
 */
import Big from "big.js";
import { choice, many, opt, req, type Model } from "../content-model.ts";
import type { FileView, LedgerRecord, LineDefinition } from "../records.ts";
import { formatDate } from "../time.ts";
import { leaf, node, type XmlElement } from "../xml-tree.ts";
import {
  ADDRESS,
  REF,
  addressBlock,
  defineRecord,
  fieldText,
  money,
  refId,
  sum,
  txnQueryModel,
} from "./common.ts";

function lineModel(mod: boolean): Model {
  return [
    ...(mod ? [req("TxnLineID")] : []),
    opt("ItemRef", REF),
    opt("Desc"),
    opt("Quantity", "quantity"),
    opt("UnitOfMeasure"),
    ...(mod ? [opt("OverrideUOMSetRef", REF)] : []),
    choice(0, 1, [req("Rate", "amount")], [req("RatePercent", "quantity")], [req("PriceLevelRef", REF)]),
    opt("ClassRef", REF),
    opt("Amount", "amount"),
    opt("TaxAmount", "amount"),
    opt("OptionForPriceRuleConflict"),
    opt("InventorySiteRef", REF),
    opt("InventorySiteLocationRef", REF),
    choice(0, 1, [opt("SerialNumber")], [opt("LotNumber")]),
    opt("ServiceDate", "date"),
    opt("SalesTaxCodeRef", REF),
    ...(mod ? [] : [opt("IsTaxable", "bool")]),
    opt("OverrideItemAccountRef", REF),
    opt("Other1"),
    opt("Other2"),
    ...(mod ? [] : [opt("LinkToTxn", "any"), many("DataExt", "any")]),
  ];
}

function body(mod: boolean): Model {
  return [
    ...(mod ? [req("TxnID"), req("EditSequence"), opt("CustomerRef", REF)] : [req("CustomerRef", REF)]),
    opt("ClassRef", REF),
    opt("ARAccountRef", REF),
    opt("TemplateRef", REF),
    opt("TxnDate", "date"),
    opt("RefNumber"),
    opt("BillAddress", ADDRESS),
    opt("ShipAddress", ADDRESS),
    opt("IsPending", "bool"),
    ...(mod ? [] : [opt("IsFinanceCharge", "bool")]),
    opt("PONumber"),
    opt("TermsRef", REF),
    opt("DueDate", "date"),
    opt("SalesRepRef", REF),
    opt("FOB"),
    opt("ShipDate", "date"),
    opt("ShipMethodRef", REF),
    opt("ItemSalesTaxRef", REF),
    opt("Memo"),
    opt("CustomerMsgRef", REF),
    opt("IsToBePrinted", "bool"),
    opt("IsToBeEmailed", "bool"),
    opt("IsTaxIncluded", "bool"),
    opt("CustomerSalesTaxCodeRef", REF),
    opt("Other"),
    opt("ExchangeRate", "quantity"),
    ...(mod ? [] : [opt("ExternalGUID"), many("LinkToTxnID")]),
    many("SetCredit", "any"),
    choice(
      0,
      Number.POSITIVE_INFINITY,
      [req(mod ? "InvoiceLineMod" : "InvoiceLineAdd", lineModel(mod))],
      [req(mod ? "InvoiceLineGroupMod" : "InvoiceLineGroupAdd", "any")],
    ),
    ...(mod
      ? []
      : [opt("DiscountLineAdd", "any"), opt("SalesTaxLineAdd", "any"), opt("ShippingLineAdd", "any")]),
  ];
}

const lines: LineDefinition = {
  addName: "InvoiceLineAdd",
  modName: "InvoiceLineMod",
  retName: "InvoiceLineRet",
  retOrder: [
    "ItemRef",
    "Desc",
    "Quantity",
    "UnitOfMeasure",
    "OverrideUOMSetRef",
    "Rate",
    "RatePercent",
    "ClassRef",
    "Amount",
    "TaxAmount",
    "InventorySiteRef",
    "InventorySiteLocationRef",
    "SerialNumber",
    "LotNumber",
    "ServiceDate",
    "SalesTaxCodeRef",
    "IsTaxable",
    "Other1",
    "Other2",
    "DataExtRet",
  ],
  refs: { ItemRef: "Item" },
  amounts: ["Rate", "Amount", "TaxAmount"],
  complete: (fields) => {
    const rate = fieldText(fields, "Rate");
    if (fieldText(fields, "Amount") !== undefined || rate === undefined) return fields;
    const amount = new Big(fieldText(fields, "Quantity") ?? "1").times(rate);
    return [...fields, leaf("Amount", money(amount))];
  },
};

/** Sum of the line amounts of an invoice. */
export function invoiceSubtotal(record: LedgerRecord): Big {
  return sum(record.lines, (line) => new Big(fieldText(line.fields, "Amount") ?? "0"));
}

function defaults(file: FileView, fields: readonly XmlElement[]): XmlElement[] {
  const today = formatDate(file.nowSeconds(), file.utcOffset);
  const txnDate = fieldText(fields, "TxnDate") ?? today;
  const receivable = file
    .recordsOf("Account")
    .find((a) => fieldText(a.fields, "AccountType") === "AccountsReceivable");
  const numbers = file.recordsOf("Invoice").map((inv) => Number(fieldText(inv.fields, "RefNumber")));
  const nextRef = String(Math.max(0, ...numbers.filter((n) => Number.isInteger(n))) + 1);
  return [
    ...(receivable === undefined ? [] : [node("ARAccountRef", [leaf("ListID", receivable.id)])]),
    leaf("TxnDate", txnDate),
    leaf("RefNumber", nextRef),
    leaf("IsPending", "false"),
    leaf("IsFinanceCharge", "false"),
    leaf("DueDate", txnDate),
    leaf("ShipDate", txnDate),
    leaf("IsToBePrinted", "true"),
    leaf("IsToBeEmailed", "false"),
  ];
}

function matchesEntity(record: LedgerRecord, filter: XmlElement, file: FileView): boolean {
  const customerId = refId(record.fields, "CustomerRef");
  const customer = customerId === undefined ? undefined : file.recordById(customerId);
  if (customer === undefined) return false;
  const fullName = file.fullNameOf(customer).toLowerCase();
  return filter.children.some((c) => {
    const value = c.text.toLowerCase();
    if (c.name === "ListID") return c.text === customer.id;
    if (c.name === "FullName") return value === fullName;
    if (c.name === "FullNameWithChildren") return fullName === value || fullName.startsWith(`${value}:`);
    // ListIDWithChildren: the customer itself or any job below it.
    let current: LedgerRecord | undefined = customer;
    while (current !== undefined) {
      if (current.id === c.text) return true;
      const parent = refId(current.fields, "ParentRef");
      current = parent === undefined ? undefined : file.recordById(parent);
    }
    return false;
  });
}

/** The Invoice definition. */
export const invoiceDefinition = defineRecord({
  object: "Invoice",
  kind: "transaction",
  addModel: body(false),
  modModel: body(true),
  queryModel: txnQueryModel([opt("PaidStatus")]),
  retOrder: [
    "TxnID",
    "TimeCreated",
    "TimeModified",
    "EditSequence",
    "TxnNumber",
    "CustomerRef",
    "ClassRef",
    "ARAccountRef",
    "TemplateRef",
    "TxnDate",
    "RefNumber",
    "BillAddress",
    "BillAddressBlock",
    "ShipAddress",
    "ShipAddressBlock",
    "IsPending",
    "IsFinanceCharge",
    "PONumber",
    "TermsRef",
    "DueDate",
    "SalesRepRef",
    "FOB",
    "ShipDate",
    "ShipMethodRef",
    "Subtotal",
    "ItemSalesTaxRef",
    "SalesTaxPercentage",
    "SalesTaxTotal",
    "AppliedAmount",
    "BalanceRemaining",
    "CurrencyRef",
    "ExchangeRate",
    "BalanceRemainingInHomeCurrency",
    "Memo",
    "IsPaid",
    "CustomerMsgRef",
    "IsToBePrinted",
    "IsToBeEmailed",
    "IsTaxIncluded",
    "CustomerSalesTaxCodeRef",
    "SuggestedDiscountAmount",
    "SuggestedDiscountDate",
    "Other",
    "ExternalGUID",
    "LinkedTxn",
    "InvoiceLineRet",
    "InvoiceLineGroupRet",
    "DiscountLineRet",
    "SalesTaxLineRet",
    "ShippingLineRet",
    "DataExtRet",
  ],
  refs: { CustomerRef: "Customer", ARAccountRef: "Account" },
  unsupported: [
    "InvoiceLineGroupAdd",
    "InvoiceLineGroupMod",
    "DiscountLineAdd",
    "SalesTaxLineAdd",
    "ShippingLineAdd",
    "SetCredit",
    "LinkToTxnID",
  ],
  lines,
  defaults,
  computed: {
    BillAddressBlock: addressBlock("BillAddress", "BillAddressBlock"),
    ShipAddressBlock: addressBlock("ShipAddress", "ShipAddressBlock"),
    Subtotal: (record) => [leaf("Subtotal", money(invoiceSubtotal(record)))],
    SalesTaxPercentage: () => [leaf("SalesTaxPercentage", "0.00")],
    SalesTaxTotal: () => [leaf("SalesTaxTotal", "0.00")],
    AppliedAmount: () => [leaf("AppliedAmount", "0.00")],
    BalanceRemaining: (record) => [leaf("BalanceRemaining", money(invoiceSubtotal(record)))],
    IsPaid: (record) => [leaf("IsPaid", invoiceSubtotal(record).lte(0) ? "true" : "false")],
  },
  matchesFilters: (record, request, file) => {
    const entity = request.children.find((c) => c.name === "EntityFilter");
    if (entity !== undefined && !matchesEntity(record, entity, file)) return false;
    const paid = request.children.find((c) => c.name === "PaidStatus")?.text ?? "All";
    const isPaid = invoiceSubtotal(record).lte(0);
    return paid === "All" || (paid === "PaidOnly") === isPaid;
  },
});
