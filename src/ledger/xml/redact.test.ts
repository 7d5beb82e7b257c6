import assert from "node:assert/strict";
import { test } from "node:test";
import { redactedDocument, redactedJson } from "./redact.ts";

const doc = (body: string): string =>
  `<?xml version="1.0" encoding="utf-8"?>\n<?qbxml version="16.0"?>\n<QBXML><QBXMLMsgsRq onError="stopOnError">${body}</QBXMLMsgsRq></QBXML>`;

test("card numbers and social security numbers keep their last four; passwords nothing; the rest is untouched", () => {
  const xml = doc(
    "<ReceivePaymentAddRq><ReceivePaymentAdd><CustomerRef><FullName>Ann &amp; Co</FullName></CustomerRef>" +
      "<CreditCardTxnInfo><CreditCardTxnInputInfo><CreditCardNumber>4111111111111111</CreditCardNumber>" +
      "<ExpirationMonth>12</ExpirationMonth></CreditCardTxnInputInfo></CreditCardTxnInfo></ReceivePaymentAdd></ReceivePaymentAddRq>" +
      "<EmployeeAddRq><EmployeeAdd><SSN>123-45-6789</SSN></EmployeeAdd></EmployeeAddRq>" +
      "<PreferencesQueryRq><ClosingDatePassword>hunter2</ClosingDatePassword></PreferencesQueryRq>",
  );
  const out = redactedDocument(xml);
  assert.ok(out);
  assert.equal(out.redactedValues, 3);
  assert.doesNotMatch(out.xml, /4111111111111111|123-45-6789|hunter2|41111111/);
  assert.match(out.xml, /<CreditCardNumber>•{12}1111<\/CreditCardNumber>/);
  assert.match(out.xml, /<SSN>•{7}6789<\/SSN>/);
  assert.match(out.xml, /<ClosingDatePassword>•{8}<\/ClosingDatePassword>/);
  assert.match(out.xml, /<ExpirationMonth>12<\/ExpirationMonth>/);
  assert.match(out.xml, /<FullName>Ann &amp; Co<\/FullName>/, "text stays escaped");
  assert.match(
    out.xml,
    /^<\?xml version="1.0" encoding="utf-8"\?>\n<\?qbxml version="16.0"\?>\n<QBXML>\n {2}<QBXMLMsgsRq onError="stopOnError">\n/,
  );
});

test("a short secret is masked whole; an empty one stays empty", () => {
  const out = redactedDocument(doc("<X><SSN>6789</SSN><CreditCardNumber></CreditCardNumber></X>"));
  assert.ok(out);
  assert.match(out.xml, /<SSN>•{8}<\/SSN>/);
  assert.equal(out.redactedValues, 1);
});

test("text that is not one well-formed document is not shown (it could not be redacted)", () => {
  assert.equal(redactedDocument("<QBXML><SSN>123-45-6789</SSN>"), null);
  assert.equal(redactedDocument("not xml"), null);
  assert.equal(redactedDocument('<!DOCTYPE x [<!ENTITY e "boom">]><x>&e;</x>'), null);
});

test("JSON input: the card number inside creditCard keeps its last four; password fields nothing; other numbers stay", () => {
  const out = redactedJson({
    body: {
      creditCard: { number: "4111111111111111", expirationMonth: 12 },
      lines: [{ number: "A-100", password: "x", adminPassword: "secret1" }],
    },
  });
  assert.deepEqual(out, {
    value: {
      body: {
        creditCard: { number: "••••••••••••1111", expirationMonth: 12 },
        lines: [{ number: "A-100", password: "••••••••", adminPassword: "••••••••" }],
      },
    },
    redactedValues: 3,
  });
});
