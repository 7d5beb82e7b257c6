import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  LEDGER_SCHEMA_PATH,
  deriveLedgerSchema,
  renderLedgerSchema,
  ledgerSchemaDir,
} from "../../../scripts/gen-ledger-schema.ts";
import { HEALTH_CHECK_MESSAGES } from "../operations.ts";
import { findAmbiguity, parseContentModel, type Particle } from "./content-model.ts";
import type { SimpleTypeEntry } from "./schema-table.ts";
import { requestSchemaTable } from "./request-schema.ts";
import { acceptsPassthrough, rejectsPassthrough } from "./passthrough-assertions.ts";

describe("the derived table", () => {
  test("the committed table equals a fresh derivation from the XSDs (run `npm run gen:ledger-schema`)", (t) => {
    const dir = ledgerSchemaDir();
    if (!existsSync(join(dir, "qbxmlops160.xsd"))) {
      // CI must check for drift: a missing reference directory there is a broken setup, not a pass.
      if (process.env.CI) assert.fail(`the SDK's XSDs are not in ${dir} (CI is set)`);
      t.skip(`the SDK's XSDs are not in ${dir}; set LEDGER_SCHEMA_DIR to check the table for drift`);
      return;
    }
    assert.equal(readFileSync(LEDGER_SCHEMA_PATH, "utf8"), renderLedgerSchema(deriveLedgerSchema(dir)));
  });

  test("it covers every request element of 16.0 and lists those 13.0 lacks", () => {
    const table = requestSchemaTable();
    assert.equal(table.xmlVersion, "16.0");
    assert.equal(table.requests.length, 261);
    assert.ok(table.requests.every((name) => name.endsWith("Rq") && table.complex[name] !== undefined));
    assert.equal(table.newerRequests.length, 29);
    for (const name of ["PreferencesModRq", "QBCommandExecRq", "AlertQueryRq", "PaycheckQueryRq"]) {
      assert.ok(table.newerRequests.includes(name), name);
    }
    assert.ok(table.newerRequests.every((name) => table.requests.includes(name)));
    assert.deepEqual(table.droppedRequests, []);
  });

  test("every model parses, names only known types, and is deterministic (the matcher needs no backtracking)", () => {
    const table = requestSchemaTable();
    const groups = new Map<string, Particle>();
    const group = (name: string): Particle => {
      let particle = groups.get(name);
      if (!particle) {
        const model = table.groups[name];
        assert.ok(model !== undefined, `group ${name} exists`);
        particle = parseContentModel(model, group);
        groups.set(name, particle);
      }
      return particle;
    };
    const typeKeys = (particle: Particle, into: string[]): string[] => {
      if (particle.kind === "element")
        into.push(particle.typeKey ?? table.elements[particle.name] ?? particle.name);
      else for (const item of particle.items) typeKeys(item, into);
      return into;
    };
    for (const [key, entry] of Object.entries(table.complex)) {
      const model = parseContentModel(entry.m, group);
      assert.equal(findAmbiguity(model), null, key);
      for (const typeKey of typeKeys(model, [])) {
        assert.ok(table.simple[typeKey] ?? table.complex[typeKey], `${key} uses the type ${typeKey}`);
      }
      if (entry.a !== undefined) assert.ok(table.attributes[entry.a], `${key} attributes`);
    }
  });
});

/** A value every check of `entry` accepts. */
function sampleValue(entry: SimpleTypeEntry): string {
  if (entry.e?.[0] !== undefined) return entry.e[0];
  const samples: Record<string, string> = {
    bool: "true",
    int: String(entry.lo ?? 1),
    date: "2026-02-03",
    datetime: "2026-02-03T04:05:06",
    amt: "12.50",
    price: "3.25",
    quan: "2",
    percent: "7.5",
    float: "1.5",
    guid: "{5B9D4C1E-0A2B-4C3D-8E9F-112233445566}",
    timeinterval: "PT1H30M",
  };
  return samples[entry.b] ?? "x";
}

/**
 * Writes an instance of a request straight from its model: `rich` includes every optional particle
 * once (first alternative of each choice), otherwise only what is required.
 */
function instanceOf(name: string, rich: boolean): string {
  const table = requestSchemaTable();
  const groups = new Map<string, Particle>();
  const group = (groupName: string): Particle => {
    const model = table.groups[groupName] ?? "";
    const particle = groups.get(groupName) ?? parseContentModel(model, group);
    groups.set(groupName, particle);
    return particle;
  };
  const element = (elementName: string, typeKey: string, depth: number): string => {
    const simple = table.simple[typeKey];
    if (simple) return `<${elementName}>${sampleValue(simple)}</${elementName}>`;
    const complex = table.complex[typeKey];
    assert.ok(complex, typeKey);
    return `<${elementName}>${content(parseContentModel(complex.m, group), depth + 1)}</${elementName}>`;
  };
  const content = (particle: Particle, depth: number): string => {
    assert.ok(depth < 30, `${name} nests too deep`);
    const times = rich ? Math.max(particle.min, 1) : particle.min;
    let once: string;
    if (particle.kind === "element") {
      once = element(
        particle.name,
        particle.typeKey ?? table.elements[particle.name] ?? particle.name,
        depth,
      );
    } else if (particle.kind === "sequence") {
      once = particle.items.map((item) => content(item, depth)).join("");
    } else {
      const [firstAlternative] = particle.items;
      once = firstAlternative && (rich || !particle.emptiable) ? content(firstAlternative, depth) : "";
    }
    return once.repeat(Math.min(times, particle.max));
  };
  return element(name, name, 0);
}

describe("messages the schema allows", () => {
  test("a minimal and a full instance of every request element validate", () => {
    for (const name of requestSchemaTable().requests) {
      acceptsPassthrough(instanceOf(name, false));
      acceptsPassthrough(instanceOf(name, true));
    }
  });

  // Written for these tests, shaped like the SDK's sample requests.
  const samples: Record<string, string> = {
    "a check with an expense line": `<CheckAddRq requestID="7"><CheckAdd><AccountRef><FullName>Operating</FullName></AccountRef>
      <PayeeEntityRef><FullName>Harbour Tyres</FullName></PayeeEntityRef><TxnDate>2026-03-14</TxnDate>
      <Memo>Fleet service</Memo><ExpenseLineAdd><AccountRef><FullName>Vehicles</FullName></AccountRef>
      <Amount>310.00</Amount></ExpenseLineAdd></CheckAdd></CheckAddRq>`,
    "a summary report": `<GeneralSummaryReportQueryRq requestID="1"><GeneralSummaryReportType>ProfitAndLossStandard</GeneralSummaryReportType>
      <ReportDateMacro>LastMonth</ReportDateMacro><SummarizeColumnsBy>Week</SummarizeColumnsBy>
      <ReportCalendar>CalendarYear</ReportCalendar></GeneralSummaryReportQueryRq>`,
    "the host, company and preferences queries": `<HostQueryRq requestID="h"/><CompanyQueryRq requestID="c"></CompanyQueryRq>
      <PreferencesQueryRq requestID="p"/>`,
    "empty list and transaction queries": `<AccountQueryRq requestID="9"></AccountQueryRq><InvoiceQueryRq/>
      <ItemInventoryQueryRq requestID="inv"/><CustomerQueryRq requestID="3" />`,
    "an iterator query with metadata": `<CustomerQueryRq requestID="4" iterator="Continue" iteratorID="{1C8B2F4E-6D0A-4E7B-9C3D-5A6B7C8D9E0F}" metaData="MetaDataAndResponseData"><MaxReturned>25</MaxReturned><ActiveStatus>All</ActiveStatus></CustomerQueryRq>`,
    "a whole document with lines": `<?xml version="1.0"?><?qbxml version="16.0"?><QBXML><QBXMLMsgsRq onError="continueOnError">
      <InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>Lakeside Bakery</FullName></CustomerRef><TxnDate>2026-04-01</TxnDate>
      <InvoiceLineAdd><ItemRef><FullName>Delivery</FullName></ItemRef><Quantity>3</Quantity><Rate>12.5</Rate></InvoiceLineAdd>
      <InvoiceLineAdd><ItemRef><FullName>Flour</FullName></ItemRef><Amount>40.00</Amount></InvoiceLineAdd>
      </InvoiceAdd></InvoiceAddRq></QBXMLMsgsRq></QBXML>`,
    "deletes and a modify": `<ListDelRq><ListDelType>Customer</ListDelType><ListID>80000001-1700000000</ListID></ListDelRq>
      <TxnDelRq><TxnDelType>Invoice</TxnDelType><TxnID>1F-1700000000</TxnID></TxnDelRq>
      <CustomerModRq><CustomerMod><ListID>80000002-1700000000</ListID><EditSequence>1700000001</EditSequence>
      <CompanyName>Lakeside &amp; Co</CompanyName><Phone>555-0199</Phone></CustomerMod></CustomerModRq>`,
    "a filter by date range": `<InvoiceQueryRq><TxnDateRangeFilter><FromTxnDate>2026-01-01</FromTxnDate><ToTxnDate>2026-01-31</ToTxnDate></TxnDateRangeFilter><IncludeLineItems>true</IncludeLineItems></InvoiceQueryRq>`,
  };
  for (const [title, xml] of Object.entries(samples)) test(title, () => acceptsPassthrough(xml));

  test("every message the service, demo, benchmark and tests send", () => {
    acceptsPassthrough(HEALTH_CHECK_MESSAGES);
    acceptsPassthrough("<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>");
    acceptsPassthrough("<CustomerQueryRq><MaxReturned>3</MaxReturned></CustomerQueryRq>");
    acceptsPassthrough("<CustomerAddRq><CustomerAdd><Name>New One</Name></CustomerAdd></CustomerAddRq>");
  });
});

describe("messages the schema rejects", () => {
  const cases: [string, string, string][] = [
    [
      "an unknown request",
      "<CustomerAdRq/>",
      "`CustomerAdRq` is not a request message the application knows.",
    ],
    [
      "a request name in the wrong case",
      "<CustomerqueryRq/>",
      "`CustomerqueryRq` is not a request message the application knows (did you mean `CustomerQueryRq`?).",
    ],
    [
      "a missing required element",
      "<CustomerAddRq><CustomerAdd><IsActive>true</IsActive></CustomerAdd></CustomerAddRq>",
      "`CustomerAddRq/CustomerAdd/Name` is required.",
    ],
    [
      "a missing required aggregate",
      "<CustomerAddRq></CustomerAddRq>",
      "`CustomerAddRq/CustomerAdd` is required.",
    ],
    [
      "a required choice left empty",
      "<InvoiceQueryRq><EntityFilter></EntityFilter></InvoiceQueryRq>",
      "`InvoiceQueryRq/EntityFilter` requires one of `ListID`, `FullName`, `ListIDWithChildren`, `FullNameWithChildren`.",
    ],
    [
      "an unknown element",
      "<CustomerQueryRq><Foo/></CustomerQueryRq>",
      "`CustomerQueryRq` does not allow `Foo` (allowed here: ListID, FullName, MaxReturned, ActiveStatus, FromModifiedDate, ToModifiedDate, NameFilter, NameRangeFilter, TotalBalanceFilter, CurrencyFilter, ClassFilter, IncludeRetElement, … (1 more)).",
    ],
    [
      "elements out of order",
      "<CustomerQueryRq><ActiveStatus>All</ActiveStatus><MaxReturned>1</MaxReturned></CustomerQueryRq>",
      "`CustomerQueryRq/MaxReturned` is out of order: it must come before `ActiveStatus`.",
    ],
    [
      "a required element after an optional one",
      "<CustomerAddRq><CustomerAdd><IsActive>true</IsActive><Name>A</Name></CustomerAdd></CustomerAddRq>",
      "`CustomerAddRq/CustomerAdd/Name` is out of order: it must come before `IsActive`.",
    ],
    [
      "two alternatives of one choice",
      "<CustomerQueryRq><ListID>80000001-1700000000</ListID><MaxReturned>5</MaxReturned></CustomerQueryRq>",
      "`CustomerQueryRq` cannot have both `ListID` and `MaxReturned`: they are alternatives (use one of: ListID | FullName | MaxReturned, ActiveStatus, FromModifiedDate…).",
    ],
    [
      "an element repeated once too often",
      "<CustomerAddRq><CustomerAdd><Name>A</Name><Name>B</Name></CustomerAdd></CustomerAddRq>",
      "`CustomerAddRq/CustomerAdd/Name[2]` may appear only once in `CustomerAddRq/CustomerAdd`.",
    ],
    [
      "more than maxOccurs",
      `<CustomerAddRq><CustomerAdd><Name>A</Name>${"<AdditionalContactRef><ContactName>n</ContactName><ContactValue>v</ContactValue></AdditionalContactRef>".repeat(9)}</CustomerAdd></CustomerAddRq>`,
      "`CustomerAddRq/CustomerAdd/AdditionalContactRef[9]` may appear at most 8 times in `CustomerAddRq/CustomerAdd`.",
    ],
    [
      "a value outside an enumeration",
      "<CustomerQueryRq><ActiveStatus>Everything</ActiveStatus></CustomerQueryRq>",
      "`CustomerQueryRq/ActiveStatus` must be one of ActiveOnly, InactiveOnly, All (got `Everything`).",
    ],
    [
      "a text longer than its maxLength",
      `<CustomerAddRq><CustomerAdd><Name>${"n".repeat(42)}</Name></CustomerAdd></CustomerAddRq>`,
      "`CustomerAddRq/CustomerAdd/Name` is longer than 41 characters (42).",
    ],
    [
      "a word where a number belongs, in the second line",
      "<InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>A</FullName></CustomerRef><InvoiceLineAdd><Amount>1.00</Amount></InvoiceLineAdd><InvoiceLineAdd><Amount>ten</Amount></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>",
      "`InvoiceAddRq/InvoiceAdd/InvoiceLineAdd[2]/Amount` must be a number (got `ten`).",
    ],
    [
      "a US-style date",
      "<InvoiceQueryRq><TxnDateRangeFilter><FromTxnDate>01/05/2026</FromTxnDate></TxnDateRangeFilter></InvoiceQueryRq>",
      "`InvoiceQueryRq/TxnDateRangeFilter/FromTxnDate` must be a date written YYYY-MM-DD (got `01/05/2026`).",
    ],
    [
      "an integer below its minimum",
      "<CustomerQueryRq><MaxReturned>0</MaxReturned></CustomerQueryRq>",
      "`CustomerQueryRq/MaxReturned` must be at least 1.",
    ],
    [
      "an unknown attribute",
      '<CustomerAddRq iterator="Start"><CustomerAdd><Name>A</Name></CustomerAdd></CustomerAddRq>',
      "`CustomerAddRq` does not allow the attribute `iterator` (allowed: requestID).",
    ],
    [
      "an attribute value outside its enumeration",
      '<CustomerQueryRq iterator="Begin"/>',
      "The attribute `CustomerQueryRq@iterator` must be one of Start, Continue, Stop (got `Begin`).",
    ],
    [
      "elements inside a value",
      "<CustomerAddRq><CustomerAdd><Name><First>A</First></Name></CustomerAdd></CustomerAddRq>",
      "`CustomerAddRq/CustomerAdd/Name` holds a value, not elements (found `First`).",
    ],
    [
      "text inside an aggregate",
      "<CustomerAddRq><CustomerAdd>Acme<Name>A</Name></CustomerAdd></CustomerAddRq>",
      "`CustomerAddRq/CustomerAdd` holds elements, not text.",
    ],
    [
      "a problem in the second of two messages",
      "<CustomerAddRq><CustomerAdd><Name>A</Name></CustomerAdd></CustomerAddRq><CustomerAddRq><CustomerAdd><Nm>B</Nm></CustomerAdd></CustomerAddRq>",
      "`CustomerAddRq[2]/CustomerAdd` does not allow `Nm` (allowed here: Name, IsActive, ClassRef, ParentRef, CompanyName, Salutation, FirstName, MiddleName, LastName, Suffix, JobTitle, BillAddress, … (42 more)).",
    ],
  ];
  for (const [title, xml, message] of cases) test(title, () => rejectsPassthrough(xml, message));

  test("an element in the wrong case gets a suggestion", () => {
    rejectsPassthrough(
      "<CustomerAddRq><CustomerAdd><name>A</name></CustomerAdd></CustomerAddRq>",
      /^`CustomerAddRq\/CustomerAdd` does not allow `name` \(did you mean `Name`\?\) \(allowed here: Name, IsActive, /,
    );
  });
});

describe("element order", () => {
  // Leaves of CustomerAdd in schema order; "x" fits each of them.
  const ORDER = [
    "CompanyName",
    "Salutation",
    "FirstName",
    "MiddleName",
    "LastName",
    "JobTitle",
    "PrintAs",
    "Phone",
    "Mobile",
    "AltPhone",
    "Fax",
    "Email",
    "Cc",
    "Contact",
    "AltContact",
    "ResaleNumber",
    "AccountNumber",
    "Notes",
  ];
  const customerAdd = (names: readonly string[]): string =>
    `<CustomerAddRq><CustomerAdd><Name>N</Name>${names.map((n) => `<${n}>x</${n}>`).join("")}</CustomerAdd></CustomerAddRq>`;

  test("any subset of optional elements in schema order validates; swapping two is named as out of order", () => {
    fc.assert(
      fc.property(fc.subarray(ORDER, { minLength: 2 }), fc.nat(), fc.nat(), (subset, i, j) => {
        acceptsPassthrough(customerAdd(subset));
        const a = i % subset.length;
        const b = j % subset.length;
        fc.pre(a !== b);
        const swapped = [...subset];
        [swapped[a], swapped[b]] = [swapped[b] ?? "", swapped[a] ?? ""];
        rejectsPassthrough(
          customerAdd(swapped),
          /^`CustomerAddRq\/CustomerAdd\/\w+` is out of order: it must come before `\w+`\.$/,
        );
      }),
    );
  });
});

test("the committed table names no product brand (enumerations naming one are left to the application)", () => {
  const text = readFileSync(LEDGER_SCHEMA_PATH, "utf8");
  assert.doesNotMatch(text, /QBDT|QBO|QuickBooks|Intuit/i);
  acceptsPassthrough(`<QBCommandExecRq><QBCommand>Backup</QBCommand></QBCommandExecRq>`);
});

describe("the derived table's responses and versions", () => {
  test("every request has its response, and both sides' types are in the table", () => {
    const table = requestSchemaTable();
    assert.equal(table.responses.length, table.requests.length);
    for (const request of table.requests) {
      const response = request.replace(/Rq$/, "Rs");
      assert.ok(table.responses.includes(response), `${response} answers ${request}`);
      assert.ok(table.complex[response], `the type of ${response} is in the table`);
    }
  });

  test("record types list what the older message version lacks", () => {
    const table = requestSchemaTable();
    assert.equal(table.olderXmlVersion, "13.0");
    // 16.0 added the class to bills; 13.0 had it on invoices already.
    assert.deepEqual(table.newerElements.BillAdd, ["ClassRef"]);
    assert.equal(table.newerElements.InvoiceAdd, undefined);
  });
});
