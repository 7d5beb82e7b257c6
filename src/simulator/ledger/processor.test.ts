import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { requestXml, names, send, setup, statusOf } from "./test-support.ts";
import { attr, child, childText } from "../../ledger/xml/tree.ts";

const ADD_CUSTOMER = (name: string, requestId = "1") =>
  `<CustomerAddRq requestID="${requestId}"><CustomerAdd><Name>${name}</Name><CompanyName>${name}</CompanyName><BillAddress><Addr1>123 Main St.</Addr1><City>Mountain View</City><State>CA</State><PostalCode>94566</PostalCode></BillAddress><Email>joe@example.com</Email><CreditLimit>2000</CreditLimit></CustomerAdd></CustomerAddRq>`;

describe("customer add / query / mod", () => {
  it("round-trips in the application's response format", async () => {
    const { session } = await setup();
    const added = await send(session, ADD_CUSTOMER("Joes Garage &amp; Sons"));
    assert.match(
      added.raw,
      /^<\?xml version="1.0" \?>\n<QBXML>\n<QBXMLMsgsRs>\n<CustomerAddRs requestID="1" statusCode="0" statusSeverity="Info" statusMessage="Status OK">\n<CustomerRet>\n<ListID>/,
    );
    assert.match(added.raw, /<Name>Joes Garage &amp; Sons<\/Name>/);
    assert.ok(
      added.raw.endsWith("</CustomerRs>\n</QBXMLMsgsRs>\n</QBXML>\n".replace("CustomerRs", "CustomerAddRs")),
    );
    const ret = child(added.rs[0] ?? added.msgs, "CustomerRet");
    // Element order as in sample 13 (CustomerAddRs).
    assert.deepEqual(names(ret), [
      "ListID",
      "TimeCreated",
      "TimeModified",
      "EditSequence",
      "Name",
      "FullName",
      "IsActive",
      "Sublevel",
      "CompanyName",
      "BillAddress",
      "BillAddressBlock",
      "Email",
      "Balance",
      "TotalBalance",
      "CreditLimit",
      "JobStatus",
    ]);
    assert.ok(ret !== undefined);
    assert.equal(childText(ret, "CreditLimit"), "2000.00");
    assert.equal(childText(ret, "Balance"), "0.00");
    const listId = childText(ret, "ListID") ?? "";
    const editSequence = childText(ret, "EditSequence") ?? "";

    const queried = await send(
      session,
      `<CustomerQueryRq requestID="q"><ListID>${listId}</ListID></CustomerQueryRq>`,
    );
    assert.deepEqual(statusOf(queried.rs[0]), { code: "0", severity: "Info", message: "Status OK" });
    assert.equal(
      childText(child(queried.rs[0] ?? queried.msgs, "CustomerRet") ?? queried.msgs, "Name"),
      "Joes Garage & Sons",
    );

    const modded = await send(
      session,
      `<CustomerModRq requestID="m"><CustomerMod><ListID>${listId}</ListID><EditSequence>${editSequence}</EditSequence><Phone>555-1234</Phone></CustomerMod></CustomerModRq>`,
    );
    assert.equal(statusOf(modded.rs[0]).code, "0");
    const modRet = child(modded.rs[0] ?? modded.msgs, "CustomerRet");
    assert.ok(modRet !== undefined);
    assert.equal(childText(modRet, "Phone"), "555-1234");
    assert.equal(childText(modRet, "Email"), "joe@example.com", "fields not in the Mod are kept");
    assert.notEqual(childText(modRet, "EditSequence"), editSequence);
  });

  it("3200: a stale EditSequence fails and still returns the current Ret", async () => {
    const { session } = await setup();
    const added = await send(session, ADD_CUSTOMER("Stale Test"));
    const ret = child(added.rs[0] ?? added.msgs, "CustomerRet") ?? added.msgs;
    const listId = childText(ret, "ListID") ?? "";
    const first = childText(ret, "EditSequence") ?? "";
    await send(
      session,
      `<CustomerModRq><CustomerMod><ListID>${listId}</ListID><EditSequence>${first}</EditSequence><Phone>1</Phone></CustomerMod></CustomerModRq>`,
    );
    const stale = await send(
      session,
      `<CustomerModRq requestID="0"><CustomerMod><ListID>${listId}</ListID><EditSequence>${first}</EditSequence><Phone>2</Phone></CustomerMod></CustomerModRq>`,
    );
    assert.ok(
      stale.raw.includes(
        `<CustomerModRs requestID="0" statusCode="3200" statusSeverity="Error" statusMessage="The provided edit sequence &quot;${first}&quot; is out-of-date. ">`,
      ),
      stale.raw,
    );
    const current = child(stale.rs[0] ?? stale.msgs, "CustomerRet");
    assert.ok(current !== undefined, "3200 carries the current Ret");
    assert.equal(childText(current, "Phone"), "1");
    assert.notEqual(childText(current, "EditSequence"), first);
  });

  it("3100: duplicate names are refused (case-insensitive, full name)", async () => {
    const { session, file } = await setup();
    const before = file.count("Customer");
    const response = await send(
      session,
      `${ADD_CUSTOMER("initech", "0")}${ADD_CUSTOMER("New One", "1")}`,
      'onError="continueOnError"',
    );
    assert.equal(
      response.raw.includes(
        '<CustomerAddRs requestID="0" statusCode="3100" statusSeverity="Error" statusMessage="The name &quot;initech&quot; of the list element is already in use." />',
      ),
      true,
      response.raw,
    );
    assert.equal(statusOf(response.rs[1]).code, "0");
    assert.equal(file.count("Customer"), before + 1);
  });

  it("3120: a query by unknown ListID fails; 500: unknown FullName warns", async () => {
    const { session } = await setup();
    const byId = await send(
      session,
      `<CustomerQueryRq><ListID>8000001B-1405768916</ListID></CustomerQueryRq>`,
    );
    assert.equal(
      byId.raw,
      '<?xml version="1.0" ?>\n<QBXML>\n<QBXMLMsgsRs>\n<CustomerQueryRs statusCode="3120" statusSeverity="Error" statusMessage="Object &quot;8000001B-1405768916&quot; specified in the request cannot be found.  Ledger error message: Invalid argument.  The specified record does not exist in the list." />\n</QBXMLMsgsRs>\n</QBXML>\n',
    );
    const byName = await send(
      session,
      `<CustomerQueryRq><FullName>Initech</FullName><FullName>bleech</FullName></CustomerQueryRq>`,
    );
    assert.equal(statusOf(byName.rs[0]).code, "500");
    assert.equal(statusOf(byName.rs[0]).severity, "Warn");
    assert.equal(byName.rs[0]?.children.length, 1, "found records are still returned");
  });

  it("status 1 when a filter matches nothing", async () => {
    const { session } = await setup();
    const response = await send(
      session,
      `<CustomerQueryRq requestID="7"><NameFilter><MatchCriterion>StartsWith</MatchCriterion><Name>zzz</Name></NameFilter></CustomerQueryRq>`,
    );
    assert.deepEqual(statusOf(response.rs[0]), {
      code: "1",
      severity: "Info",
      message: "A query request did not find a matching object in the ledger",
    });
    assert.equal(response.rs[0]?.children.length, 0);
  });

  it("filters: ActiveStatus, NameFilter, NameRangeFilter, MaxReturned, modified dates", async () => {
    const { session, clock } = await setup();
    const all = await send(session, `<CustomerQueryRq><ActiveStatus>All</ActiveStatus></CustomerQueryRq>`);
    assert.equal(all.rs[0]?.children.length, 6);
    const starts = await send(
      session,
      `<CustomerQueryRq><NameFilter><MatchCriterion>StartsWith</MatchCriterion><Name>acme</Name></NameFilter></CustomerQueryRq>`,
    );
    assert.equal(starts.rs[0]?.children.length, 2);
    const range = await send(
      session,
      `<CustomerQueryRq><NameRangeFilter><FromName>G</FromName><ToName>J</ToName></NameRangeFilter></CustomerQueryRq>`,
    );
    assert.deepEqual(
      range.rs[0]?.children.map((c) => childText(c, "Name")),
      ["Globex Inc", "Initech"],
    );
    const max = await send(session, `<CustomerQueryRq><MaxReturned>3</MaxReturned></CustomerQueryRq>`);
    assert.equal(max.rs[0]?.children.length, 3);
    clock.advance(3600);
    await send(session, ADD_CUSTOMER("Later Customer"));
    const recent = await send(
      session,
      `<CustomerQueryRq><FromModifiedDate>2026-01-15T07:30:00</FromModifiedDate></CustomerQueryRq>`,
    );
    assert.deepEqual(
      recent.rs[0]?.children.map((c) => childText(c, "Name")),
      ["Later Customer"],
    );
    const early = await send(
      session,
      `<CustomerQueryRq><ToModifiedDate>2026-01-15T07:00:00-05:00</ToModifiedDate></CustomerQueryRq>`,
    );
    assert.equal(early.rs[0]?.children.length, 6);
  });

  it("inactive customers are hidden by default", async () => {
    const { session } = await setup();
    const found = await send(session, `<CustomerQueryRq><FullName>Initech</FullName></CustomerQueryRq>`);
    const ret = found.rs[0]?.children[0] ?? found.msgs;
    await send(
      session,
      `<CustomerModRq><CustomerMod><ListID>${childText(ret, "ListID") ?? ""}</ListID><EditSequence>${childText(ret, "EditSequence") ?? ""}</EditSequence><IsActive>false</IsActive></CustomerMod></CustomerModRq>`,
    );
    const active = await send(session, `<CustomerQueryRq />`);
    assert.equal(active.rs[0]?.children.length, 5);
    const inactive = await send(
      session,
      `<CustomerQueryRq><ActiveStatus>InactiveOnly</ActiveStatus></CustomerQueryRq>`,
    );
    assert.equal(inactive.rs[0]?.children.length, 1);
  });

  it("elements are refused by the first version that has them: a 14.0 element under 13.0, not under 14.0", async () => {
    const form = `<Form1099CategoryAccountMappingQueryRq><FormType>1099-MISC</FormType></Form1099CategoryAccountMappingQueryRq>`;
    const app = await setup({ xmlVersion: "14.0" });
    const refused = await app.session.processRequest(requestXml(form, 'onError="stopOnError"', "13.0"));
    assert.equal(refused.ok ? "ok" : refused.hresult, "0x80040400");
    const accepted = await app.session.processRequest(requestXml(form, 'onError="stopOnError"', "14.0"));
    assert.ok(accepted.ok, accepted.ok ? "" : accepted.message);
    assert.match(accepted.response, /<Form1099CategoryAccountMappingQueryRs statusCode="/);
    // 16.0 elements stay refused by a 14.0 message set.
    const bill = `<BillAddRq><BillAdd><VendorRef><FullName>Paper Supply Co</FullName></VendorRef><ClassRef><FullName>East</FullName></ClassRef></BillAdd></BillAddRq>`;
    const newer = await app.session.processRequest(requestXml(bill, 'onError="stopOnError"', "14.0"));
    assert.equal(newer.ok ? "ok" : newer.hresult, "0x80040400");
  });

  it("an edition refuses what it lacks like an unknown element, and applies nothing", async () => {
    const vendor = (name: string) =>
      `<VendorAddRq><VendorAdd><Name>${name}</Name><IsVendorEligibleFor1099>true</IsVendorEligibleFor1099></VendorAdd></VendorAddRq>`;
    for (const country of ["UK", "CA"] as const) {
      const app = await setup({ xmlVersion: "16.0", country });
      const before = app.file.count("Vendor");
      const refused = await app.session.processRequest(
        requestXml(vendor("Abroad"), 'onError="stopOnError"', "16.0"),
      );
      assert.equal(refused.ok ? "ok" : refused.hresult, "0x80040400", country);
      assert.equal(app.file.count("Vendor"), before);
      assert.equal(app.session.country, country);
    }
    const us = await setup({ xmlVersion: "16.0", country: "US" });
    const accepted = await us.session.processRequest(
      requestXml(vendor("At Home"), 'onError="stopOnError"', "16.0"),
    );
    assert.ok(accepted.ok && accepted.response.includes('<VendorAddRs statusCode="0"'));
    // What the US edition lacks (tax included in amounts) is refused there.
    const invoice = `<InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>Abercrombie, Kristy</FullName></CustomerRef><IsTaxIncluded>true</IsTaxIncluded></InvoiceAdd></InvoiceAddRq>`;
    const taxIncluded = await us.session.processRequest(requestXml(invoice, 'onError="stopOnError"', "16.0"));
    assert.equal(taxIncluded.ok ? "ok" : taxIncluded.hresult, "0x80040400");
  });

  it("an element newer than the message version is refused; the newer version accepts it", async () => {
    const bill = `<BillAddRq><BillAdd><VendorRef><FullName>Paper Supply Co</FullName></VendorRef><ClassRef><FullName>East</FullName></ClassRef></BillAdd></BillAddRq>`;
    const older = await setup({ xmlVersion: "16.0" });
    const before = older.file.count("Bill");
    const refused = await older.session.processRequest(requestXml(bill));
    assert.equal(refused.ok ? "ok" : refused.hresult, "0x80040400");
    assert.equal(older.file.count("Bill"), before);
    const accepted = await older.session.processRequest(
      requestXml(
        `<ClassAddRq><ClassAdd><Name>East</Name></ClassAdd></ClassAddRq>${bill}`,
        'onError="stopOnError"',
        "16.0",
      ),
    );
    assert.ok(
      accepted.ok && accepted.response.includes('<BillAddRs statusCode="0"'),
      accepted.ok ? accepted.response : "",
    );
    assert.equal(older.file.count("Bill"), before + 1);
  });

  it("jobs get Parent:Child full names and Sublevel; 3140 for an unknown parent", async () => {
    const { session } = await setup();
    const job = await send(
      session,
      `<CustomerAddRq><CustomerAdd><Name>Phase 2</Name><ParentRef><FullName>Acme Corporation:Website Redesign</FullName></ParentRef></CustomerAdd></CustomerAddRq>`,
    );
    const ret = child(job.rs[0] ?? job.msgs, "CustomerRet") ?? job.msgs;
    assert.equal(childText(ret, "FullName"), "Acme Corporation:Website Redesign:Phase 2");
    assert.equal(childText(ret, "Sublevel"), "2");
    const bad = await send(
      session,
      `<CustomerAddRq><CustomerAdd><Name>Orphan</Name><ParentRef><FullName>Nobody</FullName></ParentRef></CustomerAdd></CustomerAddRq>`,
    );
    assert.equal(statusOf(bad.rs[0]).code, "3140");
  });

  it("IncludeRetElement trims the Ret", async () => {
    const { session } = await setup();
    const response = await send(
      session,
      `<CustomerQueryRq><FullName>Initech</FullName><IncludeRetElement>ListID</IncludeRetElement><IncludeRetElement>Name</IncludeRetElement></CustomerQueryRq>`,
    );
    assert.deepEqual(names(response.rs[0]?.children[0]), ["ListID", "Name"]);
  });
});

describe("message sets", () => {
  it("stopOnError skips the rest; continueOnError runs everything; requestIDs are echoed", async () => {
    const { session, file } = await setup();
    const before = file.count("Customer");
    const body = `${ADD_CUSTOMER("A1", "r1")}${ADD_CUSTOMER("Initech", "r2")}${ADD_CUSTOMER("A3", "r3")}`;
    const stopped = await send(session, body, 'onError="stopOnError"');
    assert.deepEqual(
      stopped.rs.map((rs) => [attr(rs, "requestID"), attr(rs, "statusCode")]),
      [
        ["r1", "0"],
        ["r2", "3100"],
      ],
    );
    assert.equal(file.count("Customer"), before + 1);
    const body2 = `${ADD_CUSTOMER("B1", "s1")}${ADD_CUSTOMER("Initech", "s2")}${ADD_CUSTOMER("B3", "s3")}`;
    const continued = await send(session, body2, 'onError="continueOnError"');
    assert.deepEqual(
      continued.rs.map((rs) => [attr(rs, "requestID"), attr(rs, "statusCode")]),
      [
        ["s1", "0"],
        ["s2", "3100"],
        ["s3", "0"],
      ],
    );
    assert.equal(file.count("Customer"), before + 3);
  });

  it("warnings do not stop a stopOnError set", async () => {
    const { session } = await setup();
    const response = await send(
      session,
      `<CustomerQueryRq requestID="a"><FullName>nope</FullName></CustomerQueryRq><CustomerQueryRq requestID="b"><FullName>Initech</FullName></CustomerQueryRq>`,
    );
    assert.deepEqual(
      response.rs.map((rs) => attr(rs, "statusCode")),
      ["500", "0"],
    );
  });

  for (const [label, xml] of [
    ["malformed XML", requestXml(`${ADD_CUSTOMER("Never")}<CustomerAddRq>`)],
    [
      "an out-of-order element",
      requestXml(
        `${ADD_CUSTOMER("Never")}<CustomerAddRq><CustomerAdd><CompanyName>X</CompanyName><Name>Never2</Name></CustomerAdd></CustomerAddRq>`,
      ),
    ],
    [
      "an unknown element",
      requestXml(
        `${ADD_CUSTOMER("Never")}<CustomerAddRq><CustomerAdd><Name>Never2</Name><Colour>red</Colour></CustomerAdd></CustomerAddRq>`,
      ),
    ],
    [
      "a request type the schema does not have",
      requestXml(`${ADD_CUSTOMER("Never")}<GadgetAddRq><GadgetAdd><Name>V</Name></GadgetAdd></GadgetAddRq>`),
    ],
    ["a version higher than supported", requestXml(ADD_CUSTOMER("Never"), 'onError="stopOnError"', "16.0")],
    ["a missing onError", requestXml(ADD_CUSTOMER("Never"), "")],
    [
      "a request newer than the message version",
      requestXml(
        `${ADD_CUSTOMER("Never")}<PreferencesModRq><PreferencesMod></PreferencesMod></PreferencesModRq>`,
      ),
    ],
    [
      "a bad amount",
      requestXml(
        `<CustomerAddRq><CustomerAdd><Name>Never</Name><CreditLimit>lots</CreditLimit></CustomerAdd></CustomerAddRq>`,
      ),
    ],
  ] as const) {
    it(`rejects ${label} with 0x80040400 and applies nothing`, async () => {
      const { session, file } = await setup();
      const before = file.count("Customer");
      const result = await session.processRequest(xml);
      assert.deepEqual(result, {
        ok: false,
        hresult: "0x80040400",
        message: "The ledger application found an error when parsing the provided XML text stream.",
      });
      assert.equal(file.count("Customer"), before);
    });
  }

  it("accepts version 16.0 when the application advertises it", async () => {
    const { session } = await setup({ xmlVersion: "16.0" });
    const result = await session.processRequest(
      requestXml(
        `<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>`,
        'onError="stopOnError"',
        "16.0",
      ),
    );
    assert.equal(result.ok, true);
  });

  it("responseData includeNone returns statuses only", async () => {
    const { session, file } = await setup();
    const response = await send(
      session,
      ADD_CUSTOMER("Quiet"),
      'onError="stopOnError" responseData="includeNone"',
    );
    assert.equal(statusOf(response.rs[0]).code, "0");
    assert.equal(response.rs[0]?.children.length, 0);
    assert.equal(file.count("Customer"), 7);
  });
});
