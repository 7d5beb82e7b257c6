/**
 * The demo company's items of every kind (service, inventory, non-inventory, assembly, group, other
 * charge, discount, subtotal, payment, fixed asset), its price levels and billing rates.
 */
import type { SeededRandom } from "../../../platform/seeded-random.ts";
import { BASE_YEAR, dateOf } from "./calendar.ts";
import type { DemoLists } from "./lists.ts";
import { money } from "./amounts.ts";
import { ref } from "./messages.ts";
import type { DemoWriter } from "./writer.ts";

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

/** What the activity sells and buys, and the services time is spent on. */
export function itemsForSale(): Pick<DemoLists, "saleItems" | "purchaseItems" | "serviceItems"> {
  return {
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

/** Queues the items, price levels and billing rates; `vendors` are the preferred vendors to pick from. */
export function writeItems(w: DemoWriter, random: SeededRandom, vendors: readonly string[]): void {
  const opening = dateOf(BASE_YEAR, 1);
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
}
