import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { begin, names, send, setup, statusOf } from "./test-support.ts";
import { attr, child, childText, childrenNamed } from "../../ledger/xml/tree.ts";

describe("IDs, EditSequence and timestamps", () => {
  it("follow the application's formats with an injected clock", async () => {
    const { session, clock } = await setup({ seed: "empty" });
    const account = await send(
      session,
      `<AccountAddRq><AccountAdd><Name>AR</Name><AccountType>AccountsReceivable</AccountType></AccountAdd></AccountAddRq>`,
    );
    const accountRet = account.rs[0]?.children[0] ?? account.msgs;
    assert.equal(childText(accountRet, "ListID"), "80000001-1768478400");
    assert.equal(childText(accountRet, "TimeCreated"), "2026-01-15T07:00:00-05:00");
    assert.equal(childText(accountRet, "EditSequence"), "1768478400");
    await send(
      session,
      `<CustomerAddRq><CustomerAdd><Name>C</Name></CustomerAdd></CustomerAddRq><ItemServiceAddRq><ItemServiceAdd><Name>Svc</Name><SalesOrPurchase><Price>10.00</Price></SalesOrPurchase></ItemServiceAdd></ItemServiceAddRq>`,
    );
    clock.advance(61.5);
    const invoice = await send(
      session,
      `<InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>C</FullName></CustomerRef><InvoiceLineAdd><ItemRef><FullName>Svc</FullName></ItemRef><Quantity>2</Quantity><Rate>10</Rate></InvoiceLineAdd><InvoiceLineAdd><ItemRef><FullName>Svc</FullName></ItemRef><Amount>0.1</Amount></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>`,
    );
    const ret = invoice.rs[0]?.children[0] ?? invoice.msgs;
    // Transactions and their lines share one counter; seconds are truncated.
    assert.equal(childText(ret, "TxnID"), "1-1768478461");
    assert.deepEqual(
      childrenNamed(ret, "InvoiceLineRet").map((l) => childText(l, "TxnLineID")),
      ["2-1768478461", "3-1768478461"],
    );
    assert.equal(childText(ret, "TimeModified"), "2026-01-15T07:01:01-05:00");
    assert.equal(childText(ret, "TxnDate"), "2026-01-15");
    assert.equal(childText(ret, "Subtotal"), "20.10");
    clock.advance(3600);
    const modded = await send(
      session,
      `<InvoiceModRq><InvoiceMod><TxnID>1-1768478461</TxnID><EditSequence>1768478461</EditSequence><Memo>m</Memo></InvoiceMod></InvoiceModRq>`,
    );
    const modRet = modded.rs[0]?.children[0] ?? modded.msgs;
    assert.equal(childText(modRet, "EditSequence"), "1768482061");
    assert.equal(childText(modRet, "TimeCreated"), "2026-01-15T07:01:01-05:00");
    assert.equal(childText(modRet, "TimeModified"), "2026-01-15T08:01:01-05:00");
  });
});

describe("invoices", () => {
  it("InvoiceAdd computes totals with lines in the sample-12 shape", async () => {
    const { session } = await setup();
    const response = await send(
      session,
      `<InvoiceAddRq requestID="inv"><InvoiceAdd><CustomerRef><FullName>Initech</FullName></CustomerRef><TxnDate>2026-01-12</TxnDate><RefNumber>R-77</RefNumber><BillAddress><Addr1>1 Road</Addr1><City>Austin</City><State>TX</State><PostalCode>78701</PostalCode></BillAddress><InvoiceLineAdd><ItemRef><FullName>Consulting</FullName></ItemRef><Desc>Work</Desc><Quantity>1.5</Quantity><Rate>150.00</Rate></InvoiceLineAdd><InvoiceLineAdd><ItemRef><FullName>Widget</FullName></ItemRef><Quantity>3</Quantity><Rate>19.99</Rate></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>`,
    );
    const ret = child(response.rs[0] ?? response.msgs, "InvoiceRet");
    assert.ok(ret !== undefined);
    assert.deepEqual(names(ret), [
      "TxnID",
      "TimeCreated",
      "TimeModified",
      "EditSequence",
      "TxnNumber",
      "CustomerRef",
      "ARAccountRef",
      "TxnDate",
      "RefNumber",
      "BillAddress",
      "BillAddressBlock",
      "IsPending",
      "IsFinanceCharge",
      "DueDate",
      "ShipDate",
      "Subtotal",
      "SalesTaxPercentage",
      "SalesTaxTotal",
      "AppliedAmount",
      "BalanceRemaining",
      "IsPaid",
      "IsToBePrinted",
      "IsToBeEmailed",
      "InvoiceLineRet",
      "InvoiceLineRet",
    ]);
    assert.equal(childText(ret, "Subtotal"), "284.97");
    assert.equal(childText(ret, "BalanceRemaining"), "284.97");
    assert.equal(childText(ret, "TxnNumber"), "5", "the sample seeds three invoices and a bill");
    assert.deepEqual(names(child(ret, "ARAccountRef")), ["ListID", "FullName"]);
    const line = childrenNamed(ret, "InvoiceLineRet")[0];
    assert.deepEqual(names(line), ["TxnLineID", "ItemRef", "Desc", "Quantity", "Rate", "Amount"]);
    assert.equal(childText(line ?? ret, "Amount"), "225.00");
    const customer = await send(session, `<CustomerQueryRq><FullName>Initech</FullName></CustomerQueryRq>`);
    assert.equal(childText(customer.rs[0]?.children[0] ?? customer.msgs, "Balance"), "284.97");
  });

  it("3140 for an unknown customer or item (nothing is created)", async () => {
    const { session, file } = await setup();
    const response = await send(
      session,
      `<InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>Nobody</FullName></CustomerRef><InvoiceLineAdd><Amount>1.00</Amount></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq><InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>Initech</FullName></CustomerRef><InvoiceLineAdd><ItemRef><FullName>Gizmo</FullName></ItemRef><Amount>1.00</Amount></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>`,
      'onError="continueOnError"',
    );
    assert.deepEqual(statusOf(response.rs[0]), {
      code: "3140",
      severity: "Error",
      message:
        'There is an invalid reference to Ledger Customer "Nobody" in the Invoice.  Ledger error message: Invalid argument.  The specified record does not exist in the list.',
    });
    assert.match(
      statusOf(response.rs[1]).message,
      /^There is an invalid reference to Ledger Item "Gizmo" in the Invoice line\./,
    );
    assert.equal(file.count("Invoice"), 3);
  });

  it("InvoiceMod replaces lines: kept lines by TxnLineID, new lines with -1, omitted lines deleted", async () => {
    const { session } = await setup();
    const found = await send(
      session,
      `<InvoiceQueryRq><RefNumber>2</RefNumber><IncludeLineItems>true</IncludeLineItems></InvoiceQueryRq>`,
    );
    const inv = found.rs[0]?.children[0] ?? found.msgs;
    const [first] = childrenNamed(inv, "InvoiceLineRet");
    const response = await send(
      session,
      `<InvoiceModRq><InvoiceMod><TxnID>${childText(inv, "TxnID") ?? ""}</TxnID><EditSequence>${childText(inv, "EditSequence") ?? ""}</EditSequence><InvoiceLineMod><TxnLineID>${childText(first ?? inv, "TxnLineID") ?? ""}</TxnLineID><Quantity>2</Quantity></InvoiceLineMod><InvoiceLineMod><TxnLineID>-1</TxnLineID><ItemRef><FullName>Widget</FullName></ItemRef><Quantity>1</Quantity><Rate>25</Rate></InvoiceLineMod></InvoiceMod></InvoiceModRq>`,
    );
    const ret = response.rs[0]?.children[0] ?? response.msgs;
    const lines = childrenNamed(ret, "InvoiceLineRet");
    assert.equal(lines.length, 2);
    assert.equal(childText(lines[0] ?? ret, "Amount"), "300.00", "Amount recomputed from the new Quantity");
    assert.equal(childText(ret, "Subtotal"), "325.00");
  });

  it("queries by TxnID, EntityFilter, TxnDateRangeFilter; lines only with IncludeLineItems", async () => {
    const { session } = await setup();
    const byEntity = await send(
      session,
      `<InvoiceQueryRq><EntityFilter><FullNameWithChildren>Acme Corporation</FullNameWithChildren></EntityFilter></InvoiceQueryRq>`,
    );
    assert.equal(byEntity.rs[0]?.children.length, 2);
    assert.equal(childrenNamed(byEntity.rs[0]?.children[0] ?? byEntity.msgs, "InvoiceLineRet").length, 0);
    const byDate = await send(
      session,
      `<InvoiceQueryRq><TxnDateRangeFilter><FromTxnDate>2026-01-06</FromTxnDate><ToTxnDate>2026-01-09</ToTxnDate></TxnDateRangeFilter></InvoiceQueryRq>`,
    );
    assert.deepEqual(
      byDate.rs[0]?.children.map((c) => childText(c, "RefNumber")),
      ["2"],
    );
    const missing = await send(session, `<InvoiceQueryRq><TxnID>99-1</TxnID></InvoiceQueryRq>`);
    assert.equal(statusOf(missing.rs[0]).code, "3120");
  });
});

describe("answer order", () => {
  it("transactions answer in creation order: modifying the first invoice does not move it", async () => {
    const { session, clock } = await setup();
    const refNumbers = async (): Promise<string[]> => {
      const all = await send(session, `<InvoiceQueryRq></InvoiceQueryRq>`);
      return childrenNamed(all.rs[0] ?? all.msgs, "InvoiceRet").map((r) => childText(r, "RefNumber") ?? "");
    };
    const before = await refNumbers();
    assert.ok(before.length >= 3, "the sample company has invoices");
    const first = await send(
      session,
      `<InvoiceQueryRq><RefNumber>${before[0] ?? ""}</RefNumber></InvoiceQueryRq>`,
    );
    const ret = first.rs[0]?.children[0] ?? first.msgs;
    clock.advance(60);
    const modded = await send(
      session,
      `<InvoiceModRq><InvoiceMod><TxnID>${childText(ret, "TxnID") ?? ""}</TxnID><EditSequence>${childText(ret, "EditSequence") ?? ""}</EditSequence><Memo>changed</Memo></InvoiceMod></InvoiceModRq>`,
    );
    assert.equal(statusOf(modded.rs[0]).code, "0");
    assert.deepEqual(await refNumbers(), before);
  });
});

describe("ListDel / TxnDel", () => {
  it("deletes records in the sample-15 shape; in-use list elements cannot be deleted", async () => {
    const { session, file } = await setup();
    const customers = await send(
      session,
      `<CustomerQueryRq><FullName>Umbrella LLC</FullName><FullName>Globex Inc</FullName></CustomerQueryRq>`,
    );
    const [umbrella, globex] = customers.rs[0]?.children ?? [];
    const del = await send(
      session,
      `<ListDelRq requestID="0"><ListDelType>Customer</ListDelType><ListID>${childText(umbrella ?? customers.msgs, "ListID") ?? ""}</ListID></ListDelRq>`,
    );
    assert.deepEqual(names(del.rs[0]), ["ListDelType", "ListID", "TimeDeleted", "FullName"]);
    assert.equal(childText(del.rs[0] ?? del.msgs, "FullName"), "Umbrella LLC");
    assert.equal(file.count("Customer"), 5);
    const inUse = await send(
      session,
      `<ListDelRq><ListDelType>Customer</ListDelType><ListID>${childText(globex ?? customers.msgs, "ListID") ?? ""}</ListID></ListDelRq>`,
    );
    assert.equal(statusOf(inUse.rs[0]).code, "3170");
    const invoices = await send(session, `<InvoiceQueryRq><RefNumber>3</RefNumber></InvoiceQueryRq>`);
    const txnId = childText(invoices.rs[0]?.children[0] ?? invoices.msgs, "TxnID") ?? "";
    const txnDel = await send(
      session,
      `<TxnDelRq><TxnDelType>Invoice</TxnDelType><TxnID>${txnId}</TxnID></TxnDelRq>`,
    );
    assert.deepEqual(names(txnDel.rs[0]), ["TxnDelType", "TxnID", "TimeDeleted", "RefNumber"]);
    assert.equal(file.count("Invoice"), 2);
    const again = await send(
      session,
      `<TxnDelRq><TxnDelType>Invoice</TxnDelType><TxnID>${txnId}</TxnID></TxnDelRq>`,
    );
    assert.equal(statusOf(again.rs[0]).code, "3120");
  });
});

describe("iterators", () => {
  it("page with MaxReturned and are scoped to the session (3391 after end or elsewhere)", async () => {
    const { app, session } = await setup();
    const first = await send(
      session,
      `<CustomerQueryRq requestID="1" iterator="Start"><MaxReturned>4</MaxReturned></CustomerQueryRq>`,
    );
    const iteratorId = attr(first.rs[0] ?? first.msgs, "iteratorID") ?? "";
    assert.match(iteratorId, /^\{[0-9A-Fa-f-]{36}\}$/);
    assert.equal(attr(first.rs[0] ?? first.msgs, "iteratorRemainingCount"), "2");
    assert.equal(first.rs[0]?.children.length, 4);
    assert.match(first.raw, /statusMessage="Status OK" iteratorRemainingCount="2" iteratorID="\{/);

    const other = await begin(app);
    const foreign = await send(
      other,
      `<CustomerQueryRq iterator="Continue" iteratorID="${iteratorId}"><MaxReturned>4</MaxReturned></CustomerQueryRq>`,
    );
    assert.deepEqual(statusOf(foreign.rs[0]), {
      code: "3391",
      severity: "Error",
      message: `The iteratorID "${iteratorId}" is not valid.`,
    });

    const second = await send(
      session,
      `<CustomerQueryRq requestID="2" iterator="Continue" iteratorID="${iteratorId}"><MaxReturned>4</MaxReturned></CustomerQueryRq>`,
    );
    assert.equal(attr(second.rs[0] ?? second.msgs, "iteratorRemainingCount"), "0");
    assert.equal(second.rs[0]?.children.length, 2);

    const restart = await send(
      session,
      `<CustomerQueryRq iterator="Start"><MaxReturned>1</MaxReturned></CustomerQueryRq>`,
    );
    const restartId = attr(restart.rs[0] ?? restart.msgs, "iteratorID") ?? "";
    session.end();
    const afterEnd = await send(
      session,
      `<CustomerQueryRq iterator="Continue" iteratorID="${restartId}"><MaxReturned>1</MaxReturned></CustomerQueryRq>`,
    );
    assert.equal(statusOf(afterEnd.rs[0]).code, "3391");
  });

  it("metaData=MetaDataOnly returns retCount without records", async () => {
    const { session } = await setup();
    const response = await send(session, `<InvoiceQueryRq metaData="MetaDataOnly" />`);
    assert.equal(attr(response.rs[0] ?? response.msgs, "retCount"), "3");
    assert.equal(response.rs[0]?.children.length, 0);
  });
});

describe("error recovery", () => {
  it("stores the response under newMessageSetID, replays it, reports 600 when nothing is stored, and clears", async () => {
    const { session, file } = await setup();
    const written = await send(
      session,
      `<CustomerAddRq requestID="1"><CustomerAdd><Name>Recovered</Name></CustomerAdd></CustomerAddRq>`,
      'newMessageSetID="AB1F2395" onError="continueOnError"',
    );
    assert.equal(attr(written.msgs, "newMessageSetID"), "AB1F2395");
    const count = file.count("Customer");

    const replay = await send(
      session,
      "",
      'oldMessageSetID="AB1F2395" newMessageSetID="AB1F2395" onError="continueOnError"',
    );
    assert.equal(attr(replay.msgs, "messageSetStatusCode"), "0");
    assert.equal(attr(replay.msgs, "newMessageSetID"), "AB1F2395");
    assert.deepEqual(
      replay.rs.map((rs) => rs.name),
      ["CustomerAddRs"],
    );
    assert.equal(
      childText(child(replay.rs[0] ?? replay.msgs, "CustomerRet") ?? replay.msgs, "Name"),
      "Recovered",
    );
    assert.equal(file.count("Customer"), count, "replay does not run anything again");

    const cleared = await send(session, "", 'oldMessageSetID="AB1F2395" onError="continueOnError"');
    assert.equal(cleared.rs.length, 0);
    const nothing = await send(
      session,
      "",
      'oldMessageSetID="AB1F2395" newMessageSetID="AB1F2395" onError="continueOnError"',
    );
    assert.equal(attr(nothing.msgs, "messageSetStatusCode"), "600");
    assert.equal(nothing.rs.length, 0);
  });

  it("keeps saved state per company file across sessions", async () => {
    const { app, session } = await setup();
    await send(
      session,
      `<CustomerAddRq><CustomerAdd><Name>Once</Name></CustomerAdd></CustomerAddRq>`,
      'newMessageSetID="X1" onError="stopOnError"',
    );
    session.end();
    const next = await begin(app);
    const replay = await send(next, "", 'oldMessageSetID="X1" newMessageSetID="X1" onError="stopOnError"');
    assert.equal(attr(replay.msgs, "messageSetStatusCode"), "0");
    assert.equal(replay.rs.length, 1);
  });
});
