/**
 * The "demo" company: a small contractor's year of business, like the sample company the
 * application ships with — lists of every kind and a year of sales, purchases, payments, deposits,
 * payroll time and corrections, so that nearly every typed list answers records. Generated from a
 * seed (the same seed gives the same requests, hence the same records) and sent through the
 * application's own request processor, as an integration would send them.
 *
 * Sizes: `small` (the default: about 150 invoices, generated in well under a second) and `large`
 * (10,000 invoices and everything in proportion, for benches).
 */
import { SeededRandom } from "../../../platform/seeded-random.ts";
import type { CompanyFile } from "../company-file.ts";
import type { HostInfo } from "../hcp.ts";
import { writeActivity, type ActivityCounts } from "./activity.ts";
import { writeLists, type ListCounts } from "./lists.ts";
import { DemoWriter } from "./writer.ts";

/** The sizes the demo company comes in. */
export const DEMO_COMPANY_SIZES = ["small", "large"] as const;
export type DemoCompanySize = (typeof DEMO_COMPANY_SIZES)[number];

/** The seed used unless another is given: every demo company of a size is the same. */
export const DEMO_COMPANY_SEED = 20250101;

const COUNTS: Readonly<Record<DemoCompanySize, ListCounts & ActivityCounts>> = {
  small: {
    customers: 30,
    vendors: 12,
    employees: 6,
    invoices: 150,
    salesReceipts: 60,
    estimates: 30,
    salesOrders: 15,
    purchaseOrders: 12,
    bills: 80,
    checks: 30,
    cardCharges: 30,
    timeEntries: 120,
  },
  large: {
    customers: 800,
    vendors: 80,
    employees: 25,
    invoices: 10_000,
    salesReceipts: 4_000,
    estimates: 2_000,
    salesOrders: 1_000,
    purchaseOrders: 600,
    bills: 5_000,
    checks: 1_500,
    cardCharges: 1_500,
    timeEntries: 8_000,
  },
};

/** Options of {@link seedDemoCompany}. */
export interface DemoCompanyOptions {
  /** `small` by default. */
  readonly size?: DemoCompanySize;
  /** {@link DEMO_COMPANY_SEED} by default. */
  readonly seed?: number;
}

/** What seeding sent: message sets, requests, and a digest of every document (for determinism checks). */
export interface DemoCompanySeeded {
  readonly documents: number;
  readonly requests: number;
  readonly documentsDigest: string;
}

/** Loads the demo company into `file`; throws if the application refuses any request (a generator bug). */
export function seedDemoCompany(
  file: CompanyFile,
  host: HostInfo,
  options: DemoCompanyOptions = {},
): DemoCompanySeeded {
  const counts = COUNTS[options.size ?? "small"];
  const random = new SeededRandom(options.seed ?? DEMO_COMPANY_SEED);
  const writer = new DemoWriter(file, host);
  const lists = writeLists(writer, random, counts);
  writeActivity(writer, random, lists, counts);
  return {
    documents: writer.documents,
    requests: writer.requests,
    documentsDigest: writer.documentsDigest(),
  };
}

/** How many invoices a demo company of `size` holds. */
export function demoInvoiceCount(size: DemoCompanySize): number {
  return COUNTS[size].invoices;
}
