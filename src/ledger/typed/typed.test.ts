import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ServiceError } from "../../errors/service-error.ts";
import { parseFields } from "../fields.ts";
import { resourceByPath, type ResourceDefinition } from "../resources/definitions.ts";
import { ledgerSchema } from "../xml/schema.ts";
import { leaf, node } from "../xml/tree.ts";
import { messageProblem } from "../xml/validate-tree.ts";
import { createMessage, responseMessage, updateMessage } from "./actions.ts";
import { listFilters, parseParam, type ParamValue } from "./filters.ts";
import { contentIssue, inputSchema } from "./input.ts";
import { readRecord, type ReadWarning } from "./reader.ts";
import { gateMessages } from "../connection-gate.ts";
import { reportOperations, typedOperations } from "../operations.ts";

function resource(path: string): ResourceDefinition {
  const found = resourceByPath(path);
  assert.ok(found, `resource ${path}`);
  return found;
}

function createBody(path: string, body: unknown): Record<string, unknown> {
  const shape = resource(path).create;
  assert.ok(shape);
  return parseFields(inputSchema(shape), body);
}

function rejects(path: string, body: unknown, code: string, param: string | null): ServiceError {
  try {
    createBody(path, body);
  } catch (error) {
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.code, code, error.message);
    assert.equal(error.param, param, error.message);
    return error;
  }
  assert.fail(`expected ${code} for ${JSON.stringify(body)}`);
}

const line = (extra: Record<string, unknown> = {}) => ({ itemId: "80000001-1", amount: "10.00", ...extra });

describe("typed input (spec: Conventions; issue 7 item 2)", () => {
  test("a required field that is missing is named", () => {
    rejects("invoices", { lines: [line()] }, "INVALID_PARAMETER", "customerId");
  });

  test("an unknown field is UNKNOWN_PARAMETER with its JSON path, also inside lines", () => {
    rejects("invoices", { customerId: "1", bogus: 1 }, "UNKNOWN_PARAMETER", "bogus");
    rejects(
      "invoices",
      { customerId: "1", lines: [line(), line({ nope: true })] },
      "UNKNOWN_PARAMETER",
      "lines[1].nope",
    );
  });

  test("null is FIELD_NOT_CLEARABLE on create and clears optional text on update", () => {
    rejects("invoices", { customerId: "1", memo: null }, "FIELD_NOT_CLEARABLE", "memo");
    const update = resource("invoices").update;
    assert.ok(update);
    const body = parseFields(inputSchema(update, { omit: new Set(["id"]) }), {
      revisionNumber: "1",
      memo: null,
    });
    const message = updateMessage(resource("invoices"), "7-1", body);
    const memo = message.children[0]?.children.find((c) => c.name === "Memo");
    assert.deepEqual(memo && { text: memo.text, children: memo.children.length }, { text: "", children: 0 });
    assert.equal(messageProblem(ledgerSchema(), message), null);
  });

  test("amounts allow 2 places and prices 5; more are rejected, never rounded", () => {
    rejects(
      "invoices",
      { customerId: "1", lines: [line(), line({ amount: "1.234" })] },
      "DECIMAL_PRECISION_EXCEEDED",
      "lines[1].amount",
    );
    rejects(
      "invoices",
      { customerId: "1", lines: [line({ rate: "1.123456" })] },
      "DECIMAL_PRECISION_EXCEEDED",
      "lines[0].rate",
    );
    const body = createBody("invoices", {
      customerId: "1",
      lines: [line({ rate: "1.12345", amount: undefined })],
    });
    const xml = createMessage(resource("invoices"), body);
    const rate = xml.children[0]?.children
      .find((c) => c.name === "InvoiceLineAdd")
      ?.children.find((c) => c.name === "Rate");
    assert.equal(rate?.text, "1.12345");
  });

  test("text is composed first, then checked against the code page and its maximum length", () => {
    const body = createBody("customers", { name: "Cafe\u0301" });
    assert.equal(body.name, "Café");
    const error = rejects("customers", { name: "Snow \u2603 \u{1F600}" }, "UNSUPPORTED_CHARACTER", "name");
    assert.equal((error.details as { codePoint: number }).codePoint, 0x2603);
    rejects("invoices", { customerId: "1", refNumber: "123456789012" }, "STRING_TOO_LONG", "refNumber");
  });

  test("alternatives of one schema choice exclude each other, and a required choice needs one", () => {
    const base = { accountId: "1" };
    rejects(
      "inventory-adjustments",
      {
        ...base,
        lines: [
          {
            itemId: "1",
            adjustQuantity: { quantityDifference: 1 },
            adjustValue: { quantityDifference: 1 },
          },
        ],
      },
      "INVALID_PARAMETER",
      "lines[0].adjustValue",
    );
    rejects(
      "inventory-adjustments",
      { ...base, lines: [{ itemId: "1", adjustQuantity: { newQuantity: 1, quantityDifference: 2 } }] },
      "INVALID_PARAMETER",
      "lines[0].adjustQuantity.quantityDifference",
    );
    rejects(
      "inventory-adjustments",
      { ...base, lines: [{ itemId: "1" }] },
      "INVALID_PARAMETER",
      "lines[0].adjustQuantity",
    );
  });

  test("a repeated choice that must occur needs one item: journal entries without lines are refused", () => {
    rejects("journal-entries", {}, "INVALID_PARAMETER", "debitLines");
    rejects("journal-entries", { debitLines: [], creditLines: [] }, "INVALID_PARAMETER", "debitLines");
    const line = { accountId: "80000001-1", amount: "1.00" };
    assert.ok(createBody("journal-entries", { creditLines: [line] }));
  });

  test("an element an alternative requires is required once the alternative is taken (issue 25)", () => {
    // A deposit line is a payment `(PaymentTxnID, …)` or a deposit `(EntityRef?, AccountRef, …, Amount?)`:
    // an amount alone takes the second, which needs its account.
    const error = rejects(
      "deposits",
      { depositToAccountId: "80000001-1", lines: [{ amount: "10.00" }] },
      "INVALID_PARAMETER",
      "lines[0].accountId",
    );
    assert.match(error.message, /`accountId` is required when `amount` is sent/);
    const accepted = createBody("deposits", {
      depositToAccountId: "80000001-1",
      lines: [{ accountId: "80000002-1", amount: "10.00" }],
    });
    const deposits = resource("deposits");
    assert.equal(messageProblem(ledgerSchema(), createMessage(deposits, accepted)), null);
    // A price level's per-item adjustment is a pair: a percentage needs what it is relative to.
    rejects(
      "price-levels",
      { name: "Trade", perItemPriceLevels: [{ itemId: "80000001-1", adjustPercentage: "5" }] },
      "INVALID_PARAMETER",
      "perItemPriceLevels[0].adjustRelativeTo",
    );
  });

  test("the last word is the schema's content model: what the field rules miss is refused naming a field", () => {
    // Checked on its own (the alternative rule above refuses these bodies first).
    const line = resource("deposits").create?.fields.find((f) => f.json === "lines")?.shape;
    assert.ok(line);
    assert.deepEqual(contentIssue(line, undefined, { amount: "10.00" }), {
      message: "One of `paymentTransactionId`, `entityId`, `accountId` is required here.",
      path: ["accountId"],
    });
    assert.equal(contentIssue(line, undefined, { accountId: "80000001-1", amount: "10.00" }), null);
    assert.equal(contentIssue(line, undefined, { paymentTransactionId: "1F-1" }), null);
    // Forms known to fit are remembered (input.ts); a form that does not fit is refused every time.
    assert.equal(contentIssue(line, undefined, { accountId: "80000001-2", amount: "11.00" }), null);
    assert.deepEqual(contentIssue(line, undefined, { amount: "12.00" })?.path, ["accountId"]);
    // A field the path supplies (an update's record ID) counts as present and is never the one named.
    const update = resource("deposits").update;
    assert.ok(update);
    assert.equal(contentIssue(update, new Set(["id"]), { revisionNumber: "1" }), null);
    const mod = update.fields.find((f) => f.json === "lines")?.shape;
    assert.ok(mod);
    assert.deepEqual(contentIssue(mod, undefined, { id: "5-1", overrideMemo: "x" })?.path, ["overrideMemo"]);
  });

  test("a custom field's owner in a line is `0` or a GUID in braces, checked before anything is written (issue 25)", () => {
    const withOwner = (ownerId: string) => ({
      customerId: "80000001-1",
      lines: [line({ customFields: [{ ownerId, name: "Colour", value: "Blue" }] })],
    });
    rejects("invoices", withOwner("Björk"), "INVALID_PARAMETER", "lines[0].customFields[0].ownerId");
    rejects("invoices", withOwner("{not-a-guid}"), "INVALID_PARAMETER", "lines[0].customFields[0].ownerId");
    for (const ownerId of ["0", "{6B063959-81B0-4B4C-9F5F-0C0B8C9C5E21}"]) {
      const body = createBody("invoices", withOwner(ownerId));
      assert.equal(messageProblem(ledgerSchema(), createMessage(resource("invoices"), body)), null, ownerId);
    }
  });

  test("every create body the input schema accepts, even with every line array empty, is a valid message", async () => {
    const { allResources } = await import("../resources/definitions.ts");
    const { exampleBody } = await import("../resources/examples.ts");
    let checked = 0;
    for (const definition of allResources()) {
      const shape = definition.create;
      if (!shape) continue;
      const base = exampleBody(shape);
      const emptied = { ...base };
      for (const field of shape.fields) if (field.array) emptied[field.json] = [];
      for (const body of [{}, emptied]) {
        let parsed: Record<string, unknown>;
        try {
          parsed = parseFields(inputSchema(shape), body);
        } catch (error) {
          assert.ok(error instanceof ServiceError, `${definition.entry.resource}: ${String(error)}`);
          continue;
        }
        const problem = messageProblem(ledgerSchema(), createMessage(definition, parsed));
        assert.equal(problem, null, `${definition.entry.resource} accepted ${JSON.stringify(body)}`);
        checked++;
      }
    }
    assert.ok(checked > 0);
  });

  test("the writer puts elements in schema order whatever the body's key order, and the schema accepts it", () => {
    const body = createBody("invoices", {
      memo: "m",
      lines: [line({ description: "d", quantity: 2 })],
      refNumber: "A-1",
      transactionDate: "2024-02-29",
      customerId: "80000001-1",
    });
    const message = createMessage(resource("invoices"), body);
    const names = message.children[0]?.children.map((c) => c.name);
    assert.deepEqual(names, ["CustomerRef", "TxnDate", "RefNumber", "Memo", "InvoiceLineAdd"]);
    assert.equal(messageProblem(ledgerSchema(), message), null);
  });

  test("an element the connection cannot take is named by the body's JSON path", () => {
    const bills = resource("bills");
    assert.ok(bills.create);
    const on = (xmlVersion: string, country = "US") => ({ xml_version: xmlVersion, country });
    const gate = (body: Record<string, unknown>, xmlVersion: string) =>
      gateMessages([createMessage(bills, body)], on(xmlVersion), bills.create ?? undefined);
    assert.deepEqual(gate({ vendorId: "1", classId: "2" }, "15.0"), {
      code: "LEDGER_FIELD_UNSUPPORTED_BY_VERSION",
      path: "classId",
      isField: true,
      elementPath: "BillAddRq/BillAdd/ClassRef",
      minimumXmlVersion: "16.0",
      xmlVersion: "15.0",
    });
    assert.equal(gate({ vendorId: "1", classId: "2" }, "16.0"), null);
    assert.equal(gate({ vendorId: "1", memo: "x" }, "13.0"), null);
    assert.equal(
      gate({ vendorId: "1", expenseLines: [{ accountId: "1" }, { accountId: "1", vendorId: "9" }] }, "13.0")
        ?.path,
      "expenseLines[1].vendorId",
    );
    const vendors = resource("vendors");
    const uk = gateMessages(
      [createMessage(vendors, { name: "Abroad Ltd", isEligibleFor1099: true })],
      on("16.0", "UK"),
      vendors.create ?? undefined,
    );
    assert.equal(uk?.code, "LEDGER_REGION_UNSUPPORTED");
    assert.equal(uk?.path, "isEligibleFor1099");
    assert.equal(uk?.elementPath, "VendorAddRq/VendorAdd/IsVendorEligibleFor1099");
  });
});

describe("typed output (spec: Response fields are all present)", () => {
  test("absent values are null, absent arrays empty, unreadable values null with a warning and its path", () => {
    const invoices = resource("invoices");
    const element = node("InvoiceRet", [
      leaf("TxnID", "7-1"),
      node("CustomerRef", [leaf("ListID", "8-1"), leaf("FullName", "Acme")]),
      leaf("Subtotal", "ten"),
      node("InvoiceLineRet", [leaf("TxnLineID", "9-1"), leaf("Amount", "10")]),
    ]);
    const warnings: ReadWarning[] = [];
    const record = readRecord(invoices.output, element, "data[3]", warnings, "ledger_invoice");
    assert.equal(record.id, "7-1");
    assert.equal(record.objectType, "ledger_invoice");
    assert.deepEqual(record.customer, { id: "8-1", fullName: "Acme" });
    assert.equal(record.memo, null);
    assert.deepEqual(record.linkedTransactions, []);
    assert.equal(record.subtotal, null);
    assert.equal((record.lines as { amount: string }[])[0]?.amount, "10.00");
    assert.deepEqual(
      warnings.map((w) => [w.code, w.path]),
      [["LEDGER_VALUE_UNREADABLE", "data[3].subtotal"]],
    );
  });

  test("secrets are masked where a record is read: card numbers and SSNs keep their last four, nested or not (decision 0032)", () => {
    const customer = readRecord(
      resource("customers").output,
      node("CustomerRet", [
        leaf("ListID", "8-1"),
        leaf("Name", "Card Holder"),
        node("CreditCardInfo", [leaf("CreditCardNumber", "4111111111111111"), leaf("ExpirationMonth", "12")]),
      ]),
      "",
      [],
    );
    assert.deepEqual(customer.creditCard, {
      number: "••••••••••••1111",
      expirationMonth: 12,
      expirationYear: null,
      name: null,
      address: null,
      postalCode: null,
    });
    const payment = readRecord(
      resource("receive-payments").output,
      node("ReceivePaymentRet", [
        leaf("TxnID", "9-1"),
        node("CreditCardTxnInfo", [
          node("CreditCardTxnInputInfo", [leaf("CreditCardNumber", "5500005555555559")]),
          node("CreditCardTxnResultInfo", [leaf("MerchantAccountNumber", "M-12345678")]),
        ]),
      ]),
      "",
      [],
    ) as {
      creditCardTransaction: { request: { number: string }; response: { merchantAccountNumber: string } };
    };
    assert.equal(payment.creditCardTransaction.request.number, "••••••••••••5559");
    assert.equal(payment.creditCardTransaction.response.merchantAccountNumber, "M-12345678");
    const employee = readRecord(
      resource("employees").output,
      node("EmployeeRet", [leaf("ListID", "8-2"), leaf("SSN", "123-45-6789")]),
      "",
      [],
    );
    assert.equal(employee.ssn, "•••••••6789");
    // The input side takes the full number: the application must get it.
    assert.deepEqual(createBody("customers", { name: "A", creditCard: { number: "4111111111111111" } }), {
      name: "A",
      creditCard: { number: "4111111111111111" },
    });
  });

  test("the application's error status becomes its catalogue code with the native code kept", async () => {
    const { statusError } = await import("./actions.ts");
    const message = responseMessage(
      node(
        "CustomerModRs",
        [],
        [
          ["statusCode", "3200"],
          ["statusSeverity", "Error"],
          ["statusMessage", "The provided edit sequence is out-of-date."],
        ],
      ),
    );
    const error = statusError(message);
    assert.equal(error.code, "LEDGER_REVISION_NUMBER_STALE");
    assert.equal(error.integrationCode, "3200");
  });

  test("a refused secret quoted back in a status message is masked in the error (decision 0032)", async () => {
    const { statusError } = await import("./actions.ts");
    const refused = responseMessage(
      node(
        "CustomerAddRs",
        [],
        [
          ["statusCode", "3210"],
          ["statusSeverity", "Error"],
          ["statusMessage", 'The "CreditCardNumber" field has an invalid value "4111111111111111".'],
        ],
      ),
    );
    assert.equal(
      statusError(refused).message,
      'The application answered: The "CreditCardNumber" field has an invalid value "••••••••".',
    );
  });
});

function build(path: string, query: Record<string, string | string[]>) {
  const filters = listFilters(resource(path));
  const values = new Map<string, ParamValue>();
  for (const [name, raw] of Object.entries(query)) {
    const param = filters.params.find((p) => p.name === name);
    assert.ok(param, `${path} has filter ${name}`);
    values.set(name, parseParam(param, raw));
  }
  return filters.build(values);
}

function buildRejects(path: string, query: Record<string, string | string[]>, param: string): void {
  assert.throws(
    () => build(path, query),
    (error: unknown) =>
      error instanceof ServiceError && error.code === "INVALID_PARAMETER" && error.param === param,
  );
}

describe("list filters (spec: List parameters)", () => {
  test("groups get the market's filter names", () => {
    const names = (path: string) => listFilters(resource(path)).params.map((p) => p.name);
    for (const name of [
      "ids",
      "refNumbers",
      "updatedAfter",
      "transactionDateFrom",
      "customerIds",
      "accountIds",
      "refNumberContains",
      "refNumberFrom",
      "currencyIds",
      "paymentStatus",
      "includeLineItems",
      "includeLinkedTransactions",
    ]) {
      assert.ok(names("invoices").includes(name), `invoices: ${name}`);
    }
    for (const name of [
      "ids",
      "fullNames",
      "status",
      "nameContains",
      "nameFrom",
      "totalBalanceGreaterThan",
      "classIds",
    ]) {
      assert.ok(names("customers").includes(name), `customers: ${name}`);
    }
    assert.ok(names("vendors").includes("names") || names("vendors").includes("fullNames"));
    assert.ok(names("checks").includes("payeeIds"));
    assert.ok(names("bills").includes("vendorIds"));
  });

  test("an ID list excludes every other filter, naming both", () => {
    buildRejects("invoices", { ids: ["1"], customerIds: ["2"] }, "customerIds");
    buildRejects("customers", { fullNames: ["a"], status: "all" }, "status");
  });

  test("filters in different alternatives of the query cannot be combined", () => {
    buildRejects(
      "invoices",
      { updatedAfter: "2024-01-01", transactionDateFrom: "2024-01-01" },
      "transactionDateFrom",
    );
    buildRejects("customers", { nameContains: "a", nameFrom: "b" }, "nameFrom");
    buildRejects("customers", { nameContains: "a", nameStartsWith: "b" }, "nameStartsWith");
  });

  test("active status defaults to active but is left out next to an ID list", () => {
    assert.deepEqual(
      build("customers", {}).map((e) => [e.name, e.text]),
      [["ActiveStatus", "ActiveOnly"]],
    );
    assert.deepEqual(
      build("customers", { ids: ["1", "2"] }).map((e) => [e.name, e.text]),
      [
        ["ListID", "1"],
        ["ListID", "2"],
      ],
    );
  });

  test("repeated keys are arrays of 1 to 100 and scalars are given once", () => {
    const ids = listFilters(resource("customers")).params.find((p) => p.name === "ids");
    assert.ok(ids);
    assert.throws(
      () =>
        parseParam(
          ids,
          Array.from({ length: 101 }, (_, i) => String(i)),
        ),
      /1 to 100/,
    );
    const after = listFilters(resource("customers")).params.find((p) => p.name === "updatedAfter");
    assert.ok(after);
    assert.throws(() => parseParam(after, ["2024-01-01", "2024-01-02"]), /only once/);
    assert.throws(() => parseParam(after, "yesterday"), /date/);
  });
});

describe("documentation examples (OpenAPI, sent by the contract suites)", () => {
  test("every typed operation's example body passes its own validation", async () => {
    const { validateTypedInput } = await import("../../requests/typed-call.ts");
    let checked = 0;
    for (const operation of [...typedOperations(), ...reportOperations()]) {
      const rule = operation.inputs().body;
      if (rule.type !== "json") continue;
      for (const [name, example] of Object.entries(rule.examples())) {
        assert.doesNotThrow(
          () =>
            validateTypedInput(operation, {
              body: example,
              pathParams: operation.http.path.includes(":id") ? { id: "80000001-1700000000" } : {},
              query: operation.inputs().query.some((p) => p.name === "confirm") ? { confirm: "true" } : {},
            }),
          `${operation.operationId} example ${name}`,
        );
        checked++;
      }
    }
    assert.ok(checked > 100, `checked ${checked} examples`);
  });
});

describe("registry invariants", () => {
  test("a group pages only when its query can iterate, and every other cursor group is named", async () => {
    const { allResources } = await import("../resources/definitions.ts");
    const unpaged = allResources()
      .filter((r) => r.entry.listKind === "cursor" && !r.pages)
      .map((r) => r.entry.resource);
    assert.deepEqual(unpaged, ["payrollWageItems"]);
  });

  test("JSON names are unique within every shape", async () => {
    const { allResources } = await import("../resources/definitions.ts");
    const seen = new Set<unknown>();
    const check = (
      shape: { typeKey: string; fields: readonly { json: string; shape: unknown }[] } | null,
    ): void => {
      if (!shape || seen.has(shape)) return;
      seen.add(shape);
      const names = shape.fields.map((f) => f.json);
      assert.equal(new Set(names).size, names.length, `${shape.typeKey}: ${names.join(",")}`);
      for (const field of shape.fields) check(field.shape as typeof shape);
    };
    for (const resource of allResources()) {
      for (const record of resource.records.values()) check(record.shape);
      check(resource.create);
      check(resource.update);
    }
  });
});
