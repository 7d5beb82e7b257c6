/**
 * Focused tests of the generic engine's rules: references of a fitting type, line families on Mod,
 * what the application computes (tax, applied payments, balances, stock), void, merge, the deleted
 * log, custom fields and iterator expiry. Each uses the sample company and the test clock.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { attr, child, childText, childrenNamed, type XmlElement } from "../../ledger/xml/tree.ts";
import { ledgerSchema } from "../../ledger/xml/schema.ts";
import { messageProblem } from "../../ledger/xml/validate-tree.ts";
import { DELETED_RETENTION_SECONDS } from "./lifecycle-ops.ts";
import { ITERATOR_IDLE_SECONDS } from "./query-ops.ts";
import { send, setup, statusOf } from "./test-support.ts";

function ret(response: { rs: readonly XmlElement[] }, index = 0): XmlElement {
  const found = response.rs[index]?.children[0];
  assert.ok(found !== undefined, "no record in the answer");
  return found;
}

async function queryOne(session: Parameters<typeof send>[0], body: string): Promise<XmlElement> {
  return ret(await send(session, body));
}

describe("references", () => {
  it("must name a record of a fitting type (a vendor is no customer): 3140", async () => {
    const { session, file } = await setup();
    const before = file.count("Invoice");
    const response = await send(
      session,
      `<InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>Paper Supply Co</FullName></CustomerRef></InvoiceAdd></InvoiceAddRq>`,
    );
    assert.equal(statusOf(response.rs[0]).code, "3140");
    assert.match(statusOf(response.rs[0]).message, /invalid reference to Ledger Customer "Paper Supply Co"/);
    assert.equal(file.count("Invoice"), before);
  });

  it("a customer and a vendor may not share a name (one entity name space); an item may", async () => {
    const { session } = await setup();
    const response = await send(
      session,
      `<VendorAddRq><VendorAdd><Name>initech</Name></VendorAdd></VendorAddRq><ItemServiceAddRq><ItemServiceAdd><Name>Initech</Name><SalesOrPurchase><Price>1.00</Price><AccountRef><FullName>Consulting Income</FullName></AccountRef></SalesOrPurchase></ItemServiceAdd></ItemServiceAddRq>`,
      'onError="continueOnError"',
    );
    assert.equal(statusOf(response.rs[0]).code, "3100");
    assert.equal(statusOf(response.rs[1]).code, "0");
  });
});

describe("line families on Mod", () => {
  it("a family that is not mentioned stays; ClearExpenseLines empties only its family", async () => {
    const { session } = await setup();
    const added = ret(
      await send(
        session,
        `<BillAddRq><BillAdd><VendorRef><FullName>Paper Supply Co</FullName></VendorRef><ExpenseLineAdd><AccountRef><FullName>Office Supplies</FullName></AccountRef><Amount>10.00</Amount></ExpenseLineAdd><ItemLineAdd><ItemRef><FullName>Widget</FullName></ItemRef><Quantity>2</Quantity><Cost>4.50</Cost></ItemLineAdd></BillAdd></BillAddRq>`,
      ),
    );
    assert.equal(childText(added, "AmountDue"), "19.00");
    const txnId = childText(added, "TxnID") ?? "";
    const itemLine = child(added, "ItemLineRet");
    const modded = ret(
      await send(
        session,
        `<BillModRq><BillMod><TxnID>${txnId}</TxnID><EditSequence>${childText(added, "EditSequence") ?? ""}</EditSequence><ExpenseLineMod><TxnLineID>-1</TxnLineID><AccountRef><FullName>Office Supplies</FullName></AccountRef><Amount>5.00</Amount></ExpenseLineMod></BillMod></BillModRq>`,
      ),
    );
    assert.equal(childrenNamed(modded, "ExpenseLineRet").length, 1, "the expense family was replaced");
    assert.equal(childText(child(modded, "ExpenseLineRet") ?? modded, "Amount"), "5.00");
    assert.equal(
      childText(child(modded, "ItemLineRet") ?? modded, "TxnLineID"),
      childText(itemLine ?? added, "TxnLineID"),
    );
    assert.equal(childText(modded, "AmountDue"), "14.00");
    const cleared = ret(
      await send(
        session,
        `<BillModRq><BillMod><TxnID>${txnId}</TxnID><EditSequence>${childText(modded, "EditSequence") ?? ""}</EditSequence><ClearExpenseLines>true</ClearExpenseLines></BillMod></BillModRq>`,
      ),
    );
    assert.equal(childrenNamed(cleared, "ExpenseLineRet").length, 0);
    assert.equal(childrenNamed(cleared, "ItemLineRet").length, 1);
    assert.equal(childText(cleared, "AmountDue"), "9.00");
  });

  it("an empty element clears a field; an aggregate changes field by field", async () => {
    const { session } = await setup();
    const acme = await queryOne(
      session,
      `<CustomerQueryRq><FullName>Acme Corporation</FullName></CustomerQueryRq>`,
    );
    const modded = ret(
      await send(
        session,
        `<CustomerModRq><CustomerMod><ListID>${childText(acme, "ListID") ?? ""}</ListID><EditSequence>${childText(acme, "EditSequence") ?? ""}</EditSequence><BillAddress><City>Shelbyville</City></BillAddress><Phone></Phone></CustomerMod></CustomerModRq>`,
      ),
    );
    const address = child(modded, "BillAddress");
    assert.equal(childText(address ?? modded, "Addr1"), "1 Acme Way", "untouched address lines stay");
    assert.equal(childText(address ?? modded, "City"), "Shelbyville");
    assert.equal(child(modded, "Phone"), undefined);
  });
});

describe("what the application computes", () => {
  it("sales tax on taxable lines, payments applied to invoices, linked transactions and balances", async () => {
    const { session } = await setup();
    await send(
      session,
      `<SalesTaxCodeAddRq><SalesTaxCodeAdd><Name>Tax</Name><IsTaxable>true</IsTaxable></SalesTaxCodeAdd></SalesTaxCodeAddRq><ItemSalesTaxAddRq><ItemSalesTaxAdd><Name>State</Name><TaxRate>8.25</TaxRate></ItemSalesTaxAdd></ItemSalesTaxAddRq>`,
    );
    const invoice = ret(
      await send(
        session,
        `<InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>Umbrella LLC</FullName></CustomerRef><ItemSalesTaxRef><FullName>State</FullName></ItemSalesTaxRef><InvoiceLineAdd><ItemRef><FullName>Widget</FullName></ItemRef><Quantity>4</Quantity><SalesTaxCodeRef><FullName>Tax</FullName></SalesTaxCodeRef></InvoiceLineAdd><InvoiceLineAdd><ItemRef><FullName>Consulting</FullName></ItemRef><Quantity>1</Quantity></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>`,
      ),
    );
    // Widget's price (25.00) × 4 and Consulting's (150.00); tax 8.25% of the taxable 100.00.
    assert.equal(childText(invoice, "Subtotal"), "250.00");
    assert.equal(childText(invoice, "SalesTaxPercentage"), "8.25");
    assert.equal(childText(invoice, "SalesTaxTotal"), "8.25");
    assert.equal(childText(invoice, "BalanceRemaining"), "258.25");
    const txnId = childText(invoice, "TxnID") ?? "";
    const payment = ret(
      await send(
        session,
        `<ReceivePaymentAddRq><ReceivePaymentAdd><CustomerRef><FullName>Umbrella LLC</FullName></CustomerRef><TotalAmount>300.00</TotalAmount><AppliedToTxnAdd><TxnID>${txnId}</TxnID><PaymentAmount>200.00</PaymentAmount></AppliedToTxnAdd></ReceivePaymentAdd></ReceivePaymentAddRq>`,
      ),
    );
    assert.equal(childText(payment, "UnusedPayment"), "100.00");
    const applied = child(payment, "AppliedToTxnRet");
    assert.equal(childText(applied ?? payment, "TxnType"), "Invoice");
    assert.equal(childText(applied ?? payment, "BalanceRemaining"), "58.25");
    assert.equal(childText(applied ?? payment, "Amount"), "200.00");
    const after = await queryOne(
      session,
      `<InvoiceQueryRq><TxnID>${txnId}</TxnID><IncludeLinkedTxns>true</IncludeLinkedTxns></InvoiceQueryRq>`,
    );
    assert.equal(childText(after, "AppliedAmount"), "-200.00");
    assert.equal(childText(after, "BalanceRemaining"), "58.25");
    assert.equal(childText(after, "IsPaid"), "false");
    assert.equal(childText(child(after, "LinkedTxn") ?? after, "TxnID"), childText(payment, "TxnID"));
    assert.equal(childText(child(after, "LinkedTxn") ?? after, "Amount"), "-200.00");
    const customer = await queryOne(
      session,
      `<CustomerQueryRq><FullName>Umbrella LLC</FullName></CustomerQueryRq>`,
    );
    // 58.25 still open on the invoice, 100.00 paid in advance.
    assert.equal(childText(customer, "Balance"), "-41.75");
    const unpaid = await send(
      session,
      `<InvoiceQueryRq><EntityFilter><FullName>Umbrella LLC</FullName></EntityFilter><PaidStatus>PaidOnly</PaidStatus></InvoiceQueryRq>`,
    );
    assert.equal(statusOf(unpaid.rs[0]).code, "1");
  });

  it("IsAutoApply applies a payment to the customer's open invoices, oldest first", async () => {
    const { session } = await setup();
    const payment = ret(
      await send(
        session,
        `<ReceivePaymentAddRq><ReceivePaymentAdd><CustomerRef><FullName>Globex Inc</FullName></CustomerRef><TotalAmount>250.00</TotalAmount><IsAutoApply>true</IsAutoApply></ReceivePaymentAdd></ReceivePaymentAddRq>`,
      ),
    );
    // Globex's one invoice is 300.00.
    assert.equal(childText(child(payment, "AppliedToTxnRet") ?? payment, "Amount"), "250.00");
    assert.equal(childText(child(payment, "AppliedToTxnRet") ?? payment, "BalanceRemaining"), "50.00");
    assert.equal(childText(payment, "UnusedPayment"), "0.00");
  });

  it("a customer's TotalBalance includes its jobs; a vendor's balance follows its bills", async () => {
    const { session } = await setup();
    const acme = await queryOne(
      session,
      `<CustomerQueryRq><FullName>Acme Corporation</FullName></CustomerQueryRq>`,
    );
    // Seeded: 600.00 on Acme itself, 1575.00 on its job.
    assert.equal(childText(acme, "Balance"), "600.00");
    assert.equal(childText(acme, "TotalBalance"), "2175.00");
    const vendor = await queryOne(
      session,
      `<VendorQueryRq><FullName>Paper Supply Co</FullName></VendorQueryRq>`,
    );
    assert.equal(childText(vendor, "Balance"), "180.00");
  });

  it("inventory quantity on hand follows purchases, sales and adjustments", async () => {
    const { session } = await setup();
    await send(
      session,
      `<ItemInventoryAddRq><ItemInventoryAdd><Name>Gadget</Name><SalesPrice>10.00</SalesPrice><PurchaseCost>4.00</PurchaseCost><QuantityOnHand>10</QuantityOnHand><TotalValue>40.00</TotalValue></ItemInventoryAdd></ItemInventoryAddRq>
<BillAddRq><BillAdd><VendorRef><FullName>Paper Supply Co</FullName></VendorRef><ItemLineAdd><ItemRef><FullName>Gadget</FullName></ItemRef><Quantity>5</Quantity></ItemLineAdd></BillAdd></BillAddRq>
<InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>Initech</FullName></CustomerRef><InvoiceLineAdd><ItemRef><FullName>Gadget</FullName></ItemRef><Quantity>3</Quantity></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>
<InventoryAdjustmentAddRq><InventoryAdjustmentAdd><AccountRef><FullName>Office Supplies</FullName></AccountRef><InventoryAdjustmentLineAdd><ItemRef><FullName>Gadget</FullName></ItemRef><QuantityAdjustment><QuantityDifference>-2</QuantityDifference></QuantityAdjustment></InventoryAdjustmentLineAdd></InventoryAdjustmentAdd></InventoryAdjustmentAddRq>`,
    );
    const gadget = await queryOne(
      session,
      `<ItemInventoryQueryRq><FullName>Gadget</FullName></ItemInventoryQueryRq>`,
    );
    assert.equal(childText(gadget, "QuantityOnHand"), "10");
  });
});

describe("void, merge, delete, custom fields", () => {
  it("a voided transaction stays with zero amounts and the balance follows", async () => {
    const { session } = await setup();
    const invoice = await queryOne(session, `<InvoiceQueryRq><RefNumber>3</RefNumber></InvoiceQueryRq>`);
    const voided = await send(
      session,
      `<TxnVoidRq><TxnVoidType>Invoice</TxnVoidType><TxnID>${childText(invoice, "TxnID") ?? ""}</TxnID></TxnVoidRq>`,
    );
    assert.equal(statusOf(voided.rs[0]).code, "0");
    const after = await queryOne(
      session,
      `<InvoiceQueryRq><RefNumber>3</RefNumber><IncludeLineItems>true</IncludeLineItems></InvoiceQueryRq>`,
    );
    assert.equal(childText(after, "Subtotal"), "0.00");
    assert.match(childText(after, "Memo") ?? "", /^VOID:/);
    assert.equal(childrenNamed(after, "InvoiceLineRet").length, 1, "the lines stay");
    const globex = await queryOne(
      session,
      `<CustomerQueryRq><FullName>Globex Inc</FullName></CustomerQueryRq>`,
    );
    assert.equal(childText(globex, "Balance"), "0.00");
  });

  it("merge moves every reference to the target and deletes the source", async () => {
    const { session, file } = await setup();
    const [globex, initech] = [
      await queryOne(session, `<CustomerQueryRq><FullName>Globex Inc</FullName></CustomerQueryRq>`),
      await queryOne(session, `<CustomerQueryRq><FullName>Initech</FullName></CustomerQueryRq>`),
    ];
    const merge = (fromSeq: string): string =>
      `<ListMergeRq><ListMergeType>Customer</ListMergeType><MergeFrom><ListID>${childText(globex, "ListID") ?? ""}</ListID><EditSequence>${fromSeq}</EditSequence></MergeFrom><MergeTo><ListID>${childText(initech, "ListID") ?? ""}</ListID><EditSequence>${childText(initech, "EditSequence") ?? ""}</EditSequence></MergeTo></ListMergeRq>`;
    assert.equal(statusOf((await send(session, merge("1"))).rs[0]).code, "3200");
    const merged = await send(session, merge(childText(globex, "EditSequence") ?? ""));
    assert.equal(statusOf(merged.rs[0]).code, "0");
    assert.equal(
      childText(child(merged.rs[0] ?? merged.msgs, "MergedFrom") ?? merged.msgs, "FullName"),
      "Globex Inc",
    );
    assert.equal(file.count("Customer"), 5);
    const invoices = await send(
      session,
      `<InvoiceQueryRq><EntityFilter><FullName>Initech</FullName></EntityFilter></InvoiceQueryRq>`,
    );
    assert.equal(invoices.rs[0]?.children.length, 1, "Globex's invoice now names Initech");
  });

  it("deleted objects are listed for 90 days; referenced ones cannot be deleted", async () => {
    const { session, clock } = await setup();
    const widget = await queryOne(
      session,
      `<ItemNonInventoryQueryRq><FullName>Widget</FullName></ItemNonInventoryQueryRq>`,
    );
    const inUse = await send(
      session,
      `<ListDelRq><ListDelType>ItemNonInventory</ListDelType><ListID>${childText(widget, "ListID") ?? ""}</ListID></ListDelRq>`,
    );
    assert.equal(statusOf(inUse.rs[0]).code, "3170");
    const bill = await queryOne(session, `<BillQueryRq><RefNumber>PS-1001</RefNumber></BillQueryRq>`);
    await send(
      session,
      `<TxnDelRq><TxnDelType>Bill</TxnDelType><TxnID>${childText(bill, "TxnID") ?? ""}</TxnID></TxnDelRq>`,
    );
    const listed = await send(
      session,
      `<TxnDeletedQueryRq><TxnDelType>Bill</TxnDelType></TxnDeletedQueryRq>`,
    );
    assert.equal(childText(ret(listed), "RefNumber"), "PS-1001");
    clock.advance(DELETED_RETENTION_SECONDS - 1);
    assert.equal(
      statusOf(
        (await send(session, `<TxnDeletedQueryRq><TxnDelType>Bill</TxnDelType></TxnDeletedQueryRq>`)).rs[0],
      ).code,
      "0",
    );
    clock.advance(2);
    assert.equal(
      statusOf(
        (await send(session, `<TxnDeletedQueryRq><TxnDelType>Bill</TxnDelType></TxnDeletedQueryRq>`)).rs[0],
      ).code,
      "1",
    );
  });

  it("custom field values need a definition and show for their owner only", async () => {
    const { session } = await setup();
    const acme = await queryOne(
      session,
      `<CustomerQueryRq><FullName>Acme Corporation</FullName></CustomerQueryRq>`,
    );
    const value = `<DataExtAddRq><DataExtAdd><OwnerID>0</OwnerID><DataExtName>Region</DataExtName><ListDataExtType>Customer</ListDataExtType><ListObjRef><ListID>${childText(acme, "ListID") ?? ""}</ListID></ListObjRef><DataExtValue>North</DataExtValue></DataExtAdd></DataExtAddRq>`;
    assert.equal(statusOf((await send(session, value)).rs[0]).code, "3120");
    await send(
      session,
      `<DataExtDefAddRq><DataExtDefAdd><OwnerID>0</OwnerID><DataExtName>Region</DataExtName><DataExtType>STR255TYPE</DataExtType><AssignToObject>Customer</AssignToObject></DataExtDefAdd></DataExtDefAddRq>`,
    );
    assert.equal(statusOf((await send(session, value)).rs[0]).code, "0");
    const withOwner = await queryOne(
      session,
      `<CustomerQueryRq><FullName>Acme Corporation</FullName><OwnerID>0</OwnerID></CustomerQueryRq>`,
    );
    assert.equal(childText(child(withOwner, "DataExtRet") ?? withOwner, "DataExtValue"), "North");
    const without = await queryOne(
      session,
      `<CustomerQueryRq><FullName>Acme Corporation</FullName></CustomerQueryRq>`,
    );
    assert.equal(child(without, "DataExtRet"), undefined);
  });

  it("a Mod of a public field writes a first value; a private field's Mod needs one; Del answers owner and name", async () => {
    const { session } = await setup();
    const acme = await queryOne(
      session,
      `<CustomerQueryRq><FullName>Acme Corporation</FullName></CustomerQueryRq>`,
    );
    const ref = `<ListDataExtType>Customer</ListDataExtType><ListObjRef><ListID>${childText(acme, "ListID") ?? ""}</ListID></ListObjRef>`;
    const owner = "{11111111-2222-3333-4444-555555555555}";
    for (const id of ["0", owner]) {
      await send(
        session,
        `<DataExtDefAddRq><DataExtDefAdd><OwnerID>${id}</OwnerID><DataExtName>Tier</DataExtName><DataExtType>STR255TYPE</DataExtType><AssignToObject>Customer</AssignToObject></DataExtDefAdd></DataExtDefAddRq>`,
      );
    }
    const mod = (id: string, value: string): string =>
      `<DataExtModRq><DataExtMod><OwnerID>${id}</OwnerID><DataExtName>Tier</DataExtName>${ref}<DataExtValue>${value}</DataExtValue></DataExtMod></DataExtModRq>`;
    const publicMod = await send(session, mod("0", "Gold"));
    assert.equal(statusOf(publicMod.rs[0]).code, "0", "a public field needs no value before a Mod");
    assert.equal(childText(ret(publicMod), "DataExtValue"), "Gold");
    assert.equal(statusOf((await send(session, mod(owner, "Secret"))).rs[0]).code, "3120");
    const deleted = ret(
      await send(
        session,
        `<DataExtDelRq><DataExtDel><OwnerID>0</OwnerID><DataExtName>tier</DataExtName>${ref}</DataExtDel></DataExtDelRq>`,
      ),
    );
    assert.equal(deleted.name, "DataExtDelRet");
    assert.deepEqual([childText(deleted, "OwnerID"), childText(deleted, "DataExtName")], ["0", "Tier"]);
  });

  it("line values show for the owners a query names only", async () => {
    const { session } = await setup();
    await send(
      session,
      `<DataExtDefAddRq><DataExtDefAdd><OwnerID>0</OwnerID><DataExtName>Batch</DataExtName><DataExtType>STR255TYPE</DataExtType><AssignToObject>Invoice</AssignToObject></DataExtDefAdd></DataExtDefAddRq>`,
    );
    const invoice = ret(
      await send(
        session,
        `<InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>Acme Corporation</FullName></CustomerRef><InvoiceLineAdd><ItemRef><FullName>Widget</FullName></ItemRef><Quantity>1</Quantity></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>`,
      ),
    );
    const txnId = childText(invoice, "TxnID") ?? "";
    const lineId = childText(child(invoice, "InvoiceLineRet") ?? invoice, "TxnLineID") ?? "";
    const added = await send(
      session,
      `<DataExtAddRq><DataExtAdd><OwnerID>0</OwnerID><DataExtName>Batch</DataExtName><TxnDataExtType>Invoice</TxnDataExtType><TxnID>${txnId}</TxnID><TxnLineID>${lineId}</TxnLineID><DataExtValue>B-7</DataExtValue></DataExtAdd></DataExtAddRq>`,
    );
    assert.equal(statusOf(added.rs[0]).code, "0");
    const query = (owner: string): string =>
      `<InvoiceQueryRq><TxnID>${txnId}</TxnID><IncludeLineItems>true</IncludeLineItems>${owner}</InvoiceQueryRq>`;
    const line = (invoiceRet: XmlElement): XmlElement => child(invoiceRet, "InvoiceLineRet") ?? invoiceRet;
    const withOwner = line(await queryOne(session, query("<OwnerID>0</OwnerID>")));
    assert.equal(childText(child(withOwner, "DataExtRet") ?? withOwner, "DataExtValue"), "B-7");
    assert.equal(child(line(await queryOne(session, query(""))), "DataExtRet"), undefined);
  });
});

describe("iterators", () => {
  it("expire after the idle time; Stop ends them", async () => {
    const { session, clock } = await setup();
    const start = `<CustomerQueryRq iterator="Start"><MaxReturned>2</MaxReturned></CustomerQueryRq>`;
    const first = await send(session, start);
    const id = attr(first.rs[0] ?? first.msgs, "iteratorID") ?? "";
    clock.advance(ITERATOR_IDLE_SECONDS);
    const next = await send(
      session,
      `<CustomerQueryRq iterator="Continue" iteratorID="${id}"><MaxReturned>2</MaxReturned></CustomerQueryRq>`,
    );
    assert.equal(statusOf(next.rs[0]).code, "0", "still alive at exactly the idle time");
    clock.advance(ITERATOR_IDLE_SECONDS + 1);
    const expired = await send(
      session,
      `<CustomerQueryRq iterator="Continue" iteratorID="${id}"><MaxReturned>2</MaxReturned></CustomerQueryRq>`,
    );
    assert.equal(statusOf(expired.rs[0]).code, "3391");
    const again = await send(session, start);
    const second = attr(again.rs[0] ?? again.msgs, "iteratorID") ?? "";
    const stopped = await send(
      session,
      `<CustomerQueryRq iterator="Stop" iteratorID="${second}"></CustomerQueryRq>`,
    );
    assert.equal(statusOf(stopped.rs[0]).code, "0");
    const after = await send(
      session,
      `<CustomerQueryRq iterator="Continue" iteratorID="${second}"></CustomerQueryRq>`,
    );
    assert.equal(statusOf(after.rs[0]).code, "3391");
  });
});

describe("views the application derives", () => {
  it("bills to pay, payments to deposit and item quantities per site, valid against the response schema", async () => {
    const { session } = await setup();
    const toPay = await send(
      session,
      `<BillToPayQueryRq><PayeeEntityRef><FullName>Paper Supply Co</FullName></PayeeEntityRef></BillToPayQueryRq>`,
    );
    const bill = child(ret(toPay), "BillToPay");
    assert.equal(childText(bill ?? toPay.msgs, "RefNumber"), "PS-1001");
    assert.equal(childText(bill ?? toPay.msgs, "AmountDue"), "180.00");
    await send(
      session,
      `<ReceivePaymentAddRq><ReceivePaymentAdd><CustomerRef><FullName>Initech</FullName></CustomerRef><TotalAmount>42.00</TotalAmount><IsAutoApply>false</IsAutoApply></ReceivePaymentAdd></ReceivePaymentAddRq>`,
    );
    const toDeposit = await send(
      session,
      `<ReceivePaymentToDepositQueryRq></ReceivePaymentToDepositQueryRq>`,
    );
    assert.equal(childText(ret(toDeposit), "Amount"), "42.00");
    await send(
      session,
      `<ItemInventoryAddRq><ItemInventoryAdd><Name>Bolt</Name><QuantityOnHand>7</QuantityOnHand></ItemInventoryAdd></ItemInventoryAddRq>`,
    );
    const sites = await send(session, `<ItemSitesQueryRq></ItemSitesQueryRq>`);
    assert.equal(childText(ret(sites), "QuantityOnHand"), "7");
    for (const rs of [toPay.rs[0], toDeposit.rs[0], sites.rs[0]]) {
      assert.ok(rs !== undefined);
      assert.equal(messageProblem(ledgerSchema(), rs), null);
    }
  });

  it("assemblies: can-build from the components on hand; a build uses its components", async () => {
    const { session } = await setup();
    await send(
      session,
      `<ItemInventoryAddRq><ItemInventoryAdd><Name>Bolt</Name><QuantityOnHand>7</QuantityOnHand></ItemInventoryAdd></ItemInventoryAddRq><ItemInventoryAddRq><ItemInventoryAdd><Name>Nut</Name><QuantityOnHand>20</QuantityOnHand></ItemInventoryAdd></ItemInventoryAddRq><ItemInventoryAssemblyAddRq><ItemInventoryAssemblyAdd><Name>Kit</Name><ItemInventoryAssemblyLine><ItemInventoryRef><FullName>Bolt</FullName></ItemInventoryRef><Quantity>2</Quantity></ItemInventoryAssemblyLine><ItemInventoryAssemblyLine><ItemInventoryRef><FullName>Nut</FullName></ItemInventoryRef><Quantity>4</Quantity></ItemInventoryAssemblyLine></ItemInventoryAssemblyAdd></ItemInventoryAssemblyAddRq>`,
    );
    const canBuild = async (): Promise<XmlElement> => {
      const answer = await send(
        session,
        `<ItemAssembliesCanBuildQueryRq><ItemInventoryAssemblyRef><FullName>Kit</FullName></ItemInventoryAssemblyRef><TxnDate>2026-01-15</TxnDate></ItemAssembliesCanBuildQueryRq>`,
      );
      assert.equal(messageProblem(ledgerSchema(), answer.rs[0] ?? answer.msgs), null);
      return ret(answer);
    };
    // Bolts allow 3 (7 / 2), nuts 5 (20 / 4): the scarcer component decides.
    assert.equal(childText(await canBuild(), "QuantityCanBuild"), "3");
    const built = ret(
      await send(
        session,
        `<BuildAssemblyAddRq><BuildAssemblyAdd><ItemInventoryAssemblyRef><FullName>Kit</FullName></ItemInventoryAssemblyRef><QuantityToBuild>2</QuantityToBuild></BuildAssemblyAdd></BuildAssemblyAddRq>`,
      ),
    );
    assert.equal(childText(built, "QuantityOnHand"), "2");
    assert.equal(childText(built, "QuantityCanBuild"), "1");
    assert.equal(childText(await canBuild(), "QuantityCanBuild"), "1", "4 bolts used, 3 left");
    const bolt = await queryOne(
      session,
      `<ItemInventoryQueryRq><FullName>Bolt</FullName></ItemInventoryQueryRq>`,
    );
    assert.equal(childText(bolt, "QuantityOnHand"), "3");
    const unknown = await send(
      session,
      `<ItemAssembliesCanBuildQueryRq><ItemInventoryAssemblyRef><ListID>80FFFFFF-1</ListID></ItemInventoryAssemblyRef><TxnDate>2026-01-15</TxnDate></ItemAssembliesCanBuildQueryRq>`,
    );
    assert.equal(statusOf(unknown.rs[0]).code, "3120");
  });

  it("the deleted list honours DeletedDateRangeFilter", async () => {
    const { session, clock } = await setup();
    const bill = await queryOne(session, `<BillQueryRq><RefNumber>PS-1001</RefNumber></BillQueryRq>`);
    clock.advance(86400);
    await send(
      session,
      `<TxnDelRq><TxnDelType>Bill</TxnDelType><TxnID>${childText(bill, "TxnID") ?? ""}</TxnID></TxnDelRq>`,
    );
    const query = (from: string): string =>
      `<TxnDeletedQueryRq><TxnDelType>Bill</TxnDelType><DeletedDateRangeFilter><FromDeletedDate>${from}</FromDeletedDate></DeletedDateRangeFilter></TxnDeletedQueryRq>`;
    assert.equal(statusOf((await send(session, query("2026-01-16"))).rs[0]).code, "0");
    assert.equal(statusOf((await send(session, query("2026-01-17"))).rs[0]).code, "1");
    const until = `<TxnDeletedQueryRq><TxnDelType>Bill</TxnDelType><DeletedDateRangeFilter><ToDeletedDate>2026-01-15</ToDeletedDate></DeletedDateRangeFilter></TxnDeletedQueryRq>`;
    assert.equal(statusOf((await send(session, until)).rs[0]).code, "1");
  });
});
