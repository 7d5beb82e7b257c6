import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { resourceByPath } from "../../src/ledger/resources/definitions.ts";
import { watchApplication } from "../../src/testing/application-watch.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { TypedFactory } from "../../src/testing/typed-factory.ts";
import {
  bringOnline,
  callAsEndUser,
  countRequests,
  E2E_CONFIG,
  eventually,
  settledRequest,
  type JsonAnswer,
} from "./helpers.ts";
import { checkEveryAnswer } from "./openapi-contract.ts";

/**
 * Batch members that refer to earlier members (issue 27 item 3, decision 0050), through HTTP, the
 * SOAP protocol and the simulated application: a customer, its job and an invoice for the job in
 * one call and ONE message set (the references sent by full name), linked in the company file; and
 * every refused reference a 400 naming it, with nothing queued.
 */
let sys: System;
let eu: ConnectedEndUser;
let itemId: string;
type Json = Record<string, unknown>;

/** Called once after the application ran a document holding an invoice add (a test arms it). */
let armAfterInvoice: (() => void) | null = null;

/** Every request document the simulated application processed, in order. */
const documents: string[] = [];

before(async () => {
  sys = await startSystem(null, { ...E2E_CONFIG });
  checkEveryAnswer(sys);
  watchApplication(sys, (xml) => {
    documents.push(xml);
    if (armAfterInvoice && xml.includes("<InvoiceAddRq")) {
      armAfterInvoice();
      armAfterInvoice = null;
    }
  });
  eu = await sys.connectEndUser({ companyName: "Batch Refs Co" });
  await bringOnline(sys, eu);
  const factory = new TypedFactory((method, path, body) => callAsEndUser(sys, eu, method, path, body));
  itemId = String((await factory.create(resourceByPath("service-items") ?? assert.fail())).id);
});
after(() => sys.close());

const batch = (body: unknown): Promise<JsonAnswer> =>
  callAsEndUser(sys, eu, "POST", "/v1/ledger-desktop/batch", body);
const file = () => sys.ledger.companyFile(eu.companyFilePath);
const field = (fields: readonly { name: string; text: string }[], name: string) =>
  fields.find((f) => f.name === name)?.text;
const refId = (
  fields: readonly { name: string; children: readonly { name: string; text: string }[] }[],
  name: string,
) => fields.find((f) => f.name === name)?.children.find((c) => c.name === "ListID")?.text;

const count = () => ({
  customers: file().count("Customer"),
  invoices: file().count("Invoice"),
  payments: file().count("ReceivePayment"),
});

/**
 * A customer → invoice → payment batch that ended applied once: every member succeeded, one of each
 * record more than `before`, and each of its two message sets sent once since `seen` documents.
 */
function assertAppliedOnce(settled: { result: Json }, before: ReturnType<typeof count>, seen: number): void {
  assert.deepEqual(
    (settled.result as { results: Json[] }).results.map((r) => r.status),
    ["succeeded", "succeeded", "succeeded"],
  );
  assert.deepEqual(count(), {
    customers: before.customers + 1,
    invoices: before.invoices + 1,
    payments: before.payments + 1,
  });
  const sent = documents.slice(seen);
  assert.equal(sent.filter((xml) => xml.includes("<InvoiceAddRq")).length, 1, "set 1 sent once");
  assert.equal(sent.filter((xml) => xml.includes("<ReceivePaymentAddRq")).length, 1, "set 2 sent once");
}

/** The payment member: applied to member 1's invoice, known only from its answer. */
const paymentFor = (extra: Json = {}): Json => ({
  operationId: "ledger.receivePayments.create",
  body: {
    customerId: { $ref: "requests[0].data.id" },
    totalAmount: "100.00",
    applyToTransactions: [{ transactionId: { $ref: "requests[1].data.id" }, paymentAmount: "100.00" }],
    ...extra,
  },
});
const customerAndInvoice = (name: string): Json[] => [
  { operationId: "ledger.customers.create", body: { name } },
  {
    operationId: "ledger.invoices.create",
    body: { customerId: { $ref: "requests[0].data.id" }, lines: [{ itemId, quantity: 1, rate: "100.00" }] },
  },
];

describe("dependent batches of several message sets", () => {
  test("customer → invoice → payment applied to that invoice: one call, two message sets", async () => {
    const seen = documents.length;
    const before = count();
    const answer = await batch({ requests: [...customerAndInvoice("Refs Payer"), paymentFor()] });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const results = answer.body.results as Json[];
    assert.deepEqual(
      results.map((r) => r.status),
      ["succeeded", "succeeded", "succeeded"],
    );
    const [, invoice, payment] = results.map((r) => r.data as Json);
    assert.ok(invoice && payment);
    const applied = (payment.appliedToTransactions ?? payment.applyToTransactions) as Json[] | undefined;
    assert.equal(
      JSON.stringify(applied ?? payment).includes(String(invoice.id)),
      true,
      JSON.stringify(payment),
    );
    const sent = documents.slice(seen);
    assert.equal(sent.length, 2, "two message sets");
    assert.equal(sent[0]?.match(/<(CustomerAddRq|InvoiceAddRq)\b/g)?.length, 2);
    assert.match(sent[1] ?? "", new RegExp(`<TxnID>${String(invoice.id)}</TxnID>`));
    assert.deepEqual(count(), {
      customers: before.customers + 1,
      invoices: before.invoices + 1,
      payments: before.payments + 1,
    });
    const paymentRecord = file().recordById(String(payment.id));
    assert.ok(paymentRecord);
  });

  test("rollback: a failure at step 3 deletes the invoice and the customer; the company file ends as before", async () => {
    const before = count();
    const answer = await batch({
      onError: "rollback",
      requests: [
        ...customerAndInvoice("Refs Rolled Back"),
        paymentFor({ paymentMethodId: "80000999-1999999999" }),
      ],
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const results = answer.body.results as Json[];
    assert.deepEqual(
      results.map((r) => r.status),
      ["rolled_back", "rolled_back", "failed"],
      JSON.stringify(results),
    );
    assert.deepEqual(count(), before, "counted: as before");
  });
  test("set 2 never reaches the application (the connector crashes before it): recovery finds nothing stored, set 2 is sent again once, set 1 is never repeated", async () => {
    const before = count();
    const seen = documents.length;
    // Armed once set 1 ran: the next write document (set 2) is dropped before the application sees it.
    armAfterInvoice = () => eu.connector.setFault({ kind: "crash_before_write" });
    const answer = await callAsEndUser(
      sys,
      eu,
      "POST",
      "/v1/ledger-desktop/batch",
      { requests: [...customerAndInvoice("Refs Set Two Lost"), paymentFor()] },
      { "idempotency-key": "refs-set-two-lost", "svc-timeout-seconds": "300", prefer: "respond-async" },
    );
    assert.equal(answer.status, 202, JSON.stringify(answer.body));
    const settled = await settledRequest(sys, eu, answer.requestId);
    assert.equal(settled.status, "succeeded", JSON.stringify(settled));
    assert.match(
      JSON.stringify(settled),
      /holds no result of message set 2, which never ran: it is sent again/,
    );
    assertAppliedOnce(settled, before, seen);
  });
});

describe("a lost answer between two sets of a dependent batch", () => {
  test("set 1's answer is lost: recovered from the application's stored answer before set 2 is sent; nothing applied twice", async () => {
    const before = count();
    const seen = documents.length;
    eu.connector.setFault({ kind: "lose_answer_after_write" });
    const pending = callAsEndUser(
      sys,
      eu,
      "POST",
      "/v1/ledger-desktop/batch",
      { requests: [...customerAndInvoice("Refs Lost Between"), paymentFor()] },
      { "idempotency-key": "refs-lost-between", "svc-timeout-seconds": "300" },
    );
    await eventually(
      "the application applied set 1",
      async () => file().count("Invoice") === before.invoices + 1,
    );
    assert.equal(file().count("ReceivePayment"), before.payments, "set 2 waits for set 1's answer");
    void eu.connector.checkInNow();
    const answer = await pending;
    assert.equal(answer.status, 502, JSON.stringify(answer.body));
    assert.equal((answer.body.error as Json).code, "LEDGER_WRITE_OUTCOME_UNKNOWN");
    const settled = await settledRequest(sys, eu, answer.requestId);
    assert.equal(settled.status, "succeeded", JSON.stringify(settled));
    assert.match(
      JSON.stringify(settled),
      /Message set 1 recovered from the application's stored answer/,
      "set 1 was resolved by the recovery query",
    );
    assertAppliedOnce(settled, before, seen);
    const replay = await callAsEndUser(
      sys,
      eu,
      "POST",
      "/v1/ledger-desktop/batch",
      { requests: [...customerAndInvoice("Refs Lost Between"), paymentFor()] },
      { "idempotency-key": "refs-lost-between" },
    );
    assert.equal(replay.status, 200, JSON.stringify(replay.body));
    assert.equal(file().count("ReceivePayment"), before.payments + 1, "the replay sent nothing");
  });
});

describe("batch members referring to earlier members", () => {
  test("customer → job (parent by $ref) → invoice for the job (customer by JSON Pointer): one call, one message set, linked", async () => {
    const seen = documents.length;
    const requestsBefore = await countRequests(sys);
    const answer = await batch({
      requests: [
        { operationId: "ledger.customers.create", body: { name: "Refs Roofing" } },
        {
          operationId: "ledger.customers.create",
          body: { name: "Barn roof", parentId: { $ref: "requests[0].data.id" }, jobDescription: "Barn" },
        },
        {
          operationId: "ledger.invoices.create",
          body: {
            customerId: { $ref: "/requests/1/data/id" },
            lines: [{ itemId, quantity: 2, rate: "150.00" }],
          },
        },
      ],
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const results = answer.body.results as Json[];
    assert.deepEqual(
      results.map((r) => r.status),
      ["succeeded", "succeeded", "succeeded"],
    );
    const [customer, job, invoice] = results.map((r) => r.data as Json);
    assert.ok(customer && job && invoice);
    assert.equal(job.fullName, "Refs Roofing:Barn roof");
    assert.equal((job.parent as Json).id, customer.id);
    assert.equal((invoice.customer as Json).id, job.id);
    assert.equal((invoice.customer as Json).fullName, "Refs Roofing:Barn roof");

    // One Request, one message set carrying the three messages, the references by full name.
    assert.equal(await countRequests(sys), requestsBefore + 1);
    const sent = documents.slice(seen);
    assert.equal(sent.length, 1, "one round trip");
    const xml = sent[0] ?? "";
    assert.equal(xml.match(/<QBXMLMsgsRq\b/g)?.length, 1);
    assert.equal(xml.match(/<(CustomerAddRq|InvoiceAddRq)\b/g)?.length, 3);
    assert.match(xml, /<ParentRef>\s*<FullName>Refs Roofing<\/FullName>\s*<\/ParentRef>/);
    assert.match(xml, /<CustomerRef>\s*<FullName>Refs Roofing:Barn roof<\/FullName>\s*<\/CustomerRef>/);
    const messages = (await callAsEndUser(sys, eu, "GET", `/v1/requests/${answer.requestId}/messages`)).body;
    const stored = (messages.message as Json).xml as string;
    assert.equal(stored.match(/<(CustomerAddRq|InvoiceAddRq)\b/g)?.length, 3, "the Request's document");
    const input = (messages.input as Json).json as Json;
    assert.match(
      JSON.stringify(input),
      /"\$ref":"requests\[0\]\.data\.id"/,
      "the input shows the references",
    );

    // The company file has them linked by ID.
    const jobRecord = file().recordById(String(job.id));
    assert.ok(jobRecord);
    assert.equal(refId(jobRecord.fields, "ParentRef"), customer.id);
    const invoiceRecord = file().recordById(String(invoice.id));
    assert.ok(invoiceRecord);
    assert.equal(refId(invoiceRecord.fields, "CustomerRef"), job.id);
    assert.equal(field(jobRecord.fields, "Name"), "Barn roof");
  });

  test("a referenced create that fails stops the batch: the member referring to it is not processed", async () => {
    const existing = await batch({
      requests: [{ operationId: "ledger.customers.create", body: { name: "Refs Taken" } }],
    });
    assert.equal(existing.status, 200, JSON.stringify(existing.body));
    const invoicesBefore = file().count("Invoice");
    const answer = await batch({
      requests: [
        { operationId: "ledger.customers.create", body: { name: "Refs Taken" } },
        {
          operationId: "ledger.invoices.create",
          body: { customerId: { $ref: "requests[0].data.id" }, lines: [{ itemId, amount: "10.00" }] },
        },
      ],
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(
      (answer.body.results as Json[]).map((r) => r.status),
      ["failed", "not_processed"],
    );
    assert.equal(file().count("Invoice"), invoicesBefore, "never written against the older namesake");
  });

  test("every refused reference is a 400 naming it, and nothing is queued", async () => {
    const customer = { operationId: "ledger.customers.create", body: { name: "Refs Never" } };
    const invoiceFor = (customerId: unknown): Json => ({
      operationId: "ledger.invoices.create",
      body: { customerId, lines: [{ itemId, amount: "10.00" }] },
    });
    const cases: Array<[Json, string, RegExp]> = [
      // Unparseable, in either spelling.
      [
        { requests: [customer, invoiceFor({ $ref: "requests[0]data.id" })] },
        "requests[1].body.customerId",
        /no reference/,
      ],
      [
        { requests: [customer, invoiceFor({ $ref: "/requests/00/data/id" })] },
        "requests[1].body.customerId",
        /no reference/,
      ],
      [
        { requests: [customer, invoiceFor({ $ref: "#/requests/0/data/id" })] },
        "requests[1].body.customerId",
        /no reference/,
      ],
      [{ requests: [customer, invoiceFor({ $ref: 0 })] }, "requests[1].body.customerId.$ref", /string/],
      // A `$ref` object with another key.
      [
        { requests: [customer, invoiceFor({ $ref: "requests[0].data.id", fullName: "x" })] },
        "requests[1].body.customerId.fullName",
        /no other key/,
      ],
      // Itself, or a later member.
      [
        { requests: [customer, invoiceFor({ $ref: "requests[1].data.id" })] },
        "requests[1].body.customerId",
        /earlier member/,
      ],
      [
        { requests: [invoiceFor({ $ref: "requests[1].data.id" }), customer] },
        "requests[0].body.customerId",
        /earlier member/,
      ],
      // A read.
      [
        {
          requests: [
            { operationId: "ledger.customers.list", query: { limit: 1 } },
            invoiceFor({ $ref: "requests[0].data.id" }),
          ],
        },
        "requests[1].body.customerId",
        /names a read/,
      ],
      // A path the referenced answer cannot have (and one that is not a text or number).
      [
        { requests: [customer, invoiceFor({ $ref: "requests[0].data.nope" })] },
        "requests[1].body.customerId",
        /answers no/,
      ],
      [
        { requests: [customer, invoiceFor({ $ref: "requests[0].data.billingAddress" })] },
        "requests[1].body.customerId",
        /answers no/,
      ],
      [
        { requests: [customer, invoiceFor({ $ref: "requests[0].status" })] },
        "requests[1].body.customerId",
        /no reference/,
      ],
      // A field no ID or name goes in (a date, an amount, a whole line array).
      [
        {
          requests: [
            customer,
            {
              operationId: "ledger.invoices.create",
              body: { customerId: "1-1", transactionDate: { $ref: "requests[0].data.id" } },
            },
          ],
        },
        "requests[1].body.transactionDate",
        /only for a record ID or a text/,
      ],
      [
        {
          requests: [
            customer,
            {
              operationId: "ledger.invoices.create",
              body: { customerId: "1-1", lines: [{ itemId, amount: { $ref: "requests[0].data.id" } }] },
            },
          ],
        },
        "requests[1].body.lines[0].amount",
        /only for a record ID or a text/,
      ],
      [
        {
          requests: [
            customer,
            {
              operationId: "ledger.invoices.create",
              body: { customerId: "1-1", lines: { $ref: "requests[0].data.id" } },
            },
          ],
        },
        "requests[1].body.lines",
        /only for a record ID or a text/,
      ],
      // A reference field of another type (a vendor is no customer).
      [
        {
          requests: [
            { operationId: "ledger.vendors.create", body: { name: "Refs Vendor" } },
            invoiceFor({ $ref: "requests[0].data.id" }),
          ],
        },
        "requests[1].body.customerId",
        /cannot name a Vendor/,
      ],
      // In pathParams.
      [
        {
          requests: [
            customer,
            { operationId: "ledger.customers.retrieve", pathParams: { id: { $ref: "requests[0].data.id" } } },
          ],
        },
        "requests[1].pathParams.id",
        /body field only/,
      ],
      // rollback undoes creates only.
      [
        {
          onError: "rollback",
          requests: [
            customer,
            {
              operationId: "ledger.customers.update",
              pathParams: { id: "1-1" },
              body: { revisionNumber: "1" },
            },
          ],
        },
        "requests[1].operationId",
        /rollback/,
      ],
      // continueOnError would run the member after its referenced create failed.
      [
        { onError: "continueOnError", requests: [customer, invoiceFor({ $ref: "requests[0].data.id" })] },
        "onError",
        /stopOnError/,
      ],
    ];
    const before = await countRequests(sys);
    const customersBefore = file().count("Customer");
    const seen = documents.length;
    for (const [body, param, message] of cases) {
      const refused = await batch(body);
      assert.equal(refused.status, 400, `${param}: ${JSON.stringify(refused.body)}`);
      const error = refused.body.error as Json;
      assert.equal(error.code, "INVALID_PARAMETER", param);
      assert.equal(error.param, param, JSON.stringify(error));
      assert.match(String(error.message), message, param);
    }
    assert.equal(await countRequests(sys), before, "nothing queued");
    const listed = await callAsEndUser(sys, eu, "GET", "/v1/requests?limit=100");
    assert.ok(
      (listed.body.data as Json[]).every((r) => r.status !== "queued"),
      "the end user's queue holds nothing",
    );
    assert.equal(documents.length, seen, "nothing sent");
    assert.equal(file().count("Customer"), customersBefore);
  });
});
