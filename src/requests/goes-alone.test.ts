import assert from "node:assert/strict";
import { test } from "node:test";
import { PASSTHROUGH_OPERATION } from "../ledger/operations.ts";
import type { XmlElement } from "../ledger/xml/tree.ts";
import { goesAlone } from "./submit.ts";

/**
 * Which Requests share a message set with their neighbours (decision 0036): a typed call of one
 * message whose answer is bounded does; everything else goes alone. The claim reads the stored
 * `alone` column this decides (test/e2e/message-sets.test.ts sends them through the connector).
 */
const message = (name: string): XmlElement => ({ name, attrs: [], children: [], text: "" });
const typed = (name: string) => ({
  operationId: "ledger.customers.retrieve",
  document: { onError: "stopOnError" as const, messages: [message(name)] },
});

test("a typed call of one message with a bounded answer shares a message set", () => {
  assert.equal(goesAlone(typed("CustomerQueryRq")), false);
  assert.equal(goesAlone(typed("InvoiceAddRq")), false);
  assert.equal(goesAlone({ ...typed("CustomerQueryRq"), background: false }), false);
});

test("a passthrough, a batch, several messages, a report and the change feed's queries go alone", () => {
  assert.equal(goesAlone({ ...typed("CustomerQueryRq"), operationId: PASSTHROUGH_OPERATION }), true);
  assert.equal(goesAlone({ ...typed("CustomerQueryRq"), batch: { members: [] } as never }), true);
  assert.equal(
    goesAlone({
      operationId: "ledger.invoices.update",
      document: { onError: "stopOnError", messages: [message("InvoiceQueryRq"), message("InvoiceModRq")] },
    }),
    true,
  );
  assert.equal(
    goesAlone({ ...typed("CustomerQueryRq"), document: { onError: "stopOnError", messages: [] } }),
    true,
  );
  assert.equal(goesAlone(typed("GeneralSummaryReportQueryRq")), true, "a report's answer has no bound");
  assert.equal(goesAlone(typed("AgingReportQueryRq")), true);
  assert.equal(goesAlone({ ...typed("CustomerQueryRq"), background: true }), true, "the change feed's query");
});
