import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fillMessage, fillText, setStarts, undoMessage, undoOperation, valueAt } from "./batch-program.ts";
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
