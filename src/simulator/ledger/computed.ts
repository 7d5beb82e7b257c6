/**
 * The named table of values the application computes when it writes a record element: totals, tax,
 * applied and open amounts, balances, stock, address blocks, linked and applied-to transactions.
 * Each entry answers for a Ret element name and returns nothing when it does not apply to the
 * record, so the same table serves every object type.
 */
import type Big from "big.js";
import { leaf, node, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import {
  appliedBy,
  appliedTo,
  applicationsTo,
  big,
  depositTotal,
  money,
  openAmount,
  ownBalance,
  quantityCanBuild,
  salesTax,
  salesTaxPercent,
  stockOf,
  subtotal,
  total,
  totalBalance,
} from "./ledger-math.ts";
import { fieldText, refId, type LedgerRecord } from "./records.ts";

/** What a computed value may look at. */
export interface ComputeScope {
  readonly file: CompanyFile;
  readonly record: LedgerRecord;
  /** Query asked for linked transactions (Add/Mod answers always carry them). */
  readonly includeLinked: boolean;
}

type Compute = (scope: ComputeScope) => string | XmlElement[] | undefined;

function signed(value: Big): string {
  return value.eq(0) ? "0.00" : money(value);
}

function hasApplications(record: LedgerRecord): boolean {
  return record.fields.some((f) => f.name === "AppliedToTxnRet" || f.name === "RefundAppliedToTxnRet");
}

function stockField(pick: (s: { onHand: Big; value: Big; onOrder: Big; onSalesOrder: Big }) => string) {
  return ({ file, record }: ComputeScope): string | undefined => {
    const item =
      record.object === "BuildAssembly" ? refId(record.fields, "ItemInventoryAssemblyRef") : record.id;
    const stock = stockOf(file).get(item ?? "");
    return stock === undefined ? undefined : pick(stock);
  };
}

/** `Address` → the block the application prints under it: street lines, "City, State Zip", Country. */
function addressBlock(address: XmlElement | undefined): XmlElement[] | undefined {
  if (address === undefined) return undefined;
  const get = (name: string): string => address.children.find((c) => c.name === name)?.text ?? "";
  const lines = ["Addr1", "Addr2", "Addr3", "Addr4", "Addr5"].map(get).filter((v) => v !== "");
  const city = [[get("City"), get("State")].filter((v) => v !== "").join(", "), get("PostalCode")]
    .filter((v) => v !== "")
    .join(" ");
  if (city !== "") lines.push(city);
  if (get("Country") !== "") lines.push(get("Country"));
  return lines.length === 0 ? undefined : lines.slice(0, 5).map((text, i) => leaf(`Addr${i + 1}`, text));
}

/** The transaction a stored TxnID names, as the application summarises it. */
function txnSummary(
  file: CompanyFile,
  txnId: string,
): { type: string; date: string; ref: string | undefined } {
  const txn = file.recordById(txnId);
  return {
    type: txn?.object ?? "Invoice",
    date: (txn === undefined ? undefined : fieldText(txn.fields, "TxnDate")) ?? "",
    ref: txn === undefined ? undefined : fieldText(txn.fields, "RefNumber"),
  };
}

function linkedTxns({ file, record, includeLinked }: ComputeScope): XmlElement[] | undefined {
  if (!includeLinked) return [];
  return (applicationsTo(file).get(record.id) ?? []).map(({ from, amount }) =>
    node("LinkedTxn", [
      leaf("TxnID", from.id),
      leaf("TxnType", from.object === "ARRefundCreditCard" ? "ARRefundCreditCard" : from.object),
      leaf("TxnDate", fieldText(from.fields, "TxnDate") ?? ""),
      ...(fieldText(from.fields, "RefNumber") === undefined
        ? []
        : [leaf("RefNumber", fieldText(from.fields, "RefNumber") ?? "")]),
      leaf("LinkType", "AMTTYPE"),
      leaf("Amount", signed(amount.neg())),
    ]),
  );
}

const TABLE: Readonly<Record<string, Compute>> = {
  IsActive: () => "true",
  Subtotal: ({ record }) => money(subtotal(record)),
  SalesTaxPercentage: ({ record, file }) => money(salesTaxPercent(record, file)),
  SalesTaxTotal: ({ record, file }) => money(salesTax(record, file)),
  TotalAmount: ({ record, file }) =>
    record.lines.length > 0 || !hasApplications(record)
      ? money(total(record, file))
      : money(appliedBy(record)),
  AmountDue: ({ record, file }) => money(total(record, file)),
  CreditAmount: ({ record, file }) => money(total(record, file)),
  OpenAmount: ({ record, file }) => money(openAmount(record, file)),
  CreditRemaining: ({ record, file }) => money(openAmount(record, file)),
  BalanceRemaining: ({ record, file }) => money(openAmount(record, file)),
  AppliedAmount: ({ record, file }) => signed(appliedTo(record, file).neg()),
  IsPaid: ({ record, file }) => (openAmount(record, file).lte(0) ? "true" : "false"),
  UnusedPayment: ({ record, file }) => money(total(record, file).minus(appliedBy(record))),
  UnusedCredits: () => "0.00",
  Amount: ({ record }) => {
    if (record.lines.length > 0) return money(subtotal(record));
    if (hasApplications(record)) return money(appliedBy(record));
    const rate = fieldText(record.fields, "Rate");
    return rate === undefined
      ? undefined
      : money(big(rate).times(big(fieldText(record.fields, "Quantity") ?? "1")));
  },
  DepositTotal: ({ record, file }) => money(depositTotal(record, file)),
  Balance: ({ record, file }) => money(ownBalance(record, file)),
  TotalBalance: ({ record, file }) => money(totalBalance(record, file)),
  QuantityOnHand: stockField((s) => s.onHand.toString()),
  AverageCost: stockField((s) => (s.onHand.eq(0) ? "0" : s.value.div(s.onHand).round(5).toString())),
  QuantityOnOrder: stockField((s) => s.onOrder.toString()),
  QuantityOnSalesOrder: stockField((s) => s.onSalesOrder.toString()),
  QuantityCanBuild: ({ file, record }) => {
    const assembly = file.recordById(refId(record.fields, "ItemInventoryAssemblyRef") ?? "");
    return assembly === undefined ? "0" : quantityCanBuild(assembly, file).toString();
  },
  LinkedTxn: linkedTxns,
};

/** Values computed for Ret element `name` of `scope.record`, or undefined when none applies. */
export function computedValue(name: string, scope: ComputeScope): XmlElement[] | undefined {
  if (name.endsWith("AddressBlock")) {
    const address = scope.record.fields.find((f) => f.name === name.replace(/Block$/, ""));
    const lines = addressBlock(address);
    return lines === undefined ? undefined : [node(name, lines)];
  }
  const compute = TABLE[name];
  const value = compute?.(scope);
  if (value === undefined) return undefined;
  return typeof value === "string" ? [leaf(name, value)] : value;
}

/** Computed children of a stored applied-to entry (the target's type, date, number, balance). */
export function appliedToValue(name: string, stored: XmlElement, file: CompanyFile): string | undefined {
  const txnId = stored.children.find((c) => c.name === "TxnID")?.text ?? "";
  const summary = txnSummary(file, txnId);
  const target = file.recordById(txnId);
  switch (name) {
    case "TxnType":
      return summary.type;
    case "TxnDate":
      return summary.date === "" ? undefined : summary.date;
    case "RefNumber":
      return summary.ref;
    case "BalanceRemaining":
    case "CreditRemaining":
      return target === undefined ? undefined : money(openAmount(target, file));
    case "Amount":
      return stored.children.find((c) => c.name === "PaymentAmount")?.text;
    default:
      return undefined;
  }
}
