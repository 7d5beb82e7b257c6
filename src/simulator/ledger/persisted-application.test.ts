import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SimulatedLedgerApplication } from "./application.ts";
import { CompanyFile } from "./company-file.ts";
import { PersistedApplication, type CompanyFileStore } from "./persisted-application.ts";
import type { CompanyFileSnapshot } from "./snapshot.ts";
import { PATH, begin, requestXml, send, setup, testClock } from "./test-support.ts";
import { childText } from "../../ledger/xml/tree.ts";

/** A store that keeps snapshots in memory as JSON text (what a database column holds), or fails. */
class MemoryStore implements CompanyFileStore {
  saved: string[] = [];
  failing = false;
  async save(snapshot: CompanyFileSnapshot): Promise<void> {
    if (this.failing) throw new Error("disk full");
    this.saved.push(JSON.stringify(snapshot));
  }
  get last(): unknown {
    const text = this.saved.at(-1);
    assert.ok(text !== undefined, "nothing saved");
    return JSON.parse(text);
  }
}

const ADD_CUSTOMER = (name: string) =>
  `<CustomerAddRq><CustomerAdd><Name>${name}</Name></CustomerAdd></CustomerAddRq>`;
const QUERY_ALL = `<CustomerQueryRq></CustomerQueryRq><InvoiceQueryRq><IncludeLineItems>true</IncludeLineItems></InvoiceQueryRq><AccountQueryRq></AccountQueryRq>`;

describe("company file snapshots", () => {
  it("restore the records, ID counters, saved message sets and data extensions exactly", async () => {
    const { app, session, clock } = await setup();
    clock.advance(90);
    await send(session, ADD_CUSTOMER("Before Snapshot"), 'newMessageSetID="set-1" onError="stopOnError"');
    const original = app.companyFile(PATH);
    const before = await send(session, QUERY_ALL);

    // Through JSON, as a store keeps it.
    const restoredApp = new SimulatedLedgerApplication({ clock });
    const restored = restoredApp.restoreCompanyFile(JSON.parse(JSON.stringify(original.snapshot())));
    assert.equal(restored.path, PATH);
    assert.deepEqual(restored.companyDataExts, original.companyDataExts);
    assert.equal(restored.companyDataExts.length, 1, "the FileID stamp survives");
    const restoredSession = await begin(restoredApp);
    const after = await send(restoredSession, QUERY_ALL);
    assert.equal(after.raw, before.raw);

    // The saved message set answers a recovery query; new IDs continue where the original left off.
    const recovery = await restoredSession.processRequest(
      requestXml("", 'oldMessageSetID="set-1" newMessageSetID="set-1" onError="stopOnError"'),
    );
    assert.ok(recovery.ok);
    assert.match(recovery.response, /<Name>Before Snapshot<\/Name>/);
    const next = await send(session, ADD_CUSTOMER("Next"));
    const nextRestored = await send(restoredSession, ADD_CUSTOMER("Next"));
    assert.equal(nextRestored.raw, next.raw);
  });

  it("refuses data that is not a snapshot", () => {
    assert.throws(() => CompanyFile.restore({ format: 2 }, testClock()), /Not a company file snapshot/);
    const valid = new CompanyFile(PATH, { companyName: "X" }, testClock()).snapshot();
    assert.throws(
      () => CompanyFile.restore({ ...valid, records: [{ object: "Customer" }] }, testClock()),
      /records\.0/,
    );
  });
});

describe("PersistedApplication", () => {
  async function persisted() {
    const clock = testClock();
    const application = new SimulatedLedgerApplication({ clock });
    const file = application.createCompanyFile(PATH, { companyName: "Sample Co", seed: "sample" });
    const store = new MemoryStore();
    const app = new PersistedApplication(application, store);
    app.markSaved(file);
    return { clock, application, file, store, app };
  }

  it("saves a change before the answer is returned, and does not save when nothing changed", async () => {
    const { app, store } = await persisted();
    const session = await begin(app);
    assert.equal(store.saved.length, 1, "the FileID stamp is a change");
    await send(session, `<CustomerQueryRq><MaxReturned>2</MaxReturned></CustomerQueryRq>`);
    assert.equal(store.saved.length, 1, "a read changes nothing");
    const added = await send(session, ADD_CUSTOMER("Saved Before Answer"));
    assert.equal(store.saved.length, 2);
    const id = childText(added.rs[0]?.children[0] ?? added.msgs, "ListID");
    assert.ok(id);
    const reloaded = CompanyFile.restore(store.last, testClock());
    assert.equal(reloaded.recordById(id)?.fields.find((f) => f.name === "Name")?.text, "Saved Before Answer");
  });

  it("undoes a change it could not save and reports it as a failure", async () => {
    const { app, store, file } = await persisted();
    const session = await begin(app);
    const customers = file.count("Customer");
    store.failing = true;
    const result = await session.processRequest(requestXml(ADD_CUSTOMER("Lost")));
    assert.equal(result.ok, false);
    assert.ok(!result.ok && /could not be saved/.test(result.message));
    assert.equal(file.count("Customer"), customers, "the unsaved write is undone");
    store.failing = false;
    await send(session, ADD_CUSTOMER("Kept"));
    assert.equal(file.count("Customer"), customers + 1);
    assert.equal(CompanyFile.restore(store.last, testClock()).count("Customer"), customers + 1);
  });
});
