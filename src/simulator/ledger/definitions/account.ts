/**
 * Account (list, hierarchical). Element names and order follow AccountAdd / AccountMod /
 * AccountQueryRq / AccountRet of qbXML 13.0.
 */
import Big from "big.js";
import { many, opt, req, type Model } from "../content-model.ts";
import type { FileView, LedgerRecord } from "../records.ts";
import { invoiceSubtotal } from "./invoice.ts";
import { leaf, node } from "../xml-tree.ts";
import { REF, defineRecord, fieldText, listQueryModel, money, refId, sum } from "./common.ts";

function body(mod: boolean): Model {
  return [
    ...(mod ? [req("ListID"), req("EditSequence"), opt("Name")] : [req("Name")]),
    opt("IsActive", "bool"),
    opt("ParentRef", REF),
    mod ? opt("AccountType") : req("AccountType"),
    ...(mod ? [] : [opt("DetailAccountType")]),
    opt("AccountNumber"),
    opt("BankNumber"),
    opt("Desc"),
    opt("OpenBalance", "amount"),
    opt("OpenBalanceDate", "date"),
    opt("SalesTaxCodeRef", REF),
    opt("TaxLineID", "int"),
    opt("CurrencyRef", REF),
  ];
}

/** Opening balance, plus open invoices for receivable accounts. */
function ownBalance(record: LedgerRecord, file: FileView): Big {
  const opening = new Big(fieldText(record.fields, "OpenBalance") ?? "0");
  if (fieldText(record.fields, "AccountType") !== "AccountsReceivable") return opening;
  const invoices = file.recordsOf("Invoice").filter((inv) => refId(inv.fields, "ARAccountRef") === record.id);
  return opening.plus(sum(invoices, invoiceSubtotal));
}

function totalBalance(record: LedgerRecord, file: FileView): Big {
  const children = file.recordsOf("Account").filter((a) => refId(a.fields, "ParentRef") === record.id);
  return ownBalance(record, file).plus(sum(children, (c) => totalBalance(c, file)));
}

const SPECIAL_TYPES: Readonly<Record<string, string>> = { AccountsReceivable: "AccountsReceivable" };

/** The Account definition. */
export const accountDefinition = defineRecord({
  object: "Account",
  kind: "list",
  hierarchical: true,
  addModel: body(false),
  modModel: body(true),
  queryModel: listQueryModel([many("AccountType"), opt("CurrencyFilter", "any")]),
  retOrder: [
    "ListID",
    "TimeCreated",
    "TimeModified",
    "EditSequence",
    "Name",
    "FullName",
    "IsActive",
    "ParentRef",
    "Sublevel",
    "AccountType",
    "DetailAccountType",
    "SpecialAccountType",
    "IsTaxAccount",
    "AccountNumber",
    "BankNumber",
    "LastCheckNumber",
    "Desc",
    "Balance",
    "TotalBalance",
    "SalesTaxCodeRef",
    "TaxLineInfoRet",
    "CashFlowClassification",
    "CurrencyRef",
    "DataExtRet",
  ],
  refs: { ParentRef: "Account" },
  amounts: ["OpenBalance"],
  defaults: () => [leaf("IsActive", "true")],
  computed: {
    SpecialAccountType: (record) => {
      const special = SPECIAL_TYPES[fieldText(record.fields, "AccountType") ?? ""];
      return special === undefined ? [] : [leaf("SpecialAccountType", special)];
    },
    Balance: (record, file) => [leaf("Balance", money(ownBalance(record, file)))],
    TotalBalance: (record, file) => [leaf("TotalBalance", money(totalBalance(record, file)))],
    TaxLineInfoRet: (record) => {
      const id = fieldText(record.fields, "TaxLineID");
      return id === undefined
        ? []
        : [
            node("TaxLineInfoRet", [
              leaf("TaxLineID", id),
              leaf("TaxLineName", id === "9920" ? "<Not tax related>" : `Tax line ${id}`),
            ]),
          ];
    },
    CashFlowClassification: (record) => {
      const type = fieldText(record.fields, "AccountType");
      const value =
        type === "Bank" ? "NotApplicable" : type === "AccountsReceivable" ? "Operating" : "NotApplicable";
      return [leaf("CashFlowClassification", value)];
    },
  },
  matchesFilters: (record, request) => {
    const types = request.children.filter((c) => c.name === "AccountType").map((c) => c.text);
    return types.length === 0 || types.includes(fieldText(record.fields, "AccountType") ?? "");
  },
});
