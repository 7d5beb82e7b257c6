import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { findReference, needReference } from "../testing/references.ts";
import { QwcParseError, parseQwc, registrationKey, type QwcDocument } from "./qwc.ts";

// Real registration files are read in place: they are research material, not repository fixtures.
// The folder is found by name so that no vendor name has to appear in our sources.
function qwcDir(t: TestContext): string | null {
  return needReference(t, {
    what: "the reference registration files (qwc/)",
    path: process.env["LEDGER_CONNECTOR_QWC_DIR"] ?? findReference("qwc"),
    hint: "set LEDGER_CONNECTOR_QWC_DIR",
  });
}

function referenceFiles(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.endsWith(".qwc"));
}

function referenceWhere(dir: string, predicate: (document: QwcDocument) => boolean): QwcDocument {
  const found = referenceFiles(dir)
    .map((name) => parseQwc(readFileSync(join(dir, name), "utf8")))
    .find(predicate);
  assert.ok(found, "no matching reference .qwc");
  return found;
}

void describe("parseQwc on the reference files", () => {
  void it("parses every reference file with all required fields", (t) => {
    const dir = qwcDir(t);
    if (!dir) return;
    const files = referenceFiles(dir);
    assert.ok(files.length >= 6);
    for (const name of files) {
      const document = parseQwc(readFileSync(join(dir, name), "utf8"));
      assert.ok(document.appName.length > 0, name);
      assert.ok(document.appUrl.startsWith("http"), name);
      assert.match(document.ownerId, /^\{[0-9A-Fa-f-]{36}\}$/, name);
      assert.match(document.fileId, /^\{[0-9A-Fa-f-]{36}\}$/, name);
      assert.equal(document.qbType, "QBFS", name);
    }
  });

  void it("reads the programmer's guide listing 4-1 exactly", (t) => {
    const dir = qwcDir(t);
    if (!dir) return;
    assert.deepEqual(
      referenceWhere(dir, (document) => document.appName === "WCWebService1"),
      {
        appName: "WCWebService1",
        appId: "",
        appUrl: "http://localhost/WCWebService/WCWebService.asmx",
        appDescription: "A short description for WCWebService1",
        appSupport: "http://developer.intuit.com",
        userName: "iqbal1",
        ownerId: "{57F3B9B1-86F1-4fcc-B1EE-566DE1813D20}",
        fileId: "{90A44FB5-33D9-4815-AC85-BC87A7E7D1EB}",
        qbType: "QBFS",
        scheduler: { unit: "minutes", value: 2, intervalSeconds: 120 },
      },
    );
  });

  void it("reads indented files with IsReadOnly, and optional Style/AuthFlags/CertURL/AppID", (t) => {
    const dir = qwcDir(t);
    if (!dir) return;
    const indented = referenceWhere(dir, (document) => document.scheduler?.value === 1);
    assert.ok(indented.appUrl.endsWith("example_server_import_invoices.php"));
    assert.equal(indented.isReadOnly, false);
    assert.deepEqual(indented.scheduler, { unit: "minutes", value: 1, intervalSeconds: 60 });

    const sample = referenceWhere(dir, (document) => document.certUrl !== undefined);
    assert.equal(sample.appId, "IDNWS2");
    assert.equal(sample.certUrl, "http://localhost/WCECommSample/service/WCECommService.asmx");
    assert.equal(sample.style, "Document");
    assert.equal(sample.authFlags, "0xF");
    assert.equal(sample.scheduler, undefined);
    assert.equal(sample.isReadOnly, undefined);
  });
});

const MINIMAL = (extra: string): string =>
  `<?xml version="1.0"?><QBWCXML><AppName>A &amp; B</AppName><AppID /><AppURL>https://x.test/c</AppURL>` +
  `<AppDescription>d</AppDescription><AppSupport>https://x.test/s</AppSupport><UserName>u</UserName>` +
  `<OwnerID>{o}</OwnerID><FileID>{f}</FileID><QBType>QBPOS</QBType>${extra}</QBWCXML>`;

void describe("parseQwc rules", () => {
  void it("uses the first of RunEveryNSeconds/RunEveryNMinutes (PG p.38)", () => {
    const seconds = parseQwc(
      MINIMAL(
        "<Scheduler><RunEveryNSeconds>30</RunEveryNSeconds><RunEveryNMinutes>5</RunEveryNMinutes></Scheduler>",
      ),
    );
    assert.deepEqual(seconds.scheduler, { unit: "seconds", value: 30, intervalSeconds: 30 });
    const minutes = parseQwc(
      MINIMAL(
        "<Scheduler><RunEveryNMinutes>5</RunEveryNMinutes><RunEveryNSeconds>30</RunEveryNSeconds></Scheduler>",
      ),
    );
    assert.deepEqual(minutes.scheduler, { unit: "minutes", value: 5, intervalSeconds: 300 });
  });

  void it("decodes entities, keeps QBType and reads the optional preferences", () => {
    const document = parseQwc(
      MINIMAL(
        "<IsReadOnly>TRUE</IsReadOnly><Notify>yes</Notify><PersonalDataPref>pdpOptional</PersonalDataPref>" +
          "<UnattendedModePref>umpRequired</UnattendedModePref><AppDisplayName>Shown</AppDisplayName>" +
          "<AppUniqueName>unique</AppUniqueName>",
      ),
    );
    assert.equal(document.appName, "A & B");
    assert.equal(document.qbType, "QBPOS");
    assert.equal(document.appId, "");
    assert.equal(document.isReadOnly, true);
    assert.equal(document.notify, false);
    assert.equal(document.personalDataPref, "pdpOptional");
    assert.equal(document.unattendedModePref, "umpRequired");
    assert.equal(document.appDisplayName, "Shown");
    assert.equal(registrationKey(document), "unique");
    assert.equal(registrationKey(parseQwc(MINIMAL(""))), "A & B");
  });

  void it("rejects missing required tags, a wrong root, bad intervals and garbage", () => {
    assert.throws(() => parseQwc(MINIMAL("").replace("<UserName>u</UserName>", "")), /UserName/);
    assert.throws(() => parseQwc(MINIMAL("").replace("<AppID />", "")), QwcParseError);
    assert.throws(() => parseQwc("<Other><AppName>x</AppName></Other>"), QwcParseError);
    assert.throws(
      () => parseQwc(MINIMAL("<Scheduler><RunEveryNMinutes>0</RunEveryNMinutes></Scheduler>")),
      QwcParseError,
    );
    assert.throws(() => parseQwc("not xml"), QwcParseError);
  });
});
