/**
 * The demo company's lists: chart of accounts, terms, classes, payment and shipping methods, sales
 * tax, price levels, units, sites, payroll items, items of every kind, and the people it deals with
 * (customers with jobs, vendors, employees, sales reps, other names, leads). The fixed lists are the
 * same at every size; the people are generated from name tables with the seeded generator.
 */
import type { SeededRandom } from "../../../platform/seeded-random.ts";
import { ref } from "./messages.ts";
import type { DemoWriter } from "./writer.ts";
import { BASE_YEAR, dateOf } from "./calendar.ts";

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

/** Sales tax: the group's members and their rates in basis points (1/100 of a percent). */
export const SALES_TAX_ITEMS = [
  { name: "State Tax", rateBasisPoints: 625 },
  { name: "County Tax", rateBasisPoints: 100 },
  { name: "City Tax", rateBasisPoints: 50 },
] as const;
export const SALES_TAX_GROUP = "Local Sales Tax";
/** The group's rate: the sum of its members'. */
export const SALES_TAX_RATE_BASIS_POINTS = SALES_TAX_ITEMS.reduce(
  (sum, item) => sum + item.rateBasisPoints,
  0,
);

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

/** Services: name, price in cents, income account. */
const SERVICES: ReadonlyArray<readonly [string, number, string]> = [
  ["Framing", 5500, "Construction Income"],
  ["Installation", 4800, "Construction Income"],
  ["Repairs", 4200, "Construction Income"],
  ["Removal", 3800, "Construction Income"],
  ["Design", 7500, "Design Income"],
];

/** Stock: name, price and cost in cents, opening quantity. */
const INVENTORY: ReadonlyArray<readonly [string, number, number, number]> = [
  ["Cabinets", 24900, 16500, 40],
  ["Interior Door", 12900, 7200, 60],
  ["Exterior Door", 38900, 24000, 25],
  ["Window", 21900, 13800, 50],
  ["Light Fixture", 8900, 4200, 120],
  ["Door Hardware", 3400, 1500, 200],
  ["Paint (gallon)", 4200, 2100, 150],
];

/** Materials bought for a job: name, price and cost in cents. */
const NON_INVENTORY: ReadonlyArray<readonly [string, number, number]> = [
  ["Lumber", 1800, 1100],
  ["Drywall", 1600, 950],
  ["Tile", 700, 380],
];

const FIRST_NAMES = [
  "Maria",
  "James",
  "Aisha",
  "Chen",
  "Olivia",
  "Noah",
  "Fatima",
  "Liam",
  "Sofia",
  "Mateo",
  "Amara",
  "Ethan",
  "Priya",
  "Lucas",
  "Hannah",
  "Diego",
  "Yuki",
  "Grace",
  "Omar",
  "Elena",
  "Kwame",
  "Zoe",
];
const LAST_NAMES = [
  "Garcia",
  "Smith",
  "Khan",
  "Wong",
  "Johnson",
  "Okafor",
  "Rossi",
  "Nguyen",
  "Silva",
  "Schmidt",
  "Brown",
  "Patel",
  "Kowalski",
  "Haddad",
  "Murphy",
  "Tanaka",
  "Lopez",
  "Fischer",
  "Mensah",
  "Novak",
];
const COMPANY_WORDS = [
  "Bayside",
  "Cedar",
  "Harbor",
  "Maple",
  "Summit",
  "Riverside",
  "Oak Hill",
  "Northgate",
  "Lakeview",
  "Pinecrest",
  "Granite",
  "Willow",
  "Sunset",
  "Meadow",
  "Ironwood",
  "Brookside",
];
const COMPANY_KINDS = [
  "Dental",
  "Cafe",
  "Realty",
  "Bakery",
  "Fitness",
  "Law Office",
  "Clinic",
  "Books",
  "Florist",
  "Studio",
  "Veterinary",
  "Properties",
];
const VENDOR_KINDS = [
  "Lumber Yard",
  "Electric Supply",
  "Plumbing Supply",
  "Hardware",
  "Tile Outlet",
  "Paint Co",
  "Concrete",
  "Glass and Mirror",
  "Roofing Supply",
  "Tool Rental",
];
const JOB_NAMES = [
  "Kitchen Remodel",
  "Bathroom Remodel",
  "Deck",
  "Basement Finish",
  "Roof Repair",
  "Office Build-out",
  "Window Replacement",
  "Addition",
  "Garage",
  "Patio",
];
const CITIES: ReadonlyArray<readonly [string, string, string]> = [
  ["Springfield", "IL", "62701"],
  ["Riverton", "IL", "62561"],
  ["Chatham", "IL", "62629"],
  ["Rochester", "IL", "62563"],
];

/** A name not used yet in the entities' shared name space (a suffix when taken). */
function unique(name: string, used: Set<string>): string {
  let candidate = name;
  for (let n = 2; used.has(candidate.toLowerCase()); n++) candidate = `${name} ${n}`;
  used.add(candidate.toLowerCase());
  return candidate;
}

function address(random: SeededRandom): Record<string, string> {
  const [city, state, postalCode] = random.pick(CITIES);
  return {
    Addr1: `${random.int(10, 9899)} ${random.pick(COMPANY_WORDS)} ${random.pick(["St", "Ave", "Rd", "Blvd"])}`,
    City: city,
    State: state,
    PostalCode: postalCode,
  };
}

function phone(random: SeededRandom): string {
  return `217-555-${String(random.int(100, 9999)).padStart(4, "0")}`;
}

const money = (cents: number): string => (cents / 100).toFixed(2);

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

  // Items of every kind.
  for (const [name, cents, account] of SERVICES)
    w.list("ItemService", {
      Name: name,
      SalesTaxCodeRef: ref("Non"),
      SalesOrPurchase: { Desc: `${name} labor, per hour`, Price: money(cents), AccountRef: ref(account) },
    });
  w.list("ItemService", {
    Name: "Subcontracted Work",
    SalesTaxCodeRef: ref("Non"),
    SalesAndPurchase: {
      SalesDesc: "Subcontracted services",
      SalesPrice: "0.00",
      IncomeAccountRef: ref("Construction Income"),
      PurchaseDesc: "Subcontracted services",
      PurchaseCost: "0.00",
      ExpenseAccountRef: ref("Subcontractors"),
    },
  });
  for (const [name, price, cost, quantity] of INVENTORY)
    w.list("ItemInventory", {
      Name: name,
      SalesTaxCodeRef: ref("Tax"),
      SalesDesc: name,
      SalesPrice: money(price),
      IncomeAccountRef: ref("Materials Income"),
      PurchaseDesc: name,
      PurchaseCost: money(cost),
      COGSAccountRef: ref("Cost of Goods Sold"),
      PrefVendorRef: vendors.length > 0 ? ref(random.pick(vendors)) : undefined,
      AssetAccountRef: ref("Inventory Asset"),
      ReorderPoint: Math.ceil(quantity / 5),
      QuantityOnHand: quantity,
      TotalValue: money(quantity * cost),
      InventoryDate: opening,
    });
  for (const [name, price, cost] of NON_INVENTORY)
    w.list("ItemNonInventory", {
      Name: name,
      SalesTaxCodeRef: ref("Tax"),
      SalesAndPurchase: {
        SalesDesc: name,
        SalesPrice: money(price),
        IncomeAccountRef: ref("Materials Income"),
        PurchaseDesc: name,
        PurchaseCost: money(cost),
        ExpenseAccountRef: ref("Job Materials"),
      },
    });
  w.list("ItemNonInventory", {
    Name: "Hardware Kit",
    UnitOfMeasureSetRef: ref("Count by the box"),
    SalesTaxCodeRef: ref("Tax"),
    SalesOrPurchase: {
      Desc: "Screws, anchors and brackets",
      Price: "12.00",
      AccountRef: ref("Materials Income"),
    },
  });
  w.list("ItemInventoryAssembly", {
    Name: "Pre-hung Door Set",
    SalesTaxCodeRef: ref("Tax"),
    SalesDesc: "Interior door with hardware, ready to hang",
    SalesPrice: "179.00",
    IncomeAccountRef: ref("Materials Income"),
    COGSAccountRef: ref("Cost of Goods Sold"),
    AssetAccountRef: ref("Inventory Asset"),
    BuildPoint: 5,
    ItemInventoryAssemblyLine: [
      { ItemInventoryRef: ref("Interior Door"), Quantity: 1 },
      { ItemInventoryRef: ref("Door Hardware"), Quantity: 1 },
    ],
  });
  w.list("ItemOtherCharge", {
    Name: "Delivery",
    SalesTaxCodeRef: ref("Non"),
    SalesOrPurchase: {
      Desc: "Delivery to the job site",
      Price: "75.00",
      AccountRef: ref("Reimbursed Expenses"),
    },
  });
  w.list("ItemOtherCharge", {
    Name: "Permit Fee",
    SalesTaxCodeRef: ref("Non"),
    SalesOrPurchase: {
      Desc: "Building permit, billed at cost",
      Price: "150.00",
      AccountRef: ref("Reimbursed Expenses"),
    },
  });
  w.list("ItemDiscount", {
    Name: "Loyalty Discount",
    ItemDesc: "10% off for returning customers",
    SalesTaxCodeRef: ref("Non"),
    DiscountRatePercent: "10.0",
    AccountRef: ref("Construction Income"),
  });
  w.list("ItemSubtotal", { Name: "Subtotal", ItemDesc: "Subtotal" });
  w.list("ItemPayment", {
    Name: "Deposit Received",
    ItemDesc: "Customer deposit on a job",
    DepositToAccountRef: ref("Undeposited Funds"),
    PaymentMethodRef: ref("Check"),
  });
  w.list("ItemGroup", {
    Name: "Bathroom Package",
    ItemDesc: "Door, light fixture and paint for a bathroom",
    IsPrintItemsInGroup: true,
    ItemGroupLine: [
      { ItemRef: ref("Interior Door"), Quantity: 1 },
      { ItemRef: ref("Light Fixture"), Quantity: 2 },
      { ItemRef: ref("Paint (gallon)"), Quantity: 2 },
    ],
  });
  w.list("ItemFixedAsset", {
    Name: "Pickup Truck",
    AcquiredAs: "New",
    PurchaseDesc: "Crew pickup truck",
    PurchaseDate: dateOf(BASE_YEAR - 1, 120),
    PurchaseCost: "38500.00",
    VendorOrPayeeName: "Springfield Motors",
    AssetAccountRef: ref("Trucks"),
    AssetDesc: "Three-quarter ton pickup",
    SerialNumber: "1FT7W2B6XPE000123",
  });
  w.list("PriceLevel", { Name: "Commercial", PriceLevelFixedPercentage: "-5.0" });
  w.list("PriceLevel", {
    Name: "Preferred",
    PriceLevelPerItem: [
      { ItemRef: ref("Cabinets"), CustomPrice: "229.00" },
      { ItemRef: ref("Window"), CustomPrice: "199.00" },
    ],
  });
  w.list("BillingRate", { Name: "Senior Carpenter", FixedBillingRate: "65.00" });
  w.list("BillingRate", {
    Name: "Design Work",
    BillingRatePerItem: [{ ItemRef: ref("Design"), CustomRate: "85.00" }],
  });

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
    saleItems: [
      ...SERVICES.map(([name, cents]) => ({ name, cents, taxable: false })),
      ...INVENTORY.map(([name, cents]) => ({ name, cents, taxable: true })),
      ...NON_INVENTORY.map(([name, cents]) => ({ name, cents, taxable: true })),
    ],
    purchaseItems: [
      ...INVENTORY.map(([name, , cents]) => ({ name, cents })),
      ...NON_INVENTORY.map(([name, , cents]) => ({ name, cents })),
    ],
    serviceItems: SERVICES.map(([name]) => name),
  };
}
