import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { typedOperation, type TypedOperation } from "../ledger/operations.ts";
import type { CallOptions } from "./call-options.ts";
import { prepareTypedCall, validateTypedInput, type TypedCallInput } from "./typed-call.ts";
import { renderElementText } from "../ledger/xml/tree.ts";
import type { Submission } from "./submit.ts";

/** The messages a Submission carries, as text. */
const textOf = (s: Submission): string => s.document.messages.map(renderElementText).join("");

/**
 * The typed-call core without HTTP: what batch members and the change feed rely on. Store-backed
 * planning (cursors, read first) is covered end to end in test/e2e/typed-rules.test.ts.
 */
function op(id: string): TypedOperation {
  const found = typedOperation(id);
  assert.ok(found, id);
  return found;
}

function refusal(action: () => unknown): ServiceError {
  try {
    action();
  } catch (error) {
    assert.ok(error instanceof ServiceError, String(error));
    return error;
  }
  assert.fail("expected a refusal");
}

const asMember = (operation: TypedOperation, input: TypedCallInput) =>
  refusal(() => validateTypedInput(operation, input, { paramPrefix: "requests[2]", mode: "batch" }));

describe("validateTypedInput", () => {
  test("a batch member's errors name the member and the part: body, query, pathParams", () => {
    const body = asMember(op("ledger.customers.create"), { body: { name: 5 } });
    assert.equal(body.param, "requests[2].body.name");
    const query = asMember(op("ledger.invoices.list"), { query: { transactionDateFrom: "2024-02-30" } });
    assert.equal(query.param, "requests[2].query.transactionDateFrom");
    const path = asMember(op("ledger.invoices.retrieve"), { pathParams: {} });
    assert.equal(path.param, "requests[2].pathParams.id");
    const unknown = asMember(op("ledger.invoices.retrieve"), { pathParams: { id: "1-1", other: "x" } });
    assert.equal(unknown.code, "UNKNOWN_PARAMETER");
    assert.equal(unknown.param, "requests[2].pathParams.other");
  });

  test("a batch list member takes no cursor", () => {
    const error = asMember(op("ledger.invoices.list"), { query: { cursor: "abc" } });
    assert.equal(error.param, "requests[2].query.cursor");
  });

  test("query values may be JSON values (batch members) or query-string text (HTTP), checked alike", () => {
    const list = op("ledger.invoices.list");
    const fromJson = validateTypedInput(list, { query: { limit: 10, includeLineItems: false } });
    const fromText = validateTypedInput(list, { query: { limit: "10", includeLineItems: "false" } });
    assert.deepEqual([...fromJson.query], [...fromText.query]);
    assert.deepEqual(fromJson.query.get("limit"), 10);
    assert.equal(refusal(() => validateTypedInput(list, { query: { limit: true } })).param, "limit");
  });

  test("bodies: none on reads, `{}` or nothing on void and delete, a JSON object elsewhere", () => {
    assert.equal(refusal(() => validateTypedInput(op("ledger.invoices.list"), { body: {} })).param, "body");
    const voidOp = op("ledger.invoices.void");
    const id = { pathParams: { id: "1-1" } };
    assert.deepEqual(validateTypedInput(voidOp, { ...id, body: {} }).body, {});
    assert.deepEqual(validateTypedInput(voidOp, id).body, {});
    for (const body of ["x", [], true, null, 3]) {
      assert.equal(refusal(() => validateTypedInput(voidOp, { ...id, body })).param, "body");
    }
    assert.equal(
      refusal(() => validateTypedInput(voidOp, { ...id, body: { why: 1 } })).code,
      "UNKNOWN_PARAMETER",
    );
    for (const body of ["x", [], true, null]) {
      const error = refusal(() => validateTypedInput(op("ledger.customers.create"), { body }));
      assert.equal(error.param, "body");
    }
  });

  test("an action the application cannot do is refused once its input is valid", () => {
    const unsupported = op("ledger.salesTaxPaymentChecks.void");
    const valid = { pathParams: { id: "1-1" } };
    assert.equal(refusal(() => validateTypedInput(unsupported, valid)).code, "LEDGER_OPERATION_UNSUPPORTED");
    assert.equal(
      refusal(() => validateTypedInput(unsupported, { ...valid, query: { x: "1" } })).code,
      "UNKNOWN_PARAMETER",
    );
  });
});

describe("prepareTypedCall", () => {
  const call: CallOptions = {
    endUserId: "eu_00000000000000000000000000",
    endUserParam: "Svc-End-User-Id",
    async: true,
    timeoutSeconds: 90,
    queueTtlSeconds: 3600,
    idempotencyKey: null,
  };
  const principal = { projectId: "proj_x", mode: "live" as const };
  const noDeps = {} as Deps;

  test("a read-only key may not write, and the refusal names the batch member", async () => {
    await assert.rejects(
      prepareTypedCall(
        noDeps,
        op("ledger.customers.create"),
        { body: { name: "A" } },
        { principal: { ...principal, readOnly: true }, call, paramPrefix: "requests[0]" },
      ),
      (error: ServiceError) => error.code === "API_KEY_READ_ONLY" && error.param === "requests[0]",
    );
  });

  test("a create becomes a Submission: the write's message, its fingerprint and its route", async () => {
    const prepared = await prepareTypedCall(
      noDeps,
      op("ledger.customers.create"),
      { body: { name: "Acme" } },
      { principal, call },
    );
    assert.equal(prepared.kind, "submit");
    if (prepared.kind !== "submit") return;
    assert.equal(prepared.status, 201);
    const s = prepared.submission;
    assert.equal(s.isWrite, true);
    assert.equal(s.path, "/v1/ledger-desktop/customers");
    assert.deepEqual(s.fingerprintBody, { name: "Acme" });
    assert.match(textOf(s), /<CustomerAddRq><CustomerAdd><Name>Acme<\/Name><\/CustomerAdd><\/CustomerAddRq>/);
  });

  test("a batch list member is one query of at most `limit` (150 by default), without an iterator", async () => {
    const prepared = await prepareTypedCall(
      noDeps,
      op("ledger.invoices.list"),
      { query: { limit: 20 } },
      { principal, call, mode: "batch" },
    );
    assert.ok(prepared.kind === "submit");
    assert.match(textOf(prepared.submission), /<MaxReturned>20<\/MaxReturned>/);
    assert.doesNotMatch(textOf(prepared.submission), /iterator/);
    const byDefault = await prepareTypedCall(
      noDeps,
      op("ledger.invoices.list"),
      {},
      { principal, call, mode: "batch" },
    );
    assert.ok(byDefault.kind === "submit");
    assert.match(textOf(byDefault.submission), /<MaxReturned>150<\/MaxReturned>/);
  });

  test("a batch update that would need a read first is refused, naming the omitted array", async () => {
    await assert.rejects(
      prepareTypedCall(
        noDeps,
        op("ledger.invoices.update"),
        { pathParams: { id: "1-1" }, body: { revisionNumber: "1", lines: [] } },
        { principal, call, mode: "batch", paramPrefix: "requests[1]" },
      ),
      (error: ServiceError) =>
        error.code === "INVALID_PARAMETER" && error.param === "requests[1].body.lineGroups",
    );
  });
});
