import assert from "node:assert/strict";
import { test } from "node:test";
import { findOperation, renderMessages, shownMessages, validateCall } from "./catalogue.ts";

/**
 * The MCP server's preview of an upsert (issue 27, decision 0046): the person accepting the write sees
 * every message set it may send — the find, the add it sends when nothing is found, and the modify it
 * sends to the found record — not only the first set's query.
 */
test("an upsert's preview shows its find and both writes it may send", () => {
  const operation = findOperation("ledger.customers.upsert");
  const input = validateCall(operation, {
    body: { key: { fullName: "Preview Co:Kitchen" }, fields: { companyName: "Preview Holdings" } },
  });
  const { xml } = shownMessages(renderMessages(operation, input).messagesXml);
  assert.equal(xml.match(/<[A-Za-z]+Rq>/g)?.length, 3, xml);
  assert.match(xml, /<CustomerQueryRq>[\s\S]*<FullName>Preview Co:Kitchen<\/FullName>/);
  assert.match(
    xml,
    /<CustomerAddRq>[\s\S]*<Name>Kitchen<\/Name>[\s\S]*<CompanyName>Preview Holdings<\/CompanyName>/,
  );
  assert.match(
    xml,
    /<CustomerModRq>[\s\S]*<ListID>FOUND-RECORD-ID<\/ListID>[\s\S]*<CompanyName>Preview Holdings<\/CompanyName>/,
  );
  // A create shows one message only.
  const create = findOperation("ledger.customers.create");
  const single = shownMessages(
    renderMessages(create, validateCall(create, { body: { name: "One" } })).messagesXml,
  );
  assert.equal(single.xml.match(/<[A-Za-z]+Rq>/g)?.length, 1);
});
