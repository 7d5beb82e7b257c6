import assert from "node:assert/strict";
import { test } from "node:test";
import { parseDocument } from "./parse.ts";
import type { XmlElement } from "./tree.ts";
import { writeTargetsOf } from "./write-targets.ts";

/** The message tree (write targets are computed from the tree, never from text). */
const doc = (messages: string): readonly XmlElement[] =>
  parseDocument(
    `<?xml version="1.0"?><?qbxml version="16.0"?><QBXML><QBXMLMsgsRq onError="stopOnError">${messages}</QBXMLMsgsRq></QBXML>`,
  )?.root.children[0]?.children ?? [];

test("a write's targets are the records its Mod, Del and Void messages change, not the ones it refers to", () => {
  const mod = `<CustomerModRq><CustomerMod><ListID>80000001-1</ListID><EditSequence>1</EditSequence>
    <ParentRef><ListID>80000009-1</ListID></ParentRef></CustomerMod></CustomerModRq>`;
  const del = `<TxnDelRq><TxnDelType>Invoice</TxnDelType><TxnID>1F-1</TxnID></TxnDelRq>`;
  const voided = `<TxnVoidRq><TxnVoidType>Check</TxnVoidType><TxnID>2A-1</TxnID></TxnVoidRq>`;
  const line = `<InvoiceModRq><InvoiceMod><TxnID>1F-1</TxnID><EditSequence>2</EditSequence>
    <InvoiceLineMod><TxnLineID>9-1</TxnLineID></InvoiceLineMod></InvoiceMod></InvoiceModRq>`;
  assert.deepEqual(writeTargetsOf(doc(mod + del + voided + line)), ["80000001-1", "1F-1", "2A-1"]);
});

test("creates and queries change no existing record", () => {
  const add = `<InvoiceAddRq><InvoiceAdd><CustomerRef><ListID>80000001-1</ListID></CustomerRef></InvoiceAdd></InvoiceAddRq>`;
  const query = `<CustomerQueryRq><ListID>80000001-1</ListID></CustomerQueryRq>`;
  assert.deepEqual(writeTargetsOf(doc(add + query)), []);
  assert.deepEqual(writeTargetsOf([]), []);
});
