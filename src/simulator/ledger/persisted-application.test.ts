import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SimulatedLedgerApplication } from "./application.ts";
import { CompanyFile } from "./company-file.ts";
import { onlyQueries, PersistedApplication, type CompanyFileStore } from "./persisted-application.ts";
import type { CompanyFileSnapshot } from "./snapshot.ts";
import { PATH, begin, requestXml, send, setup, testClock } from "./test-support.ts";
import { childText } from "../../ledger/xml/tree.ts";
import { ledgerSchema } from "../../ledger/xml/schema.ts";

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

/** The sample company, saved to a memory store as it is. */
function persisted() {
  const clock = testClock();
  const application = new SimulatedLedgerApplication({ clock });
  const file = application.createCompanyFile(PATH, { companyName: "Sample Co", seed: "sample" });
  const store = new MemoryStore();
  const app = new PersistedApplication(application, store);
  app.markSaved(file);
  return { clock, application, file, store, app };
}

describe("PersistedApplication", () => {
  it("saves a change before the answer is returned, and does not save when nothing changed", async () => {
    const { app, store } = persisted();
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
    const { app, store, file } = persisted();
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

const WITH_REQUIRED_ELEMENTS = [
  "<AgingReportQueryRq><AgingReportType>ARAgingDetail</AgingReportType></AgingReportQueryRq>",
  "<GeneralSummaryReportQueryRq><GeneralSummaryReportType>ProfitAndLossStandard</GeneralSummaryReportType></GeneralSummaryReportQueryRq>",
  "<GeneralDetailReportQueryRq><GeneralDetailReportType>GeneralLedger</GeneralDetailReportType></GeneralDetailReportQueryRq>",
  "<JobReportQueryRq><JobReportType>ItemEstimatesVsActuals</JobReportType></JobReportQueryRq>",
  "<TimeReportQueryRq><TimeReportType>TimeByItem</TimeReportType></TimeReportQueryRq>",
  "<PayrollSummaryReportQueryRq><PayrollSummaryReportType>EmployeeEarningsSummary</PayrollSummaryReportType></PayrollSummaryReportQueryRq>",
  "<PayrollDetailReportQueryRq><PayrollDetailReportType>PayrollItemDetail</PayrollDetailReportType></PayrollDetailReportQueryRq>",
  "<ListDeletedQueryRq><ListDelType>Customer</ListDelType></ListDeletedQueryRq>",
  "<TxnDeletedQueryRq><TxnDelType>Invoice</TxnDelType></TxnDeletedQueryRq>",
  "<BillToPayQueryRq><PayeeEntityRef><FullName>Nobody</FullName></PayeeEntityRef></BillToPayQueryRq>",
  "<ItemAssembliesCanBuildQueryRq><ItemInventoryAssemblyRef><FullName>Kit</FullName></ItemInventoryAssemblyRef><TxnDate>2025-06-30</TxnDate></ItemAssembliesCanBuildQueryRq>",
  "<BudgetSummaryReportQueryRq><BudgetSummaryReportType>ProfitAndLossByAccount</BudgetSummaryReportType><FiscalYear>2025</FiscalYear></BudgetSummaryReportQueryRq>",
  "<CustomSummaryReportQueryRq><ReportDateMacro>ThisYear</ReportDateMacro><SummarizeColumnsBy>TotalOnly</SummarizeColumnsBy><SummarizeRowsBy>Account</SummarizeRowsBy></CustomSummaryReportQueryRq>",
  "<CustomDetailReportQueryRq><CustomDetailReportType>CustomTxnDetail</CustomDetailReportType><ReportDateMacro>ThisYear</ReportDateMacro><SummarizeRowsBy>Account</SummarizeRowsBy><IncludeColumn>Amount</IncludeColumn></CustomDetailReportQueryRq>",
];

describe("a set of queries is not compared with the saved file", () => {
  it("tells queries from anything that may change the file, from the request text", () => {
    const queries = `<CustomerQueryRq><MaxReturned>2</MaxReturned></CustomerQueryRq><GeneralSummaryReportQueryRq><GeneralSummaryReportType>ProfitAndLossStandard</GeneralSummaryReportType></GeneralSummaryReportQueryRq>`;
    assert.equal(onlyQueries(requestXml(queries)), true);
    assert.equal(onlyQueries(requestXml(`${queries}${ADD_CUSTOMER("W")}`)), false, "a write among them");
    assert.equal(onlyQueries(requestXml(queries, 'newMessageSetID="s1" onError="stopOnError"')), false);
    assert.equal(onlyQueries(requestXml("", 'oldMessageSetID="s1" onError="stopOnError"')), false);
    assert.equal(onlyQueries(requestXml("")), false, "no request at all");
    assert.equal(onlyQueries(requestXml(`<TxnVoidRq><TxnVoidType>Invoice</TxnVoidType></TxnVoidRq>`)), false);
    assert.equal(onlyQueries("not a document"), false);
  });

  it("no query the application's schema has changes a company file (what lets the wrapper skip the comparison)", async () => {
    const clock = testClock();
    const application = new SimulatedLedgerApplication({ clock, xmlVersion: "16.0" });
    const file = application.createCompanyFile(PATH, { companyName: "Demo Co", seed: "demo" });
    const session = await begin(application);
    const before = JSON.stringify(file.snapshot());
    const names = [...ledgerSchema().requests].filter((name) => name.endsWith("QueryRq")).sort();
    // Each query bare, limited, and started as an iterator (the cursor state is the session's);
    // then the ones with required elements, each with one valid body.
    const bodies = names.flatMap((name) =>
      ["", ' iterator="Start"'].flatMap((attrs) => [
        `<${name}${attrs}></${name}>`,
        `<${name}${attrs}><MaxReturned>5</MaxReturned></${name}>`,
      ]),
    );
    const ran = new Set<string>();
    for (const body of [...bodies, ...WITH_REQUIRED_ELEMENTS]) {
      const answer = await session.processRequest(requestXml(body, undefined, "16.0"));
      // A set the application refuses is refused whole, before any request runs.
      if (answer.ok) ran.add(/^<(\w+)/.exec(body)?.[1] ?? "");
    }
    clock.advance(60);
    assert.equal(JSON.stringify(file.snapshot()), before, "a query changed the company file");
    // The rest are refused whole by this application (edition, required elements): nothing ran.
    // The floor catches a change that would stop most of them from running.
    assert.ok(ran.size >= 90, `${ran.size} of ${names.length} queries ran`);
  });

  it("a set of queries takes no snapshot; a write is still compared and saved before its answer", async () => {
    const { app, store, file } = persisted();
    const session = await begin(app);
    let snapshots = 0;
    const snapshot = file.snapshot.bind(file);
    file.snapshot = () => {
      snapshots += 1;
      return snapshot();
    };
    const saves = store.saved.length;
    await send(session, QUERY_ALL);
    assert.equal(snapshots, 0, "a read was compared with the saved file");
    assert.equal(store.saved.length, saves);
    await send(session, ADD_CUSTOMER("After Reads"));
    assert.ok(snapshots > 0);
    assert.equal(store.saved.length, saves + 1);
  });
});
