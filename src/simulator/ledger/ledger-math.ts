/**
 * What the application computes from stored transactions: line totals, sales tax, totals, amounts
 * applied by payments and credits, open balances of customers, vendors and accounts, and inventory
 * quantities. File-wide sums are derived once per change of the file ({@link CompanyFile.derived}).
 */
import Big from "big.js";
import type { XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { objectType } from "./objects.ts";
import { fieldText, refId, type LedgerLine, type LedgerRecord } from "./records.ts";

const ZERO = new Big(0);

/** A decimal text as Big (0 when absent or unreadable). */
export function big(text: string | undefined): Big {
  if (text === undefined || text === "") return ZERO;
  try {
    return new Big(text);
  } catch {
    return ZERO;
  }
}

/** Amount with two decimals. */
export function money(value: Big): string {
  return value.toFixed(2);
}

/** The amount a line contributes: its Amount, or a group's nested lines. */
export function lineAmount(line: LedgerLine): Big {
  const own = fieldText(line.fields, "Amount");
  if (own !== undefined) return big(own);
  // A group line: the sum of the lines it holds.
  return line.fields
    .filter((f) => f.children.some((c) => c.name === "TxnLineID"))
    .reduce((sum, nested) => sum.plus(big(nested.children.find((c) => c.name === "Amount")?.text)), ZERO);
}

/** Sum of the line amounts (journal entries excepted: they balance to zero). */
export function subtotal(record: LedgerRecord): Big {
  return record.lines.reduce((sum, line) => sum.plus(lineAmount(line)), ZERO);
}

function isTaxableCode(file: CompanyFile, codeId: string | undefined): boolean {
  if (codeId === undefined) return false;
  const code = file.recordById(codeId);
  return code !== undefined && fieldText(code.fields, "IsTaxable") === "true";
}

/** The rate (percent) of the record's sales tax item or group. */
export function salesTaxPercent(record: LedgerRecord, file: CompanyFile): Big {
  const taxId = refId(record.fields, "ItemSalesTaxRef");
  const tax = taxId === undefined ? undefined : file.recordById(taxId);
  if (tax === undefined) return ZERO;
  if (tax.object === "ItemSalesTaxGroup") {
    return tax.fields
      .filter((f) => f.name === "ItemSalesTaxRef")
      .map((f) => file.recordById(f.children.find((c) => c.name === "ListID")?.text ?? ""))
      .reduce(
        (sum, item) => sum.plus(big(item === undefined ? undefined : fieldText(item.fields, "TaxRate"))),
        ZERO,
      );
  }
  return big(fieldText(tax.fields, "TaxRate"));
}

/** Sales tax: the taxable lines (their tax code, else their item's) times the tax rate. */
export function salesTax(record: LedgerRecord, file: CompanyFile): Big {
  const percent = salesTaxPercent(record, file);
  if (percent.eq(0)) return ZERO;
  const taxable = record.lines.reduce((sum, line) => {
    let code = refId(line.fields, "SalesTaxCodeRef");
    if (code === undefined) {
      const item = file.recordById(refId(line.fields, "ItemRef") ?? "");
      code = item === undefined ? undefined : refId(item.fields, "SalesTaxCodeRef");
    }
    return isTaxableCode(file, code) ? sum.plus(lineAmount(line)) : sum;
  }, ZERO);
  return taxable.times(percent).div(100).round(2);
}

/** Total of a transaction: subtotal plus sales tax, or the amount the caller stated. */
export function total(record: LedgerRecord, file: CompanyFile): Big {
  const stated = fieldText(record.fields, "TotalAmount") ?? fieldText(record.fields, "Amount");
  if (record.lines.length === 0 && stated !== undefined) return big(stated);
  return subtotal(record).plus(salesTax(record, file));
}

/** One application of money to a transaction (a payment, a credit, a refund). */
export interface Application {
  readonly from: LedgerRecord;
  readonly amount: Big;
}

function applicationsOf(record: LedgerRecord): Array<{ target: string; amount: Big }> {
  const out: Array<{ target: string; amount: Big }> = [];
  for (const field of record.fields) {
    if (field.name !== "AppliedToTxnRet" && field.name !== "RefundAppliedToTxnRet") continue;
    const target = field.children.find((c) => c.name === "TxnID")?.text;
    if (target === undefined) continue;
    const amountText =
      field.children.find((c) => c.name === "PaymentAmount" || c.name === "RefundAmount")?.text ??
      field.children.find((c) => c.name === "Amount")?.text;
    out.push({ target, amount: big(amountText) });
    // A credit set against the same target (SetCredit: CreditTxnID + AppliedAmount).
    for (const credit of field.children.filter((c) => c.name === "SetCredit")) {
      const creditId = credit.children.find((c) => c.name === "CreditTxnID")?.text;
      const applied = big(credit.children.find((c) => c.name === "AppliedAmount")?.text);
      if (creditId !== undefined) {
        out.push({ target, amount: applied });
        out.push({ target: creditId, amount: applied });
      }
    }
  }
  return out;
}

/** Every application by the transaction it applies to. */
export function applicationsTo(file: CompanyFile): ReadonlyMap<string, readonly Application[]> {
  return file.derived("applications", () => {
    const map = new Map<string, Application[]>();
    for (const object of [
      "ReceivePayment",
      "BillPaymentCheck",
      "BillPaymentCreditCard",
      "ARRefundCreditCard",
    ]) {
      for (const from of file.recordsOf(object)) {
        for (const { target, amount } of applicationsOf(from)) {
          const list = map.get(target) ?? [];
          list.push({ from, amount });
          map.set(target, list);
        }
      }
    }
    return map;
  });
}

/** Sum applied to `record` by payments, credits and refunds. */
export function appliedTo(record: LedgerRecord, file: CompanyFile): Big {
  return (applicationsTo(file).get(record.id) ?? []).reduce((sum, a) => sum.plus(a.amount), ZERO);
}

/** Sum `record` (a payment) applies to other transactions. */
export function appliedBy(record: LedgerRecord): Big {
  return applicationsOf(record).reduce((sum, a) => sum.plus(a.amount), ZERO);
}

/** What is still open on an invoice, bill, charge, credit memo or vendor credit. */
export function openAmount(record: LedgerRecord, file: CompanyFile): Big {
  return total(record, file).minus(appliedTo(record, file));
}

/** Own open balance of every customer and vendor (their transactions and opening balance). */
function entityBalances(file: CompanyFile): ReadonlyMap<string, Big> {
  return file.derived("entityBalances", () => {
    const balances = new Map<string, Big>();
    const add = (id: string | undefined, amount: Big): void => {
      if (id !== undefined) balances.set(id, (balances.get(id) ?? ZERO).plus(amount));
    };
    for (const object of ["Customer", "Vendor"]) {
      for (const r of file.recordsOf(object)) add(r.id, big(fieldText(r.fields, "OpenBalance")));
    }
    for (const r of file.recordsOf("Invoice")) add(refId(r.fields, "CustomerRef"), openAmount(r, file));
    for (const r of file.recordsOf("Charge")) add(refId(r.fields, "CustomerRef"), openAmount(r, file));
    for (const r of file.recordsOf("CreditMemo"))
      add(refId(r.fields, "CustomerRef"), openAmount(r, file).neg());
    for (const r of file.recordsOf("ReceivePayment"))
      add(refId(r.fields, "CustomerRef"), total(r, file).minus(appliedBy(r)).neg());
    for (const r of file.recordsOf("Bill")) add(refId(r.fields, "VendorRef"), openAmount(r, file));
    for (const r of file.recordsOf("VendorCredit"))
      add(refId(r.fields, "VendorRef"), openAmount(r, file).neg());
    return balances;
  });
}

/** Children by parent ListID (jobs under customers, sub-accounts). */
function childrenIndex(file: CompanyFile, object: string): ReadonlyMap<string, readonly LedgerRecord[]> {
  return file.derived(`children:${object}`, () => {
    const map = new Map<string, LedgerRecord[]>();
    for (const r of file.recordsOf(object)) {
      const parent = refId(r.fields, "ParentRef");
      if (parent !== undefined) map.set(parent, [...(map.get(parent) ?? []), r]);
    }
    return map;
  });
}

/** Balance of a customer, vendor or account itself. */
export function ownBalance(record: LedgerRecord, file: CompanyFile): Big {
  if (record.object === "Account") return accountBalances(file).get(record.id) ?? ZERO;
  return entityBalances(file).get(record.id) ?? ZERO;
}

/** Balance including everything below the record (jobs, sub-accounts). */
export function totalBalance(record: LedgerRecord, file: CompanyFile): Big {
  const children = childrenIndex(file, record.object).get(record.id) ?? [];
  return children.reduce((sum, child) => sum.plus(totalBalance(child, file)), ownBalance(record, file));
}

/** Account balances: opening balance plus the receivable/payable transactions posted to them. */
function accountBalances(file: CompanyFile): ReadonlyMap<string, Big> {
  return file.derived("accountBalances", () => {
    const balances = new Map<string, Big>();
    const add = (id: string | undefined, amount: Big): void => {
      if (id !== undefined) balances.set(id, (balances.get(id) ?? ZERO).plus(amount));
    };
    for (const r of file.recordsOf("Account")) add(r.id, big(fieldText(r.fields, "OpenBalance")));
    for (const r of file.recordsOf("Invoice")) add(refId(r.fields, "ARAccountRef"), openAmount(r, file));
    for (const r of file.recordsOf("Bill")) add(refId(r.fields, "APAccountRef"), openAmount(r, file));
    for (const r of file.recordsOf("Deposit"))
      add(refId(r.fields, "DepositToAccountRef"), depositTotal(r, file));
    for (const r of file.recordsOf("Transfer")) {
      const amount = big(fieldText(r.fields, "Amount"));
      add(refId(r.fields, "TransferFromAccountRef"), amount.neg());
      add(refId(r.fields, "TransferToAccountRef"), amount);
    }
    return balances;
  });
}

/** Total of a deposit: its lines (a payment line counts the payment's amount) less cash back. */
export function depositTotal(record: LedgerRecord, file: CompanyFile): Big {
  let sum = ZERO;
  for (const line of record.lines) {
    if (line.element === "CashBackInfoRet") {
      sum = sum.minus(big(fieldText(line.fields, "Amount")));
      continue;
    }
    const stated = fieldText(line.fields, "Amount");
    const paymentId = fieldText(line.fields, "PaymentTxnID");
    const payment = paymentId === undefined ? undefined : file.recordById(paymentId);
    sum = sum.plus(stated !== undefined || payment === undefined ? big(stated) : total(payment, file));
  }
  return sum;
}

/** Quantities of one inventory item. */
export interface Stock {
  onHand: Big;
  value: Big;
  onOrder: Big;
  onSalesOrder: Big;
}

function itemLines(
  record: LedgerRecord,
): Array<{ item: string; quantity: Big; fields: readonly XmlElement[] }> {
  const out: Array<{ item: string; quantity: Big; fields: readonly XmlElement[] }> = [];
  const visit = (fields: readonly XmlElement[]): void => {
    const item = refId(fields, "ItemRef");
    if (item !== undefined) out.push({ item, quantity: big(fieldText(fields, "Quantity") ?? "1"), fields });
    for (const nested of fields.filter((f) => f.children.some((c) => c.name === "TxnLineID")))
      visit(nested.children);
  };
  for (const line of record.lines) visit(line.fields);
  return out;
}

const STOCK_IN = ["Bill", "ItemReceipt", "Check", "CreditCardCharge", "CreditMemo"];
const STOCK_OUT = ["Invoice", "SalesReceipt", "VendorCredit", "CreditCardCredit"];

/** Stock of every inventory item from the opening quantity and the inventory transactions. */
export function stockOf(file: CompanyFile): ReadonlyMap<string, Stock> {
  return file.derived("stock", () => {
    const stock = new Map<string, Stock>();
    const entry = (id: string): Stock => {
      let s = stock.get(id);
      if (s === undefined) {
        s = { onHand: ZERO, value: ZERO, onOrder: ZERO, onSalesOrder: ZERO };
        stock.set(id, s);
      }
      return s;
    };
    for (const object of ["ItemInventory", "ItemInventoryAssembly"]) {
      for (const r of file.recordsOf(object)) {
        const s = entry(r.id);
        s.onHand = big(fieldText(r.fields, "QuantityOnHand"));
        s.value = big(fieldText(r.fields, "TotalValue"));
      }
    }
    const isStocked = (id: string): boolean => stock.has(id);
    for (const object of STOCK_IN)
      for (const r of file.recordsOf(object))
        for (const l of itemLines(r))
          if (isStocked(l.item)) {
            const s = entry(l.item);
            s.onHand = s.onHand.plus(l.quantity);
            s.value = s.value.plus(big(fieldText(l.fields, "Amount")));
          }
    for (const object of STOCK_OUT)
      for (const r of file.recordsOf(object))
        for (const l of itemLines(r))
          if (isStocked(l.item)) entry(l.item).onHand = entry(l.item).onHand.minus(l.quantity);
    for (const r of file.recordsOf("InventoryAdjustment"))
      for (const line of r.lines) {
        const item = refId(line.fields, "ItemRef");
        if (item === undefined || !isStocked(item)) continue;
        const s = entry(item);
        s.onHand = s.onHand.plus(big(fieldText(line.fields, "QuantityDifference")));
        s.value = s.value.plus(big(fieldText(line.fields, "ValueDifference")));
      }
    for (const r of file.recordsOf("BuildAssembly")) {
      const item = refId(r.fields, "ItemInventoryAssemblyRef");
      if (item === undefined || !isStocked(item) || fieldText(r.fields, "IsPending") === "true") continue;
      const built = big(fieldText(r.fields, "QuantityToBuild"));
      entry(item).onHand = entry(item).onHand.plus(built);
      // A build uses its components: each one's quantity per assembly, times the quantity built.
      const assembly = file.recordById(item);
      for (const component of assembly === undefined ? [] : components(assembly))
        if (isStocked(component.item))
          entry(component.item).onHand = entry(component.item).onHand.minus(component.quantity.times(built));
    }
    for (const r of file.recordsOf("PurchaseOrder"))
      for (const l of itemLines(r))
        if (isStocked(l.item)) entry(l.item).onOrder = entry(l.item).onOrder.plus(l.quantity);
    for (const r of file.recordsOf("SalesOrder"))
      for (const l of itemLines(r))
        if (isStocked(l.item)) entry(l.item).onSalesOrder = entry(l.item).onSalesOrder.plus(l.quantity);
    return stock;
  });
}

/** The component items of an inventory assembly and the quantity of each one assembly needs. */
function components(assembly: LedgerRecord): Array<{ item: string; quantity: Big }> {
  return assembly.fields
    .filter((f) => f.name === "ItemInventoryAssemblyLine")
    .map((f) => ({
      item: refId(f.children, "ItemInventoryRef") ?? "",
      quantity: big(fieldText(f.children, "Quantity")),
    }))
    .filter((c) => c.item !== "" && c.quantity.gt(0));
}

/**
 * How many of an inventory assembly the components on hand allow building: the smallest whole number
 * of assemblies any one component covers (0 for an assembly without components).
 */
export function quantityCanBuild(assembly: LedgerRecord, file: CompanyFile): Big {
  const stock = stockOf(file);
  let most: Big | undefined;
  for (const component of components(assembly)) {
    const covered = (stock.get(component.item)?.onHand ?? ZERO)
      .div(component.quantity)
      .round(0, Big.roundDown);
    if (most === undefined || covered.lt(most)) most = covered;
  }
  return most === undefined || most.lt(0) ? ZERO : most;
}

/** Whether the object is one whose totals come from lines (a sales or purchase form). */
export function hasLines(object: string): boolean {
  return (objectType(object)?.lineFamilies.size ?? 0) > 0;
}
