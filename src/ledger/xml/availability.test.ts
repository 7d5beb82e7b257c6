import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  LEDGER_AVAILABILITY_PATH,
  EDITION_CODE,
  UNKNOWN_FIRST_VERSION,
  availabilitySourcesIn,
  editionCode,
  deriveLedgerAvailability,
  readSample,
  renderLedgerAvailability,
} from "../../../scripts/gen-ledger-availability.ts";
import { BRANDED_VALUE, ledgerSchemaDir } from "../../../scripts/gen-ledger-schema.ts";
import { firstRefusedElement, ledgerAvailability, versionNumber, type Availability } from "./availability.ts";
import { parseDocument } from "./parse.ts";
import type { XmlElement } from "./tree.ts";

const plain = (a: Availability): { firstVersion: string | null; lacking: string[] } => ({
  firstVersion: a.firstVersion,
  lacking: [...a.lackingCountries].sort(),
});

/** Request messages written as XML (one or more `…Rq` elements). */
function messages(xml: string): XmlElement[] {
  const parsed = parseDocument(`<QBXMLMsgsRq>${xml}</QBXMLMsgsRq>`);
  assert.ok(parsed, xml);
  return [...parsed.root.children];
}

describe("the derived availability table", () => {
  test("the committed table equals a fresh derivation from the samples and XSDs (run `npm run gen:ledger-availability`)", (t) => {
    const dir = ledgerSchemaDir();
    if (!availabilitySourcesIn(dir)) {
      // CI must check for drift: a missing reference directory there is a broken setup, not a pass.
      if (process.env.CI) assert.fail(`the SDK's XSDs and sample files are not all in ${dir} (CI is set)`);
      t.skip(`the SDK's XSDs and sample files are not in ${dir}; set LEDGER_SCHEMA_DIR to check for drift`);
      return;
    }
    assert.equal(
      readFileSync(LEDGER_AVAILABILITY_PATH, "utf8"),
      renderLedgerAvailability(deriveLedgerAvailability(dir)),
    );
  });

  test("first versions come from the samples, the 14.0 sample's additions and the 16.0 schema", () => {
    const table = ledgerAvailability();
    assert.equal(table.table.unknownFirstVersion, UNKNOWN_FIRST_VERSION);
    // A sample comment (`v13.0`), the 14.0 sample's addition, and an element only 16.0's XSD has.
    assert.deepEqual(plain(table.of("InvoiceAddRq", "InvoiceLineAdd", "OptionForPriceRuleConflict")), {
      firstVersion: "13.0",
      lacking: [],
    });
    assert.equal(table.of("x", "&Form1099CategoryAccountMappingQuery", "FormType").firstVersion, "14.0");
    assert.equal(table.of("x", "Form1099CategoryAccountMappingMod", "FormType").firstVersion, "14.0");
    assert.equal(table.of("x", "BillAdd", "ClassRef").firstVersion, "16.0");
    assert.equal(table.of("x", "InvoiceAdd", "ClassRef").firstVersion, null);
    // A request message only 16.0 has, and the elements of its own types.
    assert.equal(table.ofMessage("PreferencesModRq").firstVersion, "16.0");
    assert.equal(table.ofMessage("InvoiceAddRq").firstVersion, null);
    assert.equal(table.ofMessage("LeadAddRq").firstVersion, "13.0");
  });

  test("editions: what the samples say each lacks, per context, and per request where one differs", () => {
    const table = ledgerAvailability();
    assert.deepEqual(plain(table.of("x", "InvoiceAdd", "IsTaxIncluded")), {
      firstVersion: "6.0",
      lacking: ["US"],
    });
    assert.deepEqual(plain(table.of("x", "VendorAdd", "IsVendorEligibleFor1099")).lacking, ["CA", "UK"]);
    assert.deepEqual(plain(table.ofMessage("ItemSitesQueryRq")), {
      firstVersion: "10.0",
      lacking: ["AU", "CA", "UK"],
    });
    // Item lines are shared by purchases; only bills and item receipts link them to orders.
    assert.deepEqual(plain(table.of("VendorCreditAddRq", "ItemLineAdd", "LinkToTxn")).lacking, [
      "AU",
      "CA",
      "UK",
      "US",
    ]);
    assert.deepEqual(plain(table.of("BillAddRq", "ItemLineAdd", "LinkToTxn")), {
      firstVersion: "4.0",
      lacking: [],
    });
  });

  test("the committed table names no product brand (editions are named by country)", () => {
    const text = readFileSync(LEDGER_AVAILABILITY_PATH, "utf8");
    assert.doesNotMatch(text, EDITION_CODE);
    assert.doesNotMatch(text, BRANDED_VALUE);
  });
});

describe("reading a sample file's comments", () => {
  test("a comment on an element's line annotates it; a BEGIN OR heading annotates every alternative until END OR", () => {
    const dir = mkdtempSync(join(tmpdir(), "ledger-sample-"));
    try {
      const file = join(dir, "sample.xml");
      writeFileSync(
        file,
        [
          `<?xml version="1.0" ?>`,
          `<QBXML>`,
          `  <QBXMLMsgsRq onError = "ENUMTYPE">`,
          `    <ThingAddRq requestID = "UUIDTYPE"> <!-- not in ${editionCode("UK")}|${editionCode(null)}, v8.0 -->`,
          `      <ThingAdd>`,
          `        <Name>STRTYPE</Name>                 <!-- max length = 31 for ${editionCode("US")}|${editionCode("CA")} -->`,
          `        <Memo>STRTYPE</Memo>                 <!-- opt, not in ${editionCode("US")}, v6.0 -->`,
          `        <!-- Kind may have one of the following values: A, B -->`,
          `        <Kind>ENUMTYPE</Kind>`,
          `        <!-- v11.0, BEGIN OR: You may optionally have Serial OR Lot -->`,
          `        <Serial>STRTYPE</Serial>             <!-- opt, not in ${editionCode("AU")} -->`,
          `        <!-- OR -->`,
          `        <Lot>STRTYPE</Lot>`,
          `        <!-- END OR -->`,
          `        <After>STRTYPE</After>`,
          `        <Ref>                                <!-- opt, v3.0 -->`,
          `          <ListID>IDTYPE</ListID>`,
          `        </Ref>`,
          `      </ThingAdd>`,
          `    </ThingAddRq>`,
          `  </QBXMLMsgsRq>`,
          `</QBXML>`,
        ].join("\n"),
      );
      const read = readSample(file);
      const at = (path: string): unknown => {
        const a = read.get(path);
        return a && { version: a.version, lacking: [...a.lacking].sort() };
      };
      assert.deepEqual(at("ThingAddRq"), { version: "8.0", lacking: ["UK"] });
      assert.deepEqual(at("ThingAddRq/ThingAdd/Name"), { version: null, lacking: [] });
      assert.deepEqual(at("ThingAddRq/ThingAdd/Memo"), { version: "6.0", lacking: ["US"] });
      assert.deepEqual(at("ThingAddRq/ThingAdd/Kind"), { version: null, lacking: [] });
      assert.deepEqual(at("ThingAddRq/ThingAdd/Serial"), { version: "11.0", lacking: ["AU"] });
      assert.deepEqual(at("ThingAddRq/ThingAdd/Lot"), { version: "11.0", lacking: [] });
      assert.deepEqual(at("ThingAddRq/ThingAdd/After"), { version: null, lacking: [] });
      assert.deepEqual(at("ThingAddRq/ThingAdd/Ref"), { version: "3.0", lacking: [] });
      assert.deepEqual(at("ThingAddRq/ThingAdd/Ref/ListID"), { version: null, lacking: [] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the first element a connection cannot take", () => {
  const form1099 = `<Form1099CategoryAccountMappingQueryRq><FormType>1099-MISC</FormType></Form1099CategoryAccountMappingQueryRq>`;

  test("an element newer than the negotiated version, with the version that has it", () => {
    assert.deepEqual(
      firstRefusedElement(messages(`<HostQueryRq/>${form1099}`), { xmlVersion: "13.0", country: "US" }),
      {
        code: "LEDGER_FIELD_UNSUPPORTED_BY_VERSION",
        steps: [
          {
            name: "Form1099CategoryAccountMappingQueryRq",
            typeKey: "Form1099CategoryAccountMappingQueryRq",
            index: 0,
            count: 1,
          },
          { name: "FormType", typeKey: "str", index: 0, count: 1 },
        ],
        elementPath: "Form1099CategoryAccountMappingQueryRq/FormType",
        minimumXmlVersion: "14.0",
        xmlVersion: "13.0",
      },
    );
    for (const version of ["14.0", "15.0", "16.0"]) {
      assert.equal(
        firstRefusedElement(messages(form1099), { xmlVersion: version, country: "US" }),
        null,
        version,
      );
    }
    // A whole message only 16.0 has.
    const preferences = messages(`<PreferencesModRq><PreferencesMod></PreferencesMod></PreferencesModRq>`);
    assert.equal(
      firstRefusedElement(preferences, { xmlVersion: "15.0", country: null })?.elementPath,
      "PreferencesModRq",
    );
  });

  test("an element the company file's edition lacks, named by its path with repeated names indexed", () => {
    const refused = firstRefusedElement(
      messages(
        `<InvoiceAddRq><InvoiceAdd><CustomerRef><ListID>1</ListID></CustomerRef>` +
          `<InvoiceLineAdd><Desc>a</Desc></InvoiceLineAdd>` +
          `<InvoiceLineAdd><Desc>b</Desc><TaxAmount>1.00</TaxAmount></InvoiceLineAdd>` +
          `</InvoiceAdd></InvoiceAddRq>`,
      ),
      { xmlVersion: "16.0", country: "ca" },
    );
    assert.equal(refused?.code, "LEDGER_REGION_UNSUPPORTED");
    assert.equal(refused.elementPath, "InvoiceAddRq/InvoiceAdd/InvoiceLineAdd[2]/TaxAmount");
    assert.equal(refused.code === "LEDGER_REGION_UNSUPPORTED" ? refused.country : null, "CA");
    assert.equal(
      firstRefusedElement(messages(`<ItemSitesQueryRq/>`), { xmlVersion: "16.0", country: "UK" })
        ?.elementPath,
      "ItemSitesQueryRq",
    );
    assert.equal(
      firstRefusedElement(messages(`<ItemSitesQueryRq/>`), { xmlVersion: "16.0", country: "US" }),
      null,
    );
  });

  test("the same element is judged in its request: item lines link to orders on bills, not on vendor credits", () => {
    const line = `<ItemLineAdd><ItemRef><ListID>1</ListID></ItemRef><LinkToTxn><TxnID>5</TxnID><TxnLineID>6</TxnLineID></LinkToTxn></ItemLineAdd>`;
    const us = { xmlVersion: "16.0", country: "US" };
    assert.equal(
      firstRefusedElement(
        messages(
          `<BillAddRq><BillAdd><VendorRef><ListID>1</ListID></VendorRef>${line}</BillAdd></BillAddRq>`,
        ),
        us,
      ),
      null,
    );
    assert.equal(
      firstRefusedElement(
        messages(
          `<VendorCreditAddRq><VendorCreditAdd><VendorRef><ListID>1</ListID></VendorRef>${line}</VendorCreditAdd></VendorCreditAddRq>`,
        ),
        us,
      )?.elementPath,
      "VendorCreditAddRq/VendorCreditAdd/ItemLineAdd/LinkToTxn",
    );
  });

  test("a connection that has not reported its version or edition is not gated on it", () => {
    assert.equal(firstRefusedElement(messages(form1099), { xmlVersion: null, country: "US" }), null);
    assert.equal(
      firstRefusedElement(messages(`<ItemSitesQueryRq/>`), { xmlVersion: "13.0", country: null }),
      null,
    );
    assert.equal(versionNumber("16.0"), 16000);
    assert.equal(versionNumber("x"), null);
  });
});
