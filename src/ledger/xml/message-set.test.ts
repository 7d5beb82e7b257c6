import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parsePassthroughXml, storedMessageSet } from "./message-set.ts";
import { rejectsPassthrough } from "./passthrough-assertions.ts";

describe("parsePassthroughXml", () => {
  test("takes bare request messages and defaults to stopOnError", () => {
    const parsed = parsePassthroughXml(
      "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq><CompanyQueryRq/>",
    );
    assert.deepEqual(parsed.requestNames, ["CustomerQueryRq", "CompanyQueryRq"]);
    assert.equal(parsed.onError, "stopOnError");
    assert.equal(
      storedMessageSet(parsed).messagesXml,
      "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq><CompanyQueryRq></CompanyQueryRq>",
    );
  });

  test("takes a whole document, keeping its onError and only the messages", () => {
    const parsed = parsePassthroughXml(
      '\uFEFF<?xml version="1.0"?>\n<?qbxml version="13.0"?>\n<QBXML><QBXMLMsgsRq onError="continueOnError">\n<CustomerAddRq><CustomerAdd><Name>A</Name></CustomerAdd></CustomerAddRq>\n</QBXMLMsgsRq></QBXML>',
    );
    assert.deepEqual(parsed.requestNames, ["CustomerAddRq"]);
    assert.equal(parsed.onError, "continueOnError");
    assert.equal(
      storedMessageSet(parsed).messagesXml,
      "<CustomerAddRq><CustomerAdd><Name>A</Name></CustomerAdd></CustomerAddRq>",
    );
  });

  // The checks that run before the schema keep their messages.
  const cases: [string, string, string | RegExp][] = [
    ["an empty body", "  ", "The XML body is empty."],
    [
      "XML that is not well formed",
      "<CustomerQueryRq>\n<MaxReturned>1</Max></CustomerQueryRq>",
      /^The XML is not well formed: .+ \(line 2\)\.$/,
    ],
    [
      "a document without QBXMLMsgsRq",
      "<QBXML><SignonMsgsRq/></QBXML>",
      "The document has no `QBXMLMsgsRq` element.",
    ],
    [
      "a caller-set message-set ID",
      '<QBXML><QBXMLMsgsRq onError="stopOnError" newMessageSetID="1"><CompanyQueryRq/></QBXMLMsgsRq></QBXML>',
      "Do not set `newMessageSetID` or `oldMessageSetID`: the service manages write recovery itself.",
    ],
    [
      "an unknown onError",
      '<QBXML><QBXMLMsgsRq onError="ignore"><CompanyQueryRq/></QBXMLMsgsRq></QBXML>',
      "`onError` must be `stopOnError` or `continueOnError`.",
    ],
    ["stray text", "hello<CompanyQueryRq/>", "Text outside of request elements is not allowed."],
    [
      "no request messages",
      '<QBXML><QBXMLMsgsRq onError="stopOnError"></QBXMLMsgsRq></QBXML>',
      "The XML holds no request messages.",
    ],
    [
      "an element that is not a request",
      "<CustomerQueryRs/>",
      "`CustomerQueryRs` is not a request message (request element names end in `Rq`).",
    ],
  ];
  for (const [title, xml, message] of cases) test(`rejects ${title}`, () => rejectsPassthrough(xml, message));

  test("rejects a schema-invalid message after the envelope checks pass", () => {
    rejectsPassthrough(
      '<QBXML><QBXMLMsgsRq onError="stopOnError"><CustomerAddRq><CustomerAdd/></CustomerAddRq></QBXMLMsgsRq></QBXML>',
      "`CustomerAddRq/CustomerAdd/Name` is required.",
    );
  });
});
