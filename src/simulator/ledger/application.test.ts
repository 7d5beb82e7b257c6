import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SimulatedLedgerApplication } from "./application.ts";
import { PATH, requestXml, setup, testClock, BEGIN_OPTIONS } from "./test-support.ts";
import { parseDocument } from "../../ledger/xml/parse.ts";
import { childText, childrenNamed } from "../../ledger/xml/tree.ts";

const QUERY = requestXml(`<AccountQueryRq requestID="1"><MaxReturned>1</MaxReturned></AccountQueryRq>`);

describe("beginSession faults", () => {
  const cases = [
    [{ kind: "app_not_running" }, "0x80040408", "Could not start the ledger application."],
    [{ kind: "modal_dialog" }, "0x80040414", /^A modal dialog box is showing/],
    [{ kind: "file_mode_conflict" }, "0x80040410", /currently open in a mode other than/],
    [{ kind: "access_not_granted" }, "0x8004041A", /does not have permission to access/],
  ] as const;
  for (const [fault, hresult, message] of cases) {
    it(`${fault.kind} → ${hresult}`, async () => {
      const { app } = await setup({ seed: "empty" });
      app.setFault(fault);
      const result = await app.beginSession(BEGIN_OPTIONS);
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.equal(result.hresult, hresult);
      if (typeof message === "string") assert.equal(result.message, message);
      else assert.match(result.message, message);
      app.setFault(null);
      assert.equal((await app.beginSession(BEGIN_OPTIONS)).ok, true);
    });
  }

  it('wrong_company_file: a different path → 0x8004040A, "" uses the other open file', async () => {
    const { app } = await setup({ seed: "empty" });
    app.createCompanyFile("C:\\Other\\other.company", { companyName: "Other Co" });
    app.setFault({ kind: "wrong_company_file", path: "C:\\Other\\other.company" });
    const refused = await app.beginSession({ ...BEGIN_OPTIONS, companyFilePath: PATH });
    assert.equal(refused.ok ? "" : refused.hresult, "0x8004040A");
    const other = await app.beginSession({ ...BEGIN_OPTIONS, companyFilePath: "" });
    assert.equal(other.ok ? other.session.companyFilePath : "", "C:\\Other\\other.company");
  });

  it('an unknown path → 0x80040406; "" with no open file → 0x80040416', async () => {
    const app = new SimulatedLedgerApplication({ clock: testClock() });
    const none = await app.beginSession(BEGIN_OPTIONS);
    assert.equal(none.ok ? "" : none.hresult, "0x80040416");
    app.createCompanyFile(PATH, { companyName: "A" });
    const unknown = await app.beginSession({ ...BEGIN_OPTIONS, companyFilePath: "C:\\nope.company" });
    assert.equal(unknown.ok ? "" : unknown.hresult, "0x80040406");
    const byPath = await app.beginSession({ ...BEGIN_OPTIONS, companyFilePath: PATH.toUpperCase() });
    assert.equal(byPath.ok, true, "paths compare case-insensitively");
  });
});

describe("processRequest faults", () => {
  it("modal_dialog → 0x80040414", async () => {
    const { app, session } = await setup({ seed: "empty" });
    app.setFault({ kind: "modal_dialog" });
    const result = await session.processRequest(QUERY);
    assert.equal(result.ok ? "" : result.hresult, "0x80040414");
  });

  it("slow_processing waits through the injected sleep", async () => {
    const waits: number[] = [];
    const { app, session } = await setup({
      seed: "empty",
      sleep: (ms) => (waits.push(ms), Promise.resolve()),
    });
    app.setFault({ kind: "slow_processing", ms: 30_000 });
    const result = await session.processRequest(QUERY);
    assert.equal(result.ok, true);
    assert.deepEqual(waits, [30_000]);
  });

  it("not_responding holds the answer until the fault is cleared", async () => {
    const { app, session } = await setup({ seed: "empty" });
    app.setFault({ kind: "not_responding" });
    let settled = false;
    const pending = session.processRequest(QUERY).then((r) => ((settled = true), r));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false);
    app.setFault({ kind: "slow_processing", ms: 0 });
    app.setFault(null);
    const result = await pending;
    assert.equal(result.ok, true);
  });
});

describe("host / company / preferences", () => {
  it("builds the HCP document like sample 11 and stamps FileID once per owner", async () => {
    const { app, file } = await setup({ seed: "empty", xmlVersion: "16.0", country: "CA" });
    const first = await app.beginSession(BEGIN_OPTIONS);
    assert.ok(first.ok);
    assert.equal(first.session.country, "CA");
    assert.deepEqual(first.session.xmlVersion, { major: 16, minor: 0 });
    const xml = first.session.hostCompanyPreferencesXml();
    assert.ok(
      xml.startsWith(
        '<?xml version="1.0" ?>\n<QBXML>\n<QBXMLMsgsRs>\n<HostQueryRs requestID="0" statusCode="0" statusSeverity="Info" statusMessage="Status OK">\n<HostRet>\n',
      ),
    );
    const doc = parseDocument(xml);
    assert.ok(doc !== undefined);
    const msgs = doc.root.children[0];
    assert.deepEqual(
      msgs?.children.map((c) => c.name),
      ["HostQueryRs", "CompanyQueryRs", "PreferencesQueryRs"],
    );
    const host = msgs?.children[0]?.children[0];
    const versions =
      host === undefined ? [] : childrenNamed(host, "SupportedQBXMLVersion").map((v) => v.text);
    assert.equal(versions.at(-1), "16.0");
    assert.equal(versions[0], "1.0");
    const company = msgs?.children[1]?.children[0];
    assert.equal(company === undefined ? "" : childText(company, "CompanyName"), "Sample Co");
    const dataExt = company === undefined ? [] : childrenNamed(company, "DataExtRet");
    assert.deepEqual(
      dataExt.map((d) => [
        childText(d, "OwnerID"),
        childText(d, "DataExtName"),
        childText(d, "DataExtValue"),
      ]),
      [["{6B29FC40-CA47-1067-B31D-00DD010662DA}", "FileID", "{FILE-1}"]],
    );
    const stamps = (owner: string): string[] =>
      file.companyDataExts.filter((d) => d.ownerId === owner).map((d) => d.value);
    await app.beginSession({ ...BEGIN_OPTIONS, fileId: "{FILE-2}" });
    assert.deepEqual(
      stamps("{6B29FC40-CA47-1067-B31D-00DD010662DA}"),
      ["{FILE-1}"],
      "an existing stamp is kept",
    );
    await app.beginSession({
      ...BEGIN_OPTIONS,
      ownerId: "{7C39FC40-CA47-1067-B31D-00DD010662DB}",
      stampFileId: false,
    });
    assert.deepEqual(stamps("{7C39FC40-CA47-1067-B31D-00DD010662DB}"), [], "no stamp without stampFileId");
  });

  it("answers CompanyQueryRq with the owner's DataExtRet", async () => {
    const { app } = await setup({ seed: "empty" });
    const begun = await app.beginSession(BEGIN_OPTIONS);
    assert.ok(begun.ok);
    const result = await begun.session.processRequest(
      requestXml(
        `<HostQueryRq requestID="h" /><CompanyQueryRq requestID="c"><OwnerID>{6B29FC40-CA47-1067-B31D-00DD010662DA}</OwnerID></CompanyQueryRq>`,
      ),
    );
    assert.ok(result.ok);
    assert.match(result.response, /<HostQueryRs requestID="h" statusCode="0"/);
    assert.match(
      result.response,
      /<DataExtName>FileID<\/DataExtName>\n<DataExtType>STR255TYPE<\/DataExtType>\n<DataExtValue>\{FILE-1\}<\/DataExtValue>/,
    );
  });
});
