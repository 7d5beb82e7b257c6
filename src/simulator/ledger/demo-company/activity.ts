/**
 * A year of the demo company's business: estimates, sales orders, invoices (open, partly paid,
 * paid, pending), sales receipts, credit memos and refunds, payments applied to invoices, deposits
 * of what was received, purchase orders, item receipts, bills and their payments (by check and by
 * card), vendor credits, checks (one voided), card charges and credits, transfers, journal
 * entries, time tracking, inventory adjustments, builds and transfers, sales tax payments, and a
 * record of each kind deleted (the bookkeeping besides sales and bills is in `books.ts`). Amounts
 * are whole cents (`amounts.ts`), so payments never exceed what is owed.
 */
import type { SeededRandom } from "../../../platform/seeded-random.ts";
import { BASE_YEAR, dateOf, daysIn, monthEnd, dateInYear } from "./calendar.ts";
import type { DemoLists } from "./lists.ts";
import { ref, type Spec } from "./messages.ts";
import {
  days,
  EXPENSE_ACCOUNTS,
  MEMOS,
  money,
  part,
  SALES_TAX_GROUP,
  sale,
  taxOn,
  type Receipt,
} from "./amounts.ts";
import { RENT_CHECK_KEY, writeBooks } from "./books.ts";
import type { DemoWriter } from "./writer.ts";

/** How many of the main transactions the year holds (the rest follow from these). */
export interface ActivityCounts {
  readonly invoices: number;
  readonly salesReceipts: number;
  readonly estimates: number;
  readonly salesOrders: number;
  readonly purchaseOrders: number;
  readonly bills: number;
  readonly checks: number;
  readonly cardCharges: number;
  readonly timeEntries: number;
}

/** Queues and sends the year's transactions. */
export function writeActivity(
  w: DemoWriter,
  random: SeededRandom,
  lists: DemoLists,
  counts: ActivityCounts,
): void {
  const year = BASE_YEAR;
  const yearDays = daysIn(year);
  const date = (day: number): string => dateInYear(year, day);
  // Due and expected dates may fall in the next year.
  const later = (day: number): string => dateOf(year, day);
  const customer = () => random.pick(lists.billTo);
  const vendor = () => random.pick(lists.vendors);

  // Sales: estimates and orders first, then invoices and receipts.
  days(random, counts.estimates).forEach((day) => {
    const to = customer();
    const { lines } = sale(random, lists, to.taxable);
    w.txn("Estimate", {
      CustomerRef: ref(to.fullName),
      TxnDate: date(day),
      IsActive: random.chance(0.6),
      ItemSalesTaxRef: ref(SALES_TAX_GROUP),
      Memo: "Estimate",
      EstimateLineAdd: lines,
    });
  });
  days(random, counts.salesOrders).forEach((day) => {
    const to = customer();
    const { lines } = sale(random, lists, to.taxable);
    w.txn("SalesOrder", {
      CustomerRef: ref(to.fullName),
      TxnDate: date(day),
      ShipMethodRef: ref(random.pick(["Our Truck", "UPS", "FedEx"])),
      ItemSalesTaxRef: ref(SALES_TAX_GROUP),
      IsManuallyClosed: random.chance(0.3),
      SalesOrderLineAdd: lines,
    });
  });
  const invoices: Array<{ key: string; day: number; cents: number; customer: string; pending: boolean }> = [];
  days(random, counts.invoices).forEach((day, i) => {
    const to = customer();
    const { lines, totalCents } = sale(random, lists, to.taxable);
    const pending = random.chance(0.02);
    const key = `invoice:${i}`;
    invoices.push({ key, day, cents: totalCents, customer: to.fullName, pending });
    w.txn(
      "Invoice",
      {
        CustomerRef: ref(to.fullName),
        ClassRef: random.chance(0.5)
          ? ref(random.pick(["Residential", "Commercial", "Residential:Remodel"]))
          : undefined,
        TxnDate: date(day),
        IsPending: pending || undefined,
        PONumber: random.chance(0.2) ? `PO-${random.int(1000, 9999)}` : undefined,
        DueDate: later(day + 30),
        ItemSalesTaxRef: ref(SALES_TAX_GROUP),
        Memo: random.pick(MEMOS),
        CustomerMsgRef: random.chance(0.5) ? ref("Thank you for your business.") : undefined,
        InvoiceLineAdd: lines,
      },
      key,
    );
  });
  const undeposited: Receipt[] = [];
  days(random, counts.salesReceipts).forEach((day, i) => {
    const to = customer();
    const { lines, totalCents } = sale(random, lists, to.taxable);
    const direct = random.chance(0.4);
    const key = `receipt:${i}`;
    if (!direct) undeposited.push({ key, day, cents: totalCents });
    w.txn(
      "SalesReceipt",
      {
        CustomerRef: random.chance(0.8) ? ref(to.fullName) : undefined,
        TxnDate: date(day),
        PaymentMethodRef: ref(random.pick(["Cash", "Check", "Visa", "MasterCard", "American Express"])),
        ItemSalesTaxRef: ref(SALES_TAX_GROUP),
        DepositToAccountRef: direct ? ref("Checking") : undefined,
        SalesReceiptLineAdd: lines,
      },
      key,
    );
  });
  const credits: Array<{ key: string; day: number; cents: number; customer: string }> = [];
  days(random, Math.max(2, Math.round(counts.invoices / 25))).forEach((day, i) => {
    const to = customer();
    const item = random.pick(lists.saleItems.filter((s) => s.taxable));
    const key = `credit:${i}`;
    const amount = item.cents;
    const cents = amount + (to.taxable ? taxOn(amount) : 0);
    credits.push({ key, day, cents, customer: to.fullName });
    w.txn(
      "CreditMemo",
      {
        CustomerRef: ref(to.fullName),
        TxnDate: date(day),
        ItemSalesTaxRef: ref(SALES_TAX_GROUP),
        Memo: "Returned item",
        CreditMemoLineAdd: [
          {
            ItemRef: ref(item.name),
            Quantity: 1,
            Rate: money(item.cents),
            Amount: money(amount),
            SalesTaxCodeRef: ref(to.taxable ? "Tax" : "Non"),
          },
        ],
      },
      key,
    );
  });

  // Purchases.
  days(random, counts.purchaseOrders).forEach((day) => {
    const lines = [0, 1].map(() => {
      const item = random.pick(lists.purchaseItems);
      const quantity = random.int(5, 20);
      return {
        ItemRef: ref(item.name),
        Quantity: quantity,
        Rate: money(item.cents),
        Amount: money(quantity * item.cents),
      };
    });
    w.txn("PurchaseOrder", {
      VendorRef: ref(vendor()),
      TxnDate: date(day),
      ExpectedDate: later(day + 14),
      ShipMethodRef: ref("Our Truck"),
      Memo: "Restock",
      PurchaseOrderLineAdd: lines,
    });
  });
  days(random, Math.max(2, Math.round(counts.purchaseOrders / 2))).forEach((day) => {
    const item = random.pick(lists.purchaseItems);
    const quantity = random.int(5, 20);
    w.txn("ItemReceipt", {
      VendorRef: ref(vendor()),
      TxnDate: date(day),
      Memo: "Received without a bill",
      ItemLineAdd: [
        {
          ItemRef: ref(item.name),
          Quantity: quantity,
          Cost: money(item.cents),
          Amount: money(quantity * item.cents),
        },
      ],
    });
  });
  const bills: Array<{ key: string; day: number; cents: number; vendor: string }> = [];
  days(random, counts.bills).forEach((day, i) => {
    const from = vendor();
    const key = `bill:${i}`;
    let cents = 0;
    const spec: Record<string, Spec[]> = { ExpenseLineAdd: [], ItemLineAdd: [] };
    if (random.chance(0.6)) {
      const amount = random.int(40, 2400) * 100 + random.int(0, 99);
      cents += amount;
      const job = random.chance(0.3) ? customer().fullName : undefined;
      spec.ExpenseLineAdd?.push({
        AccountRef: ref(random.pick(EXPENSE_ACCOUNTS)),
        Amount: money(amount),
        Memo: "Supplies",
        CustomerRef: job === undefined ? undefined : ref(job),
        BillableStatus: job === undefined ? undefined : "Billable",
      });
    } else {
      const item = random.pick(lists.purchaseItems);
      const quantity = random.int(2, 15);
      cents += quantity * item.cents;
      spec.ItemLineAdd?.push({
        ItemRef: ref(item.name),
        Quantity: quantity,
        Cost: money(item.cents),
        Amount: money(quantity * item.cents),
      });
    }
    bills.push({ key, day, cents, vendor: from });
    w.txn(
      "Bill",
      {
        VendorRef: ref(from),
        TxnDate: date(day),
        DueDate: later(day + 30),
        RefNumber: `B-${10_000 + i}`,
        Memo: `Invoice from ${from}`,
        ...spec,
      },
      key,
    );
  });
  days(random, Math.max(2, Math.round(counts.bills / 30))).forEach((day) => {
    w.txn("VendorCredit", {
      VendorRef: ref(vendor()),
      TxnDate: date(day),
      Memo: "Returned materials",
      ExpenseLineAdd: [{ AccountRef: ref("Job Materials"), Amount: money(random.int(20, 400) * 100) }],
    });
  });
  w.flush();

  // Money in: payments applied to invoices (paid, partly paid; the newest mostly still open).
  const payments: Receipt[] = [];
  invoices.forEach((invoice, i) => {
    if (invoice.pending) return;
    const late = invoice.day > yearDays - 60;
    const roll = random.next();
    const paid =
      roll < (late ? 0.3 : 0.7)
        ? invoice.cents
        : roll < (late ? 0.4 : 0.85)
          ? part(random, invoice.cents)
          : 0;
    if (paid === 0) return;
    const day = invoice.day + random.int(3, 45);
    if (day > yearDays) return;
    const key = `payment:${i}`;
    const direct = random.chance(0.2);
    if (!direct) payments.push({ key, day, cents: paid });
    w.txn(
      "ReceivePayment",
      {
        CustomerRef: ref(invoice.customer),
        TxnDate: date(day),
        RefNumber: String(random.int(1000, 9999)),
        TotalAmount: money(paid),
        PaymentMethodRef: ref(random.pick(["Check", "Check", "Visa", "MasterCard", "E-Check"])),
        DepositToAccountRef: direct ? ref("Checking") : undefined,
        AppliedToTxnAdd: [{ TxnID: w.id(invoice.key), PaymentAmount: money(paid) }],
      },
      key,
    );
  });
  credits.forEach((credit, i) => {
    if (i % 2 === 1) return;
    w.txn("ARRefundCreditCard", {
      CustomerRef: ref(credit.customer),
      RefundFromAccountRef: ref("Checking"),
      TxnDate: date(credit.day + random.int(1, 10)),
      PaymentMethodRef: ref("Visa"),
      Memo: "Refund of returned item",
      RefundAppliedToTxnAdd: [{ TxnID: w.id(credit.key), RefundAmount: money(credit.cents) }],
    });
  });

  // Money out: bills paid by check or card, in full or in part; the newest mostly still open.
  bills.forEach((bill) => {
    const late = bill.day > yearDays - 45;
    const roll = random.next();
    const paid =
      roll < (late ? 0.3 : 0.75) ? bill.cents : roll < (late ? 0.35 : 0.85) ? part(random, bill.cents) : 0;
    const day = bill.day + random.int(5, 30);
    if (paid === 0 || day > yearDays) return;
    const applied = [{ TxnID: w.id(bill.key), PaymentAmount: money(paid) }];
    if (random.chance(0.15))
      w.txn("BillPaymentCreditCard", {
        PayeeEntityRef: ref(bill.vendor),
        TxnDate: date(day),
        CreditCardAccountRef: ref("Company Card"),
        Memo: "Paid by card",
        AppliedToTxnAdd: applied,
      });
    else
      w.txn("BillPaymentCheck", {
        PayeeEntityRef: ref(bill.vendor),
        TxnDate: date(day),
        BankAccountRef: ref("Checking"),
        RefNumber: String(5000 + random.int(0, 4999)),
        AppliedToTxnAdd: applied,
      });
  });
  writeBooks(w, random, lists, counts);
  w.flush();

  // Deposits: what was received, a week at a time, all but the last two weeks' (still to deposit).
  const toDeposit = [...payments, ...undeposited]
    .filter((r) => r.day <= yearDays - 14)
    .sort((a, b) => a.day - b.day);
  for (let week = 0; week * 7 < yearDays; week++) {
    const inWeek = toDeposit.filter((r) => Math.floor((r.day - 1) / 7) === week);
    if (inWeek.length === 0) continue;
    w.txn("Deposit", {
      TxnDate: date(Math.min(yearDays, (week + 1) * 7 + 1)),
      DepositToAccountRef: ref("Checking"),
      Memo: `Deposit, week ${week + 1}`,
      DepositLineAdd: inWeek.map((r) => ({ PaymentTxnID: w.id(r.key) })),
    });
  }
  for (let month = 1; month <= 12; month++)
    w.txn("Deposit", {
      TxnDate: date(monthEnd(year, month)),
      DepositToAccountRef: ref("Savings"),
      Memo: "Interest",
      DepositLineAdd: [
        {
          EntityRef: ref("Springfield Bank"),
          AccountRef: ref("Interest Income"),
          Amount: money(1500 + month * 25),
        },
      ],
    });

  // Corrections: a check voided, a duplicate customer and invoice deleted.
  w.other("TxnVoidRq", { TxnVoidType: "Check", TxnID: w.id(RENT_CHECK_KEY(12)) });
  w.list("Customer", { Name: "Duplicate Entry (deleted)" }, "duplicate-customer");
  w.txn(
    "Invoice",
    {
      CustomerRef: ref(random.pick(lists.billTo).fullName),
      TxnDate: date(yearDays - 3),
      InvoiceLineAdd: [
        { ItemRef: ref("Repairs"), Quantity: 1, Rate: "42.00", Amount: "42.00", SalesTaxCodeRef: ref("Non") },
      ],
    },
    "duplicate-invoice",
  );
  w.flush();
  w.other("ListDelRq", { ListDelType: "Customer", ListID: w.id("duplicate-customer") });
  w.other("TxnDelRq", { TxnDelType: "Invoice", TxnID: w.id("duplicate-invoice") });
  w.flush();
}
