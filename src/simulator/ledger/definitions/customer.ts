/**
 * Customer (list, hierarchical: jobs are `Parent:Child`). Element names and order follow the
 * CustomerAdd / CustomerMod / CustomerQueryRq / CustomerRet sequences of qbXML 13.0.
 */
import Big from "big.js";
import { many, opt, req, type Model } from "../content-model.ts";
import type { FileView, LedgerRecord } from "../records.ts";
import { invoiceSubtotal } from "./invoice.ts";
import { leaf } from "../xml-tree.ts";
import {
  ADDRESS,
  REF,
  addressBlock,
  defineRecord,
  fieldText,
  listQueryModel,
  money,
  refId,
  sum,
} from "./common.ts";

const PERSON_NAME: Model = [
  opt("Salutation"),
  opt("FirstName"),
  opt("MiddleName"),
  opt("LastName"),
  opt("Suffix"),
];
const COMM_INFO: Model = [
  opt("Phone"),
  opt("Mobile"),
  opt("Pager"),
  opt("AltPhone"),
  opt("Fax"),
  opt("Email"),
  opt("Cc"),
  opt("Contact"),
  opt("AltContact"),
];

function body(mod: boolean): Model {
  return [
    ...(mod ? [req("ListID"), req("EditSequence"), opt("Name")] : [req("Name")]),
    opt("IsActive", "bool"),
    opt("ClassRef", REF),
    opt("ParentRef", REF),
    opt("CompanyName"),
    ...PERSON_NAME,
    opt("JobTitle"),
    opt("BillAddress", ADDRESS),
    opt("ShipAddress", ADDRESS),
    many("ShipToAddress", "any", 50),
    opt("PrintAs"),
    ...COMM_INFO,
    many("AdditionalContactRef", "any", 8),
    many(mod ? "ContactsMod" : "Contacts", "any"),
    opt("CustomerTypeRef", REF),
    opt("TermsRef", REF),
    opt("SalesRepRef", REF),
    ...(mod ? [] : [opt("OpenBalance", "amount"), opt("OpenBalanceDate", "date")]),
    opt("SalesTaxCodeRef", REF),
    opt("ItemSalesTaxRef", REF),
    opt("SalesTaxCountry"),
    opt("ResaleNumber"),
    opt("AccountNumber"),
    opt("CreditLimit", "amount"),
    opt("PreferredPaymentMethodRef", REF),
    opt("CreditCardInfo", "any"),
    opt("JobStatus"),
    opt("JobStartDate", "date"),
    opt("JobProjectedEndDate", "date"),
    opt("JobEndDate", "date"),
    opt("JobDesc"),
    opt("JobTypeRef", REF),
    opt("Notes"),
    many(mod ? "AdditionalNotesMod" : "AdditionalNotes", "any"),
    opt("IsStatementWithParent", "bool"),
    opt("DeliveryMethod"),
    opt("PreferredDeliveryMethod"),
    opt("PriceLevelRef", REF),
    ...(mod ? [] : [opt("ExternalGUID")]),
    opt("TaxRegistrationNumber"),
    opt("CurrencyRef", REF),
  ];
}

/** Open balance plus unpaid invoices of this customer (not of its jobs). */
function ownBalance(record: LedgerRecord, file: FileView): Big {
  const opening = new Big(fieldText(record.fields, "OpenBalance") ?? "0");
  const invoices = file.recordsOf("Invoice").filter((inv) => refId(inv.fields, "CustomerRef") === record.id);
  return opening.plus(sum(invoices, invoiceSubtotal));
}

function totalBalance(record: LedgerRecord, file: FileView): Big {
  const jobs = file.recordsOf("Customer").filter((c) => refId(c.fields, "ParentRef") === record.id);
  return ownBalance(record, file).plus(sum(jobs, (job) => totalBalance(job, file)));
}

/** The Customer definition. */
export const customerDefinition = defineRecord({
  object: "Customer",
  kind: "list",
  hierarchical: true,
  addModel: body(false),
  modModel: body(true),
  queryModel: listQueryModel([
    opt("TotalBalanceFilter", "any"),
    opt("CurrencyFilter", "any"),
    opt("ClassFilter", "any"),
  ]),
  retOrder: [
    "ListID",
    "TimeCreated",
    "TimeModified",
    "EditSequence",
    "Name",
    "FullName",
    "IsActive",
    "ClassRef",
    "ParentRef",
    "Sublevel",
    "CompanyName",
    "Salutation",
    "FirstName",
    "MiddleName",
    "LastName",
    "Suffix",
    "JobTitle",
    "BillAddress",
    "BillAddressBlock",
    "ShipAddress",
    "ShipAddressBlock",
    "ShipToAddress",
    "PrintAs",
    "Phone",
    "Mobile",
    "Pager",
    "AltPhone",
    "Fax",
    "Email",
    "Cc",
    "Contact",
    "AltContact",
    "AdditionalContactRef",
    "ContactsRet",
    "CustomerTypeRef",
    "TermsRef",
    "SalesRepRef",
    "Balance",
    "TotalBalance",
    "SalesTaxCodeRef",
    "ItemSalesTaxRef",
    "SalesTaxCountry",
    "ResaleNumber",
    "AccountNumber",
    "CreditLimit",
    "PreferredPaymentMethodRef",
    "CreditCardInfo",
    "JobStatus",
    "JobStartDate",
    "JobProjectedEndDate",
    "JobEndDate",
    "JobDesc",
    "JobTypeRef",
    "Notes",
    "AdditionalNotesRet",
    "IsStatementWithParent",
    "DeliveryMethod",
    "PreferredDeliveryMethod",
    "PriceLevelRef",
    "ExternalGUID",
    "TaxRegistrationNumber",
    "CurrencyRef",
    "DataExtRet",
  ],
  refs: { ParentRef: "Customer" },
  amounts: ["OpenBalance", "CreditLimit"],
  unsupported: [
    "Contacts",
    "ContactsMod",
    "AdditionalNotes",
    "AdditionalNotesMod",
    "CreditCardInfo",
    "IsStatementWithParent",
  ],
  defaults: () => [leaf("IsActive", "true"), leaf("JobStatus", "None")],
  computed: {
    BillAddressBlock: addressBlock("BillAddress", "BillAddressBlock"),
    ShipAddressBlock: addressBlock("ShipAddress", "ShipAddressBlock"),
    Balance: (record, file) => [leaf("Balance", money(ownBalance(record, file)))],
    TotalBalance: (record, file) => [leaf("TotalBalance", money(totalBalance(record, file)))],
  },
});
