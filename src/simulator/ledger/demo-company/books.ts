/**
 * The demo company's bookkeeping besides sales and bills: monthly rent, depreciation, transfers to
 * savings and quarterly sales tax payments, a year-end adjustment, checks, card charges and
 * credits, time on jobs, and stock adjusted, built and moved between sites.
 */
import type { SeededRandom } from "../../../platform/seeded-random.ts";
import type { ActivityCounts } from "./activity.ts";
import { days, EXPENSE_ACCOUNTS, money, SALES_TAX_ITEMS } from "./amounts.ts";
import { BASE_YEAR, daysIn, monthEnd, dateInYear } from "./calendar.ts";
import type { DemoLists } from "./lists.ts";
import { ref } from "./messages.ts";
import type { DemoWriter } from "./writer.ts";

/** The key of month `month`'s rent check (December's is voided later). */
export const RENT_CHECK_KEY = (month: number): string => `rent:${month}`;

/** Queues the year's bookkeeping (sent by the caller's next flush). */
export function writeBooks(
  w: DemoWriter,
  random: SeededRandom,
  lists: DemoLists,
  counts: ActivityCounts,
): void {
  const year = BASE_YEAR;
  const yearDays = daysIn(year);
  const date = (day: number): string => dateInYear(year, day);
  const customer = () => random.pick(lists.billTo);
  const vendor = () => random.pick(lists.vendors);
  for (let month = 1; month <= 12; month++) {
    const first = monthEnd(year, month - 1) + 1;
    w.txn(
      "Check",
      {
        AccountRef: ref("Checking"),
        PayeeEntityRef: ref(lists.vendors[0] ?? "Owner"),
        RefNumber: String(3000 + month),
        TxnDate: date(first),
        Memo: `Rent, month ${month}`,
        IsToBePrinted: false,
        ExpenseLineAdd: [{ AccountRef: ref("Rent"), Amount: "2400.00" }],
      },
      RENT_CHECK_KEY(month),
    );
    w.txn("JournalEntry", {
      TxnDate: date(monthEnd(year, month)),
      RefNumber: `DEP-${month}`,
      JournalDebitLine: [
        { AccountRef: ref("Depreciation Expense"), Amount: "641.67", Memo: "Trucks and tools" },
      ],
      JournalCreditLine: [
        { AccountRef: ref("Accumulated Depreciation"), Amount: "641.67", Memo: "Trucks and tools" },
      ],
    });
    if (month % 3 === 0) {
      w.txn("Transfer", {
        TxnDate: date(monthEnd(year, month)),
        TransferFromAccountRef: ref("Checking"),
        TransferToAccountRef: ref("Savings"),
        Amount: "5000.00",
        Memo: "Quarterly reserve",
      });
      w.txn("SalesTaxPaymentCheck", {
        PayeeEntityRef: ref("Illinois Department of Revenue"),
        TxnDate: date(monthEnd(year, month) + 20),
        BankAccountRef: ref("Checking"),
        RefNumber: `ST-Q${month / 3}`,
        Memo: `Sales tax, quarter ${month / 3}`,
        SalesTaxPaymentCheckLineAdd: SALES_TAX_ITEMS.map((item) => ({
          ItemSalesTaxRef: ref(item.name),
          Amount: money(item.rateBasisPoints * random.int(8, 20)),
        })),
      });
    }
  }
  w.txn("JournalEntry", {
    TxnDate: date(yearDays),
    RefNumber: "ADJ-1",
    IsAdjustment: true,
    JournalDebitLine: [{ AccountRef: ref("Insurance"), Amount: "1800.00", Memo: "Year-end: insurance used" }],
    JournalCreditLine: [{ AccountRef: ref("Prepaid Insurance"), Amount: "1800.00" }],
  });
  days(random, counts.checks).forEach((day) => {
    w.txn("Check", {
      AccountRef: ref("Checking"),
      PayeeEntityRef: ref(vendor()),
      TxnDate: date(day),
      IsToBePrinted: false,
      RefNumber: String(random.int(6000, 9999)),
      ExpenseLineAdd: [
        { AccountRef: ref(random.pick(EXPENSE_ACCOUNTS)), Amount: money(random.int(30, 900) * 100) },
      ],
    });
  });
  days(random, counts.cardCharges).forEach((day) => {
    w.txn("CreditCardCharge", {
      AccountRef: ref("Company Card"),
      PayeeEntityRef: ref(vendor()),
      TxnDate: date(day),
      Memo: "Card purchase",
      ExpenseLineAdd: [
        {
          AccountRef: ref(random.pick(["Fuel", "Office Supplies", "Repairs and Maintenance"])),
          Amount: money(random.int(15, 450) * 100 + random.int(0, 99)),
        },
      ],
    });
  });
  days(random, Math.max(2, Math.round(counts.cardCharges / 10))).forEach((day) => {
    w.txn("CreditCardCredit", {
      AccountRef: ref("Company Card"),
      PayeeEntityRef: ref(vendor()),
      TxnDate: date(day),
      Memo: "Returned purchase",
      ExpenseLineAdd: [{ AccountRef: ref("Office Supplies"), Amount: money(random.int(10, 120) * 100) }],
    });
  });

  // Time on jobs; stock adjusted, built and moved.
  const hourly = lists.employees.slice(1);
  days(random, counts.timeEntries).forEach((day) => {
    const billed = day < yearDays - 60 ? random.chance(0.7) : false;
    w.txn("TimeTracking", {
      TxnDate: date(day),
      EntityRef: ref(random.pick(hourly.length > 0 ? hourly : lists.employees)),
      CustomerRef: ref(customer().fullName),
      ItemServiceRef: ref(random.pick(lists.serviceItems)),
      Duration: `PT${random.int(1, 9)}H${random.pick([0, 15, 30, 45])}M`,
      PayrollItemWageRef: ref("Hourly Regular"),
      BillableStatus: billed ? "HasBeenBilled" : random.pick(["Billable", "NotBillable"]),
    });
  });
  for (const [month, item, difference] of [
    [3, "Paint (gallon)", -4],
    [7, "Light Fixture", -2],
    [11, "Door Hardware", 10],
  ] as const)
    w.txn("InventoryAdjustment", {
      AccountRef: ref("Cost of Goods Sold"),
      TxnDate: date(monthEnd(year, month)),
      Memo: "Stock count",
      InventoryAdjustmentLineAdd: [
        { ItemRef: ref(item), QuantityAdjustment: { QuantityDifference: difference } },
      ],
    });
  for (const month of [2, 6, 10])
    w.txn("BuildAssembly", {
      ItemInventoryAssemblyRef: ref("Pre-hung Door Set"),
      TxnDate: date(monthEnd(year, month) - 3),
      Memo: "Shop build",
      QuantityToBuild: 4,
    });
  for (const month of [4, 9])
    w.txn("TransferInventory", {
      TxnDate: date(monthEnd(year, month) - 10),
      FromInventorySiteRef: ref("Main Warehouse"),
      ToInventorySiteRef: ref("Truck Stock"),
      Memo: "Stock the trucks",
      TransferInventoryLineAdd: [{ ItemRef: ref("Door Hardware"), QuantityToTransfer: 12 }],
    });
}
