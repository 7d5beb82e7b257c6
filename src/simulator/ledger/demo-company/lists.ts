/**
 * The demo company's lists: chart of accounts, terms, classes, payment and shipping methods, sales
 * tax, units, sites, payroll items, items (`items.ts`), and the people it deals with (customers with
 * jobs, vendors, employees, sales reps, other names, leads). The fixed lists are the same at every
 * size; the people are generated from name tables (`names.ts`) with the seeded generator.
 */
import type { SeededRandom } from "../../../platform/seeded-random.ts";
import { ref } from "./messages.ts";
import type { DemoWriter } from "./writer.ts";
import { BASE_YEAR, dateOf } from "./calendar.ts";
import { itemsForSale, writeItems } from "./items.ts";
import { money, SALES_TAX_GROUP, SALES_TAX_ITEMS } from "./amounts.ts";
import {
  address,
  COMPANY_KINDS,
  COMPANY_WORDS,
  FIRST_NAMES,
  JOB_NAMES,
  LAST_NAMES,
  phone,
  unique,
  VENDOR_KINDS,
} from "./names.ts";

/** What later requests need to know about the lists (names as the application files them). */
export interface DemoLists {
  /** Customers and jobs that are billed (FullNames), with whether they pay sales tax. */
  readonly billTo: ReadonlyArray<{ readonly fullName: string; readonly taxable: boolean }>;
  readonly vendors: readonly string[];
  readonly employees: readonly string[];
  /** Sale items with their price in cents and whether sales tax applies. */
  readonly saleItems: ReadonlyArray<{
    readonly name: string;
    readonly cents: number;
    readonly taxable: boolean;
  }>;
  /** Items bought for stock or jobs, with their cost in cents. */
  readonly purchaseItems: ReadonlyArray<{ readonly name: string; readonly cents: number }>;
  readonly serviceItems: readonly string[];
}

const ACCOUNTS: ReadonlyArray<readonly [name: string, type: string, number: string, opening?: string]> = [
  ["Checking", "Bank", "1000", "48250.00"],
  ["Savings", "Bank", "1010", "20000.00"],
  ["Petty Cash", "Bank", "1020", "300.00"],
  ["Accounts Receivable", "AccountsReceivable", "1200"],
  ["Undeposited Funds", "OtherCurrentAsset", "1499"],
  ["Inventory Asset", "OtherCurrentAsset", "1300"],
  ["Prepaid Insurance", "OtherCurrentAsset", "1400"],
  ["Trucks", "FixedAsset", "1500"],
  ["Tools and Equipment", "FixedAsset", "1510"],
  ["Accumulated Depreciation", "FixedAsset", "1590"],
  ["Security Deposits", "OtherAsset", "1800"],
  ["Accounts Payable", "AccountsPayable", "2000"],
  ["Company Card", "CreditCard", "2100"],
  ["Sales Tax Payable", "OtherCurrentLiability", "2200"],
  ["Payroll Liabilities", "OtherCurrentLiability", "2300"],
  ["Truck Loan", "LongTermLiability", "2700"],
  ["Opening Balance Equity", "Equity", "3000"],
  ["Owner's Draw", "Equity", "3100"],
  ["Construction Income", "Income", "4000"],
  ["Materials Income", "Income", "4100"],
  ["Design Income", "Income", "4200"],
  ["Reimbursed Expenses", "Income", "4300"],
  ["Cost of Goods Sold", "CostOfGoodsSold", "5000"],
  ["Job Materials", "CostOfGoodsSold", "5100"],
  ["Subcontractors", "CostOfGoodsSold", "5200"],
  ["Rent", "Expense", "6000"],
  ["Utilities", "Expense", "6100"],
  ["Office Supplies", "Expense", "6200"],
  ["Payroll Expenses", "Expense", "6300"],
  ["Insurance", "Expense", "6400"],
  ["Fuel", "Expense", "6500"],
  ["Repairs and Maintenance", "Expense", "6600"],
  ["Depreciation Expense", "Expense", "6700"],
  ["Bank Service Charges", "Expense", "6800"],
  ["Interest Income", "OtherIncome", "7000"],
  ["Interest Expense", "OtherExpense", "7100"],
];

/** Sizes of the generated lists. */
export interface ListCounts {
  readonly customers: number;
  readonly vendors: number;
  readonly employees: number;
}

/** Queues and sends the lists; returns what the activity needs to know about them. */
export function writeLists(w: DemoWriter, random: SeededRandom, counts: ListCounts): DemoLists {
  const opening = dateOf(BASE_YEAR, 1);
  for (const [name, type, number, balance] of ACCOUNTS) {
    w.list("Account", {
      Name: name,
      AccountType: type,
      AccountNumber: number,
      OpenBalance: balance,
      OpenBalanceDate: balance === undefined ? undefined : opening,
    });
  }
  for (const [name, parent] of [
    ["Residential", undefined],
    ["Commercial", undefined],
    ["Remodel", "Residential"],
    ["New Construction", "Residential"],
  ] as const)
    w.list("Class", { Name: name, ParentRef: parent === undefined ? undefined : ref(parent) });
  w.list("Currency", { Name: "Canadian Dollar", CurrencyCode: "CAD" });
  w.list("Currency", { Name: "Euro", CurrencyCode: "EUR" });
  for (const [name, days, discountDays, percent] of [
    ["Due on receipt", 0, undefined, undefined],
    ["Net 15", 15, undefined, undefined],
    ["Net 30", 30, undefined, undefined],
    ["2% 10 Net 30", 30, 10, "2.00"],
  ] as const)
    w.list("StandardTerms", {
      Name: name,
      StdDueDays: days,
      StdDiscountDays: discountDays,
      DiscountPct: percent,
    });
  w.list("DateDrivenTerms", { Name: "15th of next month", DayOfMonthDue: 15, DueNextMonthDays: 10 });
  for (const [name, type] of [
    ["Cash", "Cash"],
    ["Check", "Check"],
    ["Visa", "Visa"],
    ["MasterCard", "MasterCard"],
    ["American Express", "AmericanExpress"],
    ["E-Check", "ECheck"],
  ] as const)
    w.list("PaymentMethod", { Name: name, PaymentMethodType: type });
  for (const name of ["Our Truck", "UPS", "FedEx"]) w.list("ShipMethod", { Name: name });
  for (const name of ["Residential", "Commercial", "Referral"]) w.list("CustomerType", { Name: name });
  for (const name of ["Remodel", "Repair", "New Construction"]) w.list("JobType", { Name: name });
  for (const name of [
    "Thank you for your business.",
    "Please remit to the address above.",
    "We appreciate your prompt payment.",
  ])
    w.list("CustomerMsg", { Name: name });
  w.list("UnitOfMeasureSet", {
    Name: "Count by the box",
    UnitOfMeasureType: "Count",
    BaseUnit: { Name: "Each", Abbreviation: "ea" },
    RelatedUnit: [{ Name: "Box of 12", Abbreviation: "box", ConversionRatio: "12" }],
  });
  w.list("InventorySite", {
    Name: "Main Warehouse",
    SiteDesc: "Shop and yard",
    SiteAddress: { Addr1: "400 Mill Road", City: "Springfield", State: "IL", PostalCode: "62702" },
  });
  w.list("InventorySite", { Name: "Truck Stock", SiteDesc: "Parts carried on the trucks" });
  for (const [name, type] of [
    ["Hourly Regular", "HourlyRegular"],
    ["Hourly Overtime", "HourlyOvertime"],
    ["Salary", "SalaryRegular"],
    ["Bonus", "Bonus"],
  ] as const)
    w.list("PayrollItemWage", { Name: name, WageType: type, ExpenseAccountRef: ref("Payroll Expenses") });

  // The people: customers (some with jobs), vendors, employees share one name space.
  const used = new Set<string>();
  const vendors: string[] = [];
  w.list("Vendor", {
    Name: unique("Illinois Department of Revenue", used),
    CompanyName: "Illinois Department of Revenue",
    VendorAddress: { Addr1: "101 W Jefferson St", City: "Springfield", State: "IL", PostalCode: "62702" },
  });
  for (let i = 0; i < counts.vendors; i++) {
    const name = unique(`${random.pick(COMPANY_WORDS)} ${random.pick(VENDOR_KINDS)}`, used);
    vendors.push(name);
    w.list("Vendor", {
      Name: name,
      CompanyName: name,
      VendorAddress: address(random),
      Phone: phone(random),
      Email: `orders@${name.toLowerCase().replace(/[^a-z]+/g, "")}.example`,
      TermsRef: ref(random.pick(["Net 30", "Net 15", "2% 10 Net 30"])),
      AccountNumber: `C-${random.int(1000, 9999)}`,
      IsVendorEligibleFor1099: random.chance(0.2),
    });
  }
  for (const [tax, bp] of SALES_TAX_ITEMS.map((t) => [t.name, t.rateBasisPoints] as const))
    w.list("ItemSalesTax", {
      Name: tax,
      ItemDesc: `${tax} (Illinois)`,
      TaxRate: (bp / 100).toFixed(2),
      TaxVendorRef: ref("Illinois Department of Revenue"),
    });
  w.list("ItemSalesTaxGroup", {
    Name: SALES_TAX_GROUP,
    ItemDesc: "State, county and city sales tax",
    ItemSalesTaxRef: SALES_TAX_ITEMS.map((t) => ref(t.name)),
  });
  w.list("SalesTaxCode", { Name: "Tax", IsTaxable: true, Desc: "Taxable sales" });
  w.list("SalesTaxCode", { Name: "Non", IsTaxable: false, Desc: "Non-taxable sales" });
  w.list("SalesTaxCode", { Name: "Res", IsTaxable: false, Desc: "Sales for resale" });

  const employees: string[] = [];
  for (let i = 0; i < counts.employees; i++) {
    // The application names an employee after its first and last names (US edition): a new pair each.
    let first = random.pick(FIRST_NAMES);
    let last = random.pick(LAST_NAMES);
    while (used.has(`${first} ${last}`.toLowerCase())) {
      first = random.pick(FIRST_NAMES);
      last = random.pick(LAST_NAMES);
    }
    const name = unique(`${first} ${last}`, used);
    employees.push(name);
    const hourly = i > 0;
    w.list("Employee", {
      FirstName: first,
      LastName: last,
      JobTitle:
        i === 0 ? "Office Manager" : random.pick(["Carpenter", "Project Lead", "Installer", "Apprentice"]),
      EmployeeAddress: address(random),
      Phone: phone(random),
      Email: `${first.toLowerCase()}.${last.toLowerCase()}@demo-company.example`,
      EmployeeType: "Regular",
      HiredDate: dateOf(BASE_YEAR - random.int(1, 8), random.int(1, 360)),
      EmployeePayrollInfo: {
        PayPeriod: "Biweekly",
        Earnings: [
          hourly
            ? { PayrollItemWageRef: ref("Hourly Regular"), Rate: money(random.int(22, 38) * 100) }
            : { PayrollItemWageRef: ref("Salary"), Rate: "52000.00" },
        ],
      },
    });
  }
  // Sales reps are named by their initials: later references use their ListIDs.
  const reps = employees.slice(0, 2).map((employee, i) => {
    w.list(
      "SalesRep",
      {
        Initial: employee
          .split(" ")
          .map((part) => part[0])
          .join(""),
        SalesRepEntityRef: ref(employee),
      },
      `rep:${i}`,
    );
    return `rep:${i}`;
  });
  w.list("OtherName", {
    Name: unique("Owner", used),
    CompanyName: "Demo Company",
    Notes: "Draws and contributions",
  });
  w.list("OtherName", { Name: unique("Springfield Bank", used), CompanyName: "Springfield Bank" });

  writeItems(w, random, vendors);
  w.flush();

  // Customers, a third of them with one or two jobs.
  w.other("DataExtDefAddRq", {
    DataExtDefAdd: {
      OwnerID: "0",
      DataExtName: "Referred By",
      DataExtType: "STR255TYPE",
      AssignToObject: ["Customer"],
    },
  });
  const billTo: Array<{ fullName: string; taxable: boolean }> = [];
  for (let i = 0; i < counts.customers; i++) {
    const commercial = random.chance(0.45);
    const first = random.pick(FIRST_NAMES);
    const last = random.pick(LAST_NAMES);
    const company = `${random.pick(COMPANY_WORDS)} ${random.pick(COMPANY_KINDS)}`;
    const name = unique(commercial ? company : `${last}, ${first}`, used);
    const taxable = random.chance(0.7);
    w.list("Customer", {
      Name: name,
      ClassRef: ref(commercial ? "Commercial" : "Residential"),
      CompanyName: commercial ? company : undefined,
      FirstName: first,
      LastName: last,
      BillAddress: address(random),
      Phone: phone(random),
      Email: `${first.toLowerCase()}@${(commercial ? company : last).toLowerCase().replace(/[^a-z]+/g, "")}.example`,
      CustomerTypeRef: ref(commercial ? "Commercial" : random.pick(["Residential", "Referral"])),
      TermsRef: ref(
        random.pick(["Net 30", "Net 15", "Due on receipt", "2% 10 Net 30", "15th of next month"]),
      ),
      SalesRepRef: reps.length > 0 ? { ListID: w.id(reps[i % reps.length] ?? "") } : undefined,
      SalesTaxCodeRef: ref(taxable ? "Tax" : "Non"),
      ItemSalesTaxRef: ref(SALES_TAX_GROUP),
      CreditLimit: commercial ? money(random.int(5, 50) * 100000) : undefined,
      PreferredPaymentMethodRef: ref(random.pick(["Check", "Visa", "MasterCard", "E-Check"])),
      PriceLevelRef: commercial && random.chance(0.5) ? ref("Commercial") : undefined,
    });
    if (random.chance(0.3))
      w.other("DataExtAddRq", {
        DataExtAdd: {
          OwnerID: "0",
          DataExtName: "Referred By",
          ListDataExtType: "Customer",
          ListObjRef: ref(name),
          DataExtValue: random.pick(["Website", "Neighbor", "Yard sign", "Repeat customer"]),
        },
      });
    const jobs = random.chance(0.35) ? random.int(1, 2) : 0;
    if (jobs === 0) billTo.push({ fullName: name, taxable });
    const jobNames = new Set<string>();
    for (let j = 0; j < jobs; j++) {
      const job = random.pick(JOB_NAMES);
      if (jobNames.has(job)) continue;
      jobNames.add(job);
      w.list("Customer", {
        Name: job,
        ParentRef: ref(name),
        JobStatus: random.pick(["InProgress", "Awarded", "Closed", "Pending"]),
        JobStartDate: dateOf(BASE_YEAR, random.int(1, 300)),
        JobDesc: `${job} for ${name}`,
        JobTypeRef: ref(
          job.includes("Repair")
            ? "Repair"
            : job === "Addition" || job === "Garage"
              ? "New Construction"
              : "Remodel",
        ),
      });
      billTo.push({ fullName: `${name}:${job}`, taxable });
    }
  }
  for (let i = 0; i < 3; i++) {
    const first = random.pick(FIRST_NAMES);
    const last = random.pick(LAST_NAMES);
    w.list("Lead", {
      FullName: `${first} ${last} (lead ${i + 1})`,
      Status: random.pick(["Hot", "Warm", "Cold"]),
      CompanyName: `${random.pick(COMPANY_WORDS)} ${random.pick(COMPANY_KINDS)}`,
      MainPhone: phone(random),
    });
  }
  w.flush();
  return {
    billTo,
    vendors,
    employees,
    ...itemsForSale(),
  };
}
