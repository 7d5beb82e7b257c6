/**
 * The typed resource groups: which application object each path segment serves and which actions
 * it offers. Facts from the spec ("Typed resource endpoints", the batch operation index) and the
 * market's published resource list (`../shared/reference/resource-catalogue.md`), in our neutral
 * names. Everything else about a group (its fields, filters, XML element order) is derived from the
 * application's schema table by `definitions.ts`; this file only says what exists.
 */

/**
 * What a typed endpoint can do (spec: batch, "Actions are list, retrieve, create, update, delete,
 * void, merge, setCustomField. Some resources add `canBuild` (inventory assembly items)").
 */
export type ResourceAction =
  | "list"
  | "retrieve"
  | "create"
  | "update"
  | "upsert"
  | "delete"
  | "void"
  | "merge"
  | "setCustomField"
  | "canBuild";

/** How the application lists a group: with its own iterators (cursor) or all at once (complete). */
export type ListKind = "cursor" | "complete";

/** One resource group as declared. */
export interface CatalogueEntry {
  /** camelCase name, used in operation IDs (`ledger.<resource>.<action>`). */
  readonly resource: string;
  /** Path segment under `/v1/ledger-desktop/`. */
  readonly path: string;
  readonly objectType: string;
  /** The application's object name: `Invoice` → InvoiceAddRq, InvoiceRet, TxnDelType `Invoice`. */
  readonly object: string;
  /** Transactions are identified by TxnID, list objects by ListID. */
  readonly kind: "list" | "transaction";
  readonly actions: readonly ResourceAction[];
  readonly listKind: ListKind | null;
  /** The query request when it is not `<object>QueryRq` (and its record element when not `<object>Ret`). */
  readonly query?: { readonly request: string; readonly ret: string };
  /** Whether the group is in the market's list (the coverage goal) or added by our spec. */
  readonly origin: "market" | "spec";
  /** A singleton read without an id (company, preferences). */
  readonly singleton?: boolean;
  /**
   * The group's messages follow none of the generic patterns (its records have no ListID or TxnID):
   * its actions are this named set of the action table (`GROUP_ACTIONS`), exactly as declared.
   */
  readonly actionSet?: "customFieldDefinitions";
}

const ALL_TXN: readonly ResourceAction[] = ["list", "retrieve", "create", "update", "delete", "void"];
const CRU: readonly ResourceAction[] = ["list", "retrieve", "create", "update"];
const CR: readonly ResourceAction[] = ["list", "retrieve", "create"];

function txn(
  resource: string,
  path: string,
  object: string,
  actions: readonly ResourceAction[] = ALL_TXN,
  listKind: ListKind = "cursor",
  origin: "market" | "spec" = "market",
): CatalogueEntry {
  return {
    resource,
    path,
    objectType: objectTypeOf(path),
    object,
    kind: "transaction",
    actions,
    listKind,
    origin,
  };
}

function list(
  resource: string,
  path: string,
  object: string,
  actions: readonly ResourceAction[] = CRU,
  listKind: ListKind = "complete",
  origin: "market" | "spec" = "market",
): CatalogueEntry {
  return { resource, path, objectType: objectTypeOf(path), object, kind: "list", actions, listKind, origin };
}

function queryOnly(
  resource: string,
  path: string,
  kind: "list" | "transaction",
  request: string,
  ret: string,
  options: {
    actions?: readonly ResourceAction[];
    listKind?: ListKind | null;
    origin?: "market" | "spec";
    singleton?: boolean;
    objectType?: string;
  } = {},
): CatalogueEntry {
  return {
    resource,
    path,
    objectType: options.objectType ?? objectTypeOf(path),
    object: ret.replace(/Ret$/, ""),
    kind,
    actions: options.actions ?? ["list"],
    listKind: options.listKind === undefined ? "complete" : options.listKind,
    query: { request, ret },
    origin: options.origin ?? "market",
    ...(options.singleton ? { singleton: true } : {}),
  };
}

/** `credit-card-charges` → `ledger_credit_card_charge` (plural path, singular object type). */
export function objectTypeOf(path: string): string {
  const words = path.split("-");
  const last = words.pop() ?? "";
  const singular = /ies$/.test(last)
    ? last.replace(/ies$/, "y")
    : /(ss|x|ch|sh)es$/.test(last)
      ? last.replace(/es$/, "")
      : last.replace(/s$/, "");
  return `ledger_${[...words, singular].join("_")}`;
}

/** Every resource group (reports are served by their own module, `reports.ts`). */
export const CATALOGUE: readonly CatalogueEntry[] = [
  queryOnly(
    "accountTaxLines",
    "account-tax-lines",
    "list",
    "AccountTaxLineInfoQueryRq",
    "AccountTaxLineInfoRet",
  ),
  list("accounts", "accounts", "Account"),
  txn("billCheckPayments", "bill-check-payments", "BillPaymentCheck"),
  txn("billCreditCardPayments", "bill-credit-card-payments", "BillPaymentCreditCard", [
    "list",
    "retrieve",
    "create",
    "delete",
    "void",
  ]),
  txn("bills", "bills", "Bill"),
  // The path's last word is not the object (market: `bill_to_pay`, `payment_to_deposit`).
  queryOnly("billsToPay", "bills-to-pay", "transaction", "BillToPayQueryRq", "BillToPayRet", {
    objectType: "ledger_bill_to_pay",
  }),
  txn("buildAssemblies", "build-assemblies", "BuildAssembly", [
    "list",
    "retrieve",
    "create",
    "update",
    "delete",
  ]),
  txn("checks", "checks", "Check"),
  list("classes", "classes", "Class"),
  queryOnly("company", "company", "list", "CompanyQueryRq", "CompanyRet", {
    actions: ["retrieve"],
    listKind: null,
    singleton: true,
  }),
  txn("creditCardCharges", "credit-card-charges", "CreditCardCharge"),
  txn("creditCardCredits", "credit-card-credits", "CreditCardCredit"),
  txn("creditCardRefunds", "credit-card-refunds", "ARRefundCreditCard", [
    "list",
    "retrieve",
    "create",
    "delete",
    "void",
  ]),
  txn("creditMemos", "credit-memos", "CreditMemo"),
  list("currencies", "currencies", "Currency"),
  list("customerTypes", "customer-types", "CustomerType", CR),
  list("customers", "customers", "Customer", CRU, "cursor"),
  list("dateDrivenTerms", "date-driven-terms", "DateDrivenTerms", CR),
  queryOnly("deletedListObjects", "deleted-list-objects", "list", "ListDeletedQueryRq", "ListDeletedRet"),
  queryOnly(
    "deletedTransactions",
    "deleted-transactions",
    "transaction",
    "TxnDeletedQueryRq",
    "TxnDeletedRet",
  ),
  txn("deposits", "deposits", "Deposit"),
  list("discountItems", "discount-items", "ItemDiscount", CRU, "cursor"),
  list("employees", "employees", "Employee"),
  txn("estimates", "estimates", "Estimate", ["list", "retrieve", "create", "update", "delete"]),
  txn("inventoryAdjustments", "inventory-adjustments", "InventoryAdjustment", ALL_TXN, "complete"),
  list("inventoryAssemblyItems", "inventory-assembly-items", "ItemInventoryAssembly", CRU, "cursor"),
  list("inventoryItems", "inventory-items", "ItemInventory", CRU, "cursor"),
  list("inventorySites", "inventory-sites", "InventorySite"),
  txn("invoices", "invoices", "Invoice"),
  list("itemGroups", "item-groups", "ItemGroup", CRU, "cursor"),
  txn("itemReceipts", "item-receipts", "ItemReceipt"),
  queryOnly("itemSites", "item-sites", "list", "ItemSitesQueryRq", "ItemSitesRet", {
    actions: ["list", "retrieve"],
    listKind: "cursor",
  }),
  txn("journalEntries", "journal-entries", "JournalEntry"),
  list("nonInventoryItems", "non-inventory-items", "ItemNonInventory", CRU, "cursor"),
  list("otherChargeItems", "other-charge-items", "ItemOtherCharge", CRU, "cursor"),
  list("otherNames", "other-names", "OtherName"),
  list("paymentMethods", "payment-methods", "PaymentMethod", CR),
  queryOnly(
    "paymentsToDeposit",
    "payments-to-deposit",
    "transaction",
    "ReceivePaymentToDepositQueryRq",
    "ReceivePaymentToDepositRet",
    { objectType: "ledger_payment_to_deposit" },
  ),
  list("payrollWageItems", "payroll-wage-items", "PayrollItemWage", CR, "cursor"),
  queryOnly("preferences", "preferences", "list", "PreferencesQueryRq", "PreferencesRet", {
    actions: ["retrieve"],
    listKind: null,
    singleton: true,
    objectType: "ledger_preferences",
  }),
  list("priceLevels", "price-levels", "PriceLevel"),
  txn("purchaseOrders", "purchase-orders", "PurchaseOrder", [
    "list",
    "retrieve",
    "create",
    "update",
    "delete",
  ]),
  txn("receivePayments", "receive-payments", "ReceivePayment", [
    "list",
    "retrieve",
    "create",
    "update",
    "delete",
  ]),
  txn("salesOrders", "sales-orders", "SalesOrder", ["list", "retrieve", "create", "update", "delete"]),
  txn("salesReceipts", "sales-receipts", "SalesReceipt"),
  list("salesRepresentatives", "sales-representatives", "SalesRep"),
  list("salesTaxCodes", "sales-tax-codes", "SalesTaxCode"),
  list("salesTaxGroupItems", "sales-tax-group-items", "ItemSalesTaxGroup", CRU, "cursor"),
  list("salesTaxItems", "sales-tax-items", "ItemSalesTax", CRU, "cursor"),
  txn("salesTaxPaymentChecks", "sales-tax-payment-checks", "SalesTaxPaymentCheck"),
  list("serviceItems", "service-items", "ItemService", CRU, "cursor"),
  list("shippingMethods", "shipping-methods", "ShipMethod", CR),
  list("standardTerms", "standard-terms", "StandardTerms", CR),
  list("subtotalItems", "subtotal-items", "ItemSubtotal", CRU, "cursor"),
  queryOnly("templates", "templates", "list", "TemplateQueryRq", "TemplateRet"),
  txn("timeTrackingActivities", "time-tracking-activities", "TimeTracking", [
    "list",
    "retrieve",
    "create",
    "update",
    "delete",
  ]),
  queryOnly("transactions", "transactions", "transaction", "TransactionQueryRq", "TransactionRet", {
    actions: ["list", "retrieve"],
    listKind: "cursor",
  }),
  txn("transfers", "transfers", "Transfer", ["list", "retrieve", "create", "update"]),
  list("unitOfMeasureSets", "unit-of-measure-sets", "UnitOfMeasureSet", CR),
  txn("vendorCredits", "vendor-credits", "VendorCredit"),
  list("vendors", "vendors", "Vendor", CRU, "cursor"),
  // Groups our spec names beyond the market's list (spec: batch operation index).
  list("billingRates", "billing-rates", "BillingRate", CR, "complete", "spec"),
  list("customerMessages", "customer-messages", "CustomerMsg", CR, "complete", "spec"),
  // Custom field definitions: the application's data extension definitions, named by owner and name.
  {
    ...list(
      "customFieldDefinitions",
      "custom-field-definitions",
      "DataExtDef",
      ["list", "create", "update", "delete"],
      "complete",
      "spec",
    ),
    actionSet: "customFieldDefinitions",
  },
  queryOnly("entities", "entities", "list", "EntityQueryRq", "EntityRet", {
    actions: ["list", "retrieve"],
    listKind: "cursor",
    origin: "spec",
  }),
  list("fixedAssetItems", "fixed-asset-items", "ItemFixedAsset", CRU, "cursor", "spec"),
  txn(
    "inventoryTransfers",
    "inventory-transfers",
    "TransferInventory",
    ["list", "retrieve", "create", "update", "delete"],
    "cursor",
    "spec",
  ),
  queryOnly("items", "items", "list", "ItemQueryRq", "ItemRet", {
    actions: ["list", "retrieve"],
    listKind: "cursor",
    origin: "spec",
  }),
  list("jobTypes", "job-types", "JobType", CR, "complete", "spec"),
  list("leads", "leads", "Lead", CRU, "complete", "spec"),
  list("paymentItems", "payment-items", "ItemPayment", CRU, "cursor", "spec"),
  queryOnly(
    "payrollNonWageItems",
    "payroll-non-wage-items",
    "list",
    "PayrollItemNonWageQueryRq",
    "PayrollItemNonWageRet",
    { actions: ["list", "retrieve"], origin: "spec" },
  ),
];
