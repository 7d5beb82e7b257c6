import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PATH, requestXml, setup, BEGIN_OPTIONS } from "./test-support.ts";

/**
 * The faults and states of issue 25: each makes the simulated application answer the way the real
 * one does in that state (ledger-protocol §2.7–2.8), and clearing it restores normal answers.
 */

async function answer(
  app: Awaited<ReturnType<typeof setup>>["app"],
  body: string,
  msgsAttrs = 'onError="stopOnError"',
): Promise<string> {
  const opened = await app.beginSession(BEGIN_OPTIONS);
  assert.ok(opened.ok);
  const result = await opened.session.processRequest(requestXml(body, msgsAttrs));
  assert.ok(result.ok);
  return result.response;
}

const status = (xml: string, rs: string): string | undefined =>
  new RegExp(`<${rs}[^>]*statusCode="(\\d+)"`).exec(xml)?.[1];

describe("faults at the open", () => {
  for (const [fault, hresult] of [
    [{ kind: "admin_required" }, "0x80040418"],
    [{ kind: "other_application_sharing" }, "0x80040422"],
  ] as const) {
    it(`${fault.kind} → ${hresult}`, async () => {
      const { app } = await setup({ seed: "empty" });
      app.setFault(fault);
      const refused = await app.beginSession(BEGIN_OPTIONS);
      assert.equal(refused.ok ? "" : refused.hresult, hresult);
      app.setFault(null);
      assert.equal((await app.beginSession(BEGIN_OPTIONS)).ok, true);
    });
  }

  it("a moved file: its old path → 0x80040406, its new path opens it; no file open in a running application → 0x80040417", async () => {
    const { app } = await setup({ seed: "empty" });
    app.moveCompanyFile(PATH, "D:\\moved.company");
    const old = await app.beginSession({ ...BEGIN_OPTIONS, companyFilePath: PATH });
    assert.equal(old.ok ? "" : old.hresult, "0x80040406");
    app.closeCompanyFile({ applicationStaysOpen: true });
    const none = await app.beginSession(BEGIN_OPTIONS);
    assert.equal(none.ok ? "" : none.hresult, "0x80040417");
    app.closeCompanyFile();
    const closed = await app.beginSession(BEGIN_OPTIONS);
    assert.equal(closed.ok ? "" : closed.hresult, "0x80040416");
    const moved = await app.beginSession({ ...BEGIN_OPTIONS, companyFilePath: "D:\\moved.company" });
    assert.equal(moved.ok ? moved.session.companyFilePath : "", "D:\\moved.company");
  });

  it("an older version installed reports message versions up to 12.0 only", async () => {
    const { app } = await setup({ seed: "empty" });
    app.installVersion("12.0");
    const opened = await app.beginSession(BEGIN_OPTIONS);
    assert.ok(opened.ok);
    const hcp = opened.session.hostCompanyPreferencesXml();
    assert.match(hcp, /<SupportedQBXMLVersion>12\.0<\/SupportedQBXMLVersion>/);
    assert.doesNotMatch(hcp, /<SupportedQBXMLVersion>13\.0<\/SupportedQBXMLVersion>/);
  });
});

describe("faults of one request", () => {
  it("feature_off answers 3250 for that feature's requests only; the rest of the set runs", async () => {
    const { app } = await setup({ seed: "empty" });
    app.setFault({ kind: "feature_off", objects: ["Estimate"] });
    const xml = await answer(app, "<EstimateQueryRq/><CustomerQueryRq/>", 'onError="continueOnError"');
    assert.equal(status(xml, "EstimateQueryRs"), "3250");
    assert.match(status(xml, "CustomerQueryRs") ?? "", /^[01]$/);
  });

  it("restricted_user answers 3260 to writes and lets reads run", async () => {
    const { app } = await setup({ seed: "empty" });
    app.setFault({ kind: "restricted_user" });
    const xml = await answer(app, "<CustomerAddRq><CustomerAdd><Name>X</Name></CustomerAdd></CustomerAddRq>");
    assert.equal(status(xml, "CustomerAddRs"), "3260");
    app.setFault(null);
    const after = await answer(app, "<CustomerQueryRq><FullName>X</FullName></CustomerQueryRq>");
    assert.doesNotMatch(after, /<CustomerRet>/, "nothing was written");
  });

  it("truncated_answer cuts the answer after its first bytes", async () => {
    const { app } = await setup({ seed: "empty" });
    app.setFault({ kind: "truncated_answer", bytes: 50 });
    assert.equal(Buffer.byteLength(await answer(app, "<CustomerQueryRq/>")), 50);
  });

  it("personal data withheld: card numbers left out, and the report says so", async () => {
    const { app } = await setup({ seed: "empty" });
    await answer(
      app,
      "<CustomerAddRq><CustomerAdd><Name>Card</Name><CreditCardInfo><CreditCardNumber>4111111111111111</CreditCardNumber></CreditCardInfo></CustomerAdd></CustomerAddRq>",
    );
    const query = "<CustomerQueryRq><FullName>Card</FullName></CustomerQueryRq>";
    assert.match(await answer(app, query), /<CreditCardNumber>4111111111111111<\/CreditCardNumber>/);
    app.setPersonalDataAccess(false);
    assert.doesNotMatch(await answer(app, query), /CreditCardNumber/);
    const opened = await app.beginSession(BEGIN_OPTIONS);
    assert.ok(opened.ok);
    assert.match(
      opened.session.hostCompanyPreferencesXml(),
      /<IsPersonalDataAccessAllowed>false<\/IsPersonalDataAccessAllowed>/,
    );
  });

  it("a control character of text edited in the window is written as a character reference", async () => {
    const { app } = await setup({ seed: "empty" });
    const added = await answer(
      app,
      "<CustomerAddRq><CustomerAdd><Name>Ctl</Name></CustomerAdd></CustomerAddRq>",
    );
    const id = /<ListID>([^<]+)<\/ListID>/.exec(added)?.[1] ?? "";
    app.companyFile(PATH).editInWindow(id, "Name", "C\u0001tl");
    const xml = await answer(app, "<CustomerQueryRq/>");
    assert.match(xml, /<Name>C&#1;tl<\/Name>/);
  });
});
