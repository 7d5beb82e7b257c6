import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  advance,
  fillMessage,
  fillText,
  setStarts,
  undoMessage,
  undoOperation,
  valueAt,
  type BatchProgram,
  type ProgramMemberResult,
} from "./batch-program.ts";
import { typedOperation } from "./operations.ts";
import { leaf, node, renderElementText } from "./xml/tree.ts";

describe("batch program pieces", () => {
  test("a member starts a new message set when it waits for a member of the set being built", () => {
    assert.deepEqual(setStarts(3, [[], [], []]), [0]);
    // customer, invoice (by name: no wait), payment waiting for the invoice's ID.
    assert.deepEqual(setStarts(3, [[], [], [1]]), [0, 2]);
    // A wait for a member of an earlier set does not split again.
    assert.deepEqual(setStarts(5, [[], [0], [], [0], [3]]), [0, 1, 4]);
  });

  test("values of an answer, by path steps (a pointer's digits index arrays)", () => {
    const data = { id: "1-1", lines: [{ id: "L1" }, { id: "L2" }], customer: { fullName: "A" } };
    assert.equal(valueAt(data, ["id"]), "1-1");
    assert.equal(valueAt(data, ["lines", 1, "id"]), "L2");
    assert.equal(valueAt(data, ["lines", "0", "id"]), "L1");
    assert.equal(valueAt(data, ["customer", "fullName"]), "A");
    assert.equal(valueAt(data, ["lines", "x"]), undefined);
    assert.equal(valueAt(data, ["nope", "id"]), undefined);
    assert.equal(valueAt(null, ["id"]), undefined);
  });

  test("a fill is checked by the field's kind and written in the message", () => {
    const payments = typedOperation("ledger.receivePayments.create") ?? assert.fail();
    const fill = {
      placeholder: "$ref:2:0",
      member: 2,
      at: ["applyToTransactions", 0, "transactionId"],
      from: { member: 1, steps: ["id"] },
    };
    assert.equal(fillText(payments, fill, "12-1700000000", "requests[2]"), "12-1700000000");
    assert.throws(
      () => fillText(payments, fill, null, "requests[2]"),
      (e: { param?: string }) => e.param === "requests[2].body.applyToTransactions[0].transactionId",
    );
    assert.throws(
      () => fillText(payments, fill, "x".repeat(37), "requests[2]"),
      (e: { code?: string }) => e.code === "INVALID_PARAMETER",
    );
    const message = node("ReceivePaymentAddRq", [
      node("ReceivePaymentAdd", [
        node("AppliedToTxnAdd", [leaf("TxnID", "$ref:2:0"), leaf("PaymentAmount", "1.00")]),
      ]),
    ]);
    const filled = fillMessage(message, new Map([["$ref:2:0", "12-1700000000"]]));
    assert.match(
      renderElementText(filled),
      /<TxnID>12-1700000000<\/TxnID><PaymentAmount>1.00<\/PaymentAmount>/,
    );
  });

  test("what undoes a create: its group's delete", () => {
    const customers = undoOperation(typedOperation("ledger.customers.create") ?? assert.fail());
    assert.equal(customers?.operationId, "ledger.customers.delete");
    assert.match(
      renderElementText(undoMessage(customers ?? assert.fail(), "80-1")),
      /<ListDelRq><ListDelType>Customer<\/ListDelType><ListID>80-1<\/ListID><\/ListDelRq>/,
    );
    const invoices = undoOperation(typedOperation("ledger.invoices.create") ?? assert.fail());
    assert.equal(invoices?.operationId, "ledger.invoices.delete");
    assert.match(
      renderElementText(undoMessage(invoices ?? assert.fail(), "9-1")),
      /<TxnDelType>Invoice<\/TxnDelType><TxnID>9-1<\/TxnID>/,
    );
    assert.equal(undoOperation(typedOperation("ledger.customers.update") ?? assert.fail()), null);
  });
});

describe("advance: a batch program from one answer to the next set", () => {
  const ops = ["ledger.customers.create", "ledger.invoices.create", "ledger.receivePayments.create"];
  const payment = node("ReceivePaymentAddRq", [
    node("ReceivePaymentAdd", [node("AppliedToTxnAdd", [leaf("TxnID", "$ref:2:0")])]),
  ]);
  const program: BatchProgram = {
    kind: "batch",
    starts: [0, 2],
    messages: [node("CustomerAddRq", []), node("InvoiceAddRq", []), payment],
    fills: [
      {
        placeholder: "$ref:2:0",
        member: 2,
        at: ["applyToTransactions", 0, "transactionId"],
        from: { member: 1, steps: ["id"] },
      },
    ],
    phase: "members",
    set: 0,
    undo: [],
    results: [null, null, null],
  };
  const ok = (operationId: string, data: unknown): ProgramMemberResult => ({
    operationId,
    status: "succeeded",
    httpStatusCode: 201,
    data,
    error: null,
    warnings: [],
  });
  const failed = (operationId: string): ProgramMemberResult => ({
    operationId,
    status: "failed",
    httpStatusCode: 422,
    data: null,
    error: { code: "LEDGER_REFERENCE_NOT_FOUND" },
    warnings: [],
  });
  const errorBody = (error: { code: string }) => ({ code: error.code });

  test("the next set is written with the answer's values", () => {
    const step = advance(
      program,
      "stopOnError",
      ops,
      [ok(ops[0] ?? "", { id: "C-1" }), ok(ops[1] ?? "", { id: "T-9" })],
      errorBody,
    );
    assert.equal(step.done, false);
    if (step.done) return;
    assert.equal(step.program.set, 1);
    assert.equal(step.messages.length, 1);
    assert.match(renderElementText(step.messages[0] ?? assert.fail()), /<TxnID>T-9<\/TxnID>/);
    const last = advance(step.program, "stopOnError", ops, [ok(ops[2] ?? "", { id: "P-1" })], errorBody);
    assert.equal(last.done, true);
    if (!last.done) return;
    assert.deepEqual(
      last.results.map((r) => r.status),
      ["succeeded", "succeeded", "succeeded"],
    );
  });

  test("stopOnError: a failure ends the batch, later sets not processed", () => {
    const step = advance(
      program,
      "stopOnError",
      ops,
      [ok(ops[0] ?? "", { id: "C-1" }), failed(ops[1] ?? "")],
      errorBody,
    );
    assert.equal(step.done, true);
    if (!step.done) return;
    assert.deepEqual(
      step.results.map((r) => r.status),
      ["succeeded", "failed", "not_processed"],
    );
  });

  test("rollback: after a failure, what succeeded is undone in reverse order; an undo that fails is reported", () => {
    const first = advance(
      program,
      "rollback",
      ops,
      [ok(ops[0] ?? "", { id: "C-1" }), ok(ops[1] ?? "", { id: "T-9" })],
      errorBody,
    );
    assert.equal(first.done, false);
    if (first.done) return;
    const second = advance(first.program, "rollback", ops, [failed(ops[2] ?? "")], errorBody);
    assert.equal(second.done, false);
    if (second.done) return;
    assert.deepEqual(second.program.undo, [1, 0]);
    assert.equal(second.onError, "continueOnError");
    assert.match(
      renderElementText(second.messages[0] ?? assert.fail()),
      /<TxnDelType>Invoice<\/TxnDelType><TxnID>T-9</,
    );
    assert.match(
      renderElementText(second.messages[1] ?? assert.fail()),
      /<ListDelType>Customer<\/ListDelType><ListID>C-1</,
    );
    const undone = advance(
      second.program,
      "rollback",
      ops,
      [ok("ledger.invoices.delete", {}), failed("ledger.customers.delete")],
      errorBody,
    );
    assert.equal(undone.done, true);
    if (!undone.done) return;
    assert.deepEqual(
      undone.results.map((r) => r.status),
      ["succeeded", "rolled_back", "failed"],
    );
    assert.deepEqual(undone.results[0]?.rollbackError, { code: "LEDGER_REFERENCE_NOT_FOUND" });
  });

  test("a value the answer lacks fails the member that needs it, before anything more is sent", () => {
    const step = advance(
      program,
      "rollback",
      ops,
      [ok(ops[0] ?? "", { id: "C-1" }), ok(ops[1] ?? "", { id: null })],
      errorBody,
    );
    assert.equal(step.done, false, "the undo set");
    if (step.done) return;
    assert.equal(step.program.phase, "rollback");
    assert.equal(step.program.results[2]?.status, "failed");
    assert.equal((step.program.results[2]?.error as { code: string }).code, "INVALID_PARAMETER");
  });
});
