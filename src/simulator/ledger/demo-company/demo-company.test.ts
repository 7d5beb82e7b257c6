import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SimulatedLedgerApplication } from "../application.ts";
import type { CompanyFile } from "../company-file.ts";
import { openAmount, total } from "../ledger-math.ts";
import { fieldText } from "../records.ts";
import { START_MS } from "../test-support.ts";
import {
  DEMO_COMPANY_SEED,
  demoInvoiceCount,
  seedDemoCompany,
  type DemoCompanyOptions,
} from "./demo-company.ts";
import { DemoWriter } from "./writer.ts";

/** A new, empty company file on a fixed clock (record IDs carry their creation second). */
function emptyFile(): { app: SimulatedLedgerApplication; file: CompanyFile } {
  const app = new SimulatedLedgerApplication({ clock: { now: () => START_MS }, xmlVersion: "16.0" });
  return { app, file: app.createCompanyFile("C:\\Demo.company", { companyName: "Demo", seed: "empty" }) };
}

function seeded(options: DemoCompanyOptions) {
  const { app, file } = emptyFile();
  const result = seedDemoCompany(file, app.host, options);
  return { file, result };
}

/** Record counts per object type. */
function counts(file: CompanyFile): Map<string, number> {
  const out = new Map<string, number>();
  for (const record of file.allRecords()) out.set(record.object, (out.get(record.object) ?? 0) + 1);
  return out;
}

describe("the demo company", () => {
  it("is the same company from the same seed: the same request documents, the same records", () => {
    const first = seeded({ seed: DEMO_COMPANY_SEED });
    const second = seeded({ seed: DEMO_COMPANY_SEED });
    assert.equal(first.result.documentsDigest, second.result.documentsDigest);
    assert.equal(first.result.requests, second.result.requests);
    assert.deepEqual(first.file.snapshot().records, second.file.snapshot().records);
  });

  it("is another company from another seed", () => {
    const first = seeded({ seed: 1 });
    const second = seeded({ seed: 2 });
    assert.notEqual(first.result.documentsDigest, second.result.documentsDigest);
  });

  it("takes its dates from its own year, not from the clock", () => {
    const { file } = seeded({});
    const years = new Set(
      file
        .allRecords()
        .map((record) => fieldText(record.fields, "TxnDate")?.slice(0, 4))
        .filter((year) => year !== undefined),
    );
    assert.deepEqual([...years], ["2025"]);
  });

  it("small: 150 invoices (open, partly paid, paid, pending) and records in nearly every group", () => {
    const { file, result } = seeded({ size: "small" });
    assert.equal(file.count("Invoice"), demoInvoiceCount("small"));
    assert.equal(demoInvoiceCount("small"), 150);
    const byObject = counts(file);
    // Every stored kind the generator writes; a missing one means a group went empty.
    assert.ok(byObject.size >= 60, `${byObject.size} object types: ${[...byObject.keys()].join(", ")}`);
    for (const object of [
      "Customer",
      "Vendor",
      "Employee",
      "ItemInventory",
      "ReceivePayment",
      "Deposit",
      "TimeTracking",
    ])
      assert.ok((byObject.get(object) ?? 0) > 0, object);
    const states = new Set(
      file.recordsOf("Invoice").map((invoice) => {
        if (fieldText(invoice.fields, "IsPending") === "true") return "pending";
        const open = openAmount(invoice, file);
        if (open.eq(0)) return "paid";
        return open.eq(total(invoice, file)) ? "open" : "partly paid";
      }),
    );
    assert.deepEqual([...states].sort(), ["open", "paid", "partly paid", "pending"]);
    // Customers with jobs under them.
    assert.ok(file.recordsOf("Customer").some((c) => c.fields.some((f) => f.name === "ParentRef")));
    assert.ok(result.requests > 900, `${result.requests} requests`);
  });

  it("large: 10,000 invoices, and the rest in proportion", () => {
    const { file } = seeded({ size: "large" });
    assert.equal(file.count("Invoice"), 10_000);
    assert.equal(demoInvoiceCount("large"), 10_000);
    assert.ok(file.count("ReceivePayment") > 5_000, `${file.count("ReceivePayment")} payments`);
    assert.ok(file.count("Customer") > 500, `${file.count("Customer")} customers and jobs`);
  });

  it("a request the application refuses stops the seed with an error naming it", () => {
    const { app, file } = emptyFile();
    const writer = new DemoWriter(file, app.host);
    writer.txn("Invoice", {
      CustomerRef: { FullName: "Nobody" },
      InvoiceLineAdd: [{ Desc: "x", Amount: "1.00" }],
    });
    assert.throws(() => writer.flush(), /InvoiceAddRq failed \(3140/);
  });
});
