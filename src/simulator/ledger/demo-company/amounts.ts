/**
 * Amounts and dates of the demo company's transactions: whole cents, the sales tax the application
 * computes (so payments never exceed what is owed), sale lines, and days of the year drawn from the
 * seeded generator.
 */
import type { SeededRandom } from "../../../platform/seeded-random.ts";
import { BASE_YEAR, daysIn } from "./calendar.ts";
import type { DemoLists } from "./lists.ts";
import { ref, type Spec } from "./messages.ts";

/** Sales tax: the group's members and their rates in basis points (1/100 of a percent). */
export const SALES_TAX_ITEMS = [
  { name: "State Tax", rateBasisPoints: 625 },
  { name: "County Tax", rateBasisPoints: 100 },
  { name: "City Tax", rateBasisPoints: 50 },
] as const;
/** The sales tax group every sale names (its lines say which amounts are taxable). */
export const SALES_TAX_GROUP = "Local Sales Tax";
/** The group's rate: the sum of its members'. */
export const SALES_TAX_RATE_BASIS_POINTS = SALES_TAX_ITEMS.reduce(
  (sum, item) => sum + item.rateBasisPoints,
  0,
);

/** Whole cents as an amount with two decimals. */
export const money = (cents: number): string => (cents / 100).toFixed(2);
/** Sales tax on `cents` at the group's rate, rounded half up as the application rounds. */
export const taxOn = (cents: number): number =>
  Math.floor((cents * SALES_TAX_RATE_BASIS_POINTS + 5000) / 10000);

/** Accounts that bills and checks spend on. */
export const EXPENSE_ACCOUNTS = [
  "Job Materials",
  "Office Supplies",
  "Utilities",
  "Repairs and Maintenance",
  "Fuel",
];
/** Invoice memos, often none. */
export const MEMOS = [
  "Thank you!",
  "Progress billing",
  "Final billing",
  "Materials and labor",
  undefined,
  undefined,
];

/** Sale lines and what they come to, sales tax included. */
export interface Sale {
  readonly lines: Spec[];
  readonly totalCents: number;
}

/** Distinct sorted days of the year, `count` of them drawn (days may repeat). */
export function days(random: SeededRandom, count: number, last = daysIn(BASE_YEAR)): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(random.int(1, last));
  return out.sort((a, b) => a - b);
}

/** Sale lines (of any sales form): items, quantities, tax codes, and the total with tax. */
export function sale(random: SeededRandom, lists: DemoLists, taxable: boolean, withTax = true): Sale {
  const lines: Spec[] = [];
  let subtotal = 0;
  let taxed = 0;
  const count = random.int(1, 4);
  const used = new Set<string>();
  for (let i = 0; i < count; i++) {
    const item = random.pick(lists.saleItems);
    if (used.has(item.name)) continue;
    used.add(item.name);
    const quantity = item.taxable ? random.int(1, 8) : random.int(2, 24);
    const amount = quantity * item.cents;
    const code = taxable && item.taxable ? "Tax" : "Non";
    subtotal += amount;
    if (code === "Tax") taxed += amount;
    lines.push({
      ItemRef: ref(item.name),
      Quantity: quantity,
      Rate: money(item.cents),
      Amount: money(amount),
      SalesTaxCodeRef: ref(code),
    });
  }
  if (random.chance(0.15)) {
    lines.push({
      ItemRef: ref("Delivery"),
      Quantity: 1,
      Rate: "75.00",
      Amount: "75.00",
      SalesTaxCodeRef: ref("Non"),
    });
    subtotal += 7500;
  }
  return { lines, totalCents: subtotal + (withTax ? taxOn(taxed) : 0) };
}

/** A share of `cents` between 20% and 80%, at least a cent short of the whole. */
export function part(random: SeededRandom, cents: number): number {
  return Math.max(1, Math.min(cents - 1, Math.round((cents * random.int(20, 80)) / 100)));
}

/** Money received (a payment, a sales receipt) that a deposit may hold later. */
export interface Receipt {
  readonly key: string;
  readonly day: number;
  readonly cents: number;
}
