import assert from "node:assert/strict";
import { test } from "node:test";
import {
  maskSecretsInMessage,
  maskSecretsInText,
  maskedJsonText,
  redactedDocument,
  redactedJson,
  restoreSecrets,
  splitSecrets,
} from "./redact.ts";

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

test("JSON: every name the schema gives a secret is masked where it is one (a card transaction's request, an employee's ssn)", () => {
  const out = redactedJson({
    body: {
      creditCardTransaction: { request: { number: "5500005555555559", name: "Ann" } },
      ssn: "123-45-6789",
      accountingPreferences: { closingDatePassword: "hunter2" },
      lines: [{ number: "A-100" }],
    },
    data: [{ ssn: "987-65-4321" }],
  });
  const body = (out.value as { body: Record<string, unknown> }).body;
  assert.deepEqual(body.creditCardTransaction, { request: { number: "••••••••••••5559", name: "Ann" } });
  assert.equal(body.ssn, "•••••••6789");
  assert.deepEqual(body.accountingPreferences, { closingDatePassword: "••••••••" });
  assert.deepEqual(body.lines, [{ number: "A-100" }], "a line's number is no secret");
  assert.deepEqual((out.value as { data: unknown }).data, [{ ssn: "•••••••4321" }]);
});

test("stored JSON input: the text is kept as sent when it names no secret field, masked when it does", () => {
  const plain = { query: { limit: 5, nameContains: "Card" } };
  assert.equal(maskedJsonText(plain), JSON.stringify(plain));
  assert.equal(
    maskedJsonText({ body: { creditCard: { number: "4111111111111111" } } }),
    '{"body":{"creditCard":{"number":"••••••••••••1111"}}}',
  );
});

test("a document's secrets are split out and put back exactly; the rest of the text is untouched", () => {
  const xml =
    "<CustomerAddRq><CustomerAdd><Name>A &amp; B</Name><CreditCardInfo><CreditCardNumber>4111111111111111</CreditCardNumber>" +
    "</CreditCardInfo></CustomerAdd></CustomerAddRq><EmployeeAddRq><EmployeeAdd><SSN>123-45-6789</SSN><SSN/></EmployeeAdd></EmployeeAddRq>" +
    "<PreferencesModRq><ClosingDatePassword>a&lt;b</ClosingDatePassword></PreferencesModRq>";
  const split = splitSecrets(xml);
  assert.deepEqual(split.values, ["4111111111111111", "123-45-6789", "a&lt;b"]);
  assert.doesNotMatch(split.xml, /4111111111111111|123-45-6789|a&lt;b/);
  assert.match(split.xml, /<CreditCardNumber>•{12}1111<\/CreditCardNumber>/);
  assert.match(split.xml, /<ClosingDatePassword>•{8}<\/ClosingDatePassword>/);
  assert.equal(restoreSecrets(split.xml, split.values ?? []), xml);
  assert.throws(() => restoreSecrets(split.xml, ["only one"]), /values for/);
  assert.deepEqual(splitSecrets("<CustomerQueryRq/>"), { xml: "<CustomerQueryRq/>", values: null });
});

test("answers as text: element values and quoted values in status messages naming a secret are masked", () => {
  const answer =
    '<CustomerAddRs statusCode="3210" statusSeverity="Error" statusMessage="The &quot;CreditCardNumber&quot; field has an invalid value &quot;4111111111111111&quot;." />' +
    "<CustomerQueryRs><CustomerRet><CreditCardInfo><CreditCardNumber><![CDATA[4111111111111111]]></CreditCardNumber></CreditCardInfo></CustomerRet></CustomerQueryRs>";
  const masked = maskSecretsInText(answer);
  assert.doesNotMatch(masked, /41111111/);
  assert.match(masked, /invalid value &quot;•{8}&quot;/);
  assert.match(masked, /field has an invalid value/);
  assert.match(masked, /<CreditCardNumber>•{8}<\/CreditCardNumber>/, "markup inside is masked whole");
  const plain = '<InvoiceQueryRs statusCode="0" statusMessage="Status OK"><InvoiceRet/></InvoiceQueryRs>';
  assert.equal(maskSecretsInText(plain), plain, "an answer without secrets is returned as it is");
  assert.equal(
    maskSecretsInMessage('The "SSN" field has an invalid value "123-45-6789".'),
    'The "SSN" field has an invalid value "••••••••".',
  );
  assert.equal(maskSecretsInMessage('The name "Ann" is in use.'), 'The name "Ann" is in use.');
});
