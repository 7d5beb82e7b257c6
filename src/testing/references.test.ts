import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, test } from "node:test";
import {
  REFERENCE_ROOT,
  SHARED_ROOT,
  findReference,
  inCi,
  needReference,
  referenceRule,
} from "./references.ts";

/** A stand-in for the test context that records skips. */
function recorder(): { skip: (message?: string) => void; skipped: string[] } {
  const skipped: string[] = [];
  return { skip: (message?: string) => void skipped.push(message ?? ""), skipped };
}

describe("the reference rule", () => {
  test("the shared folder is the one beside the repository, whatever the checkout is called", () => {
    const repository = resolve(import.meta.dirname, "../..");
    assert.equal(SHARED_ROOT, resolve(repository, "../shared"));
    assert.equal(REFERENCE_ROOT, resolve(repository, "../shared/reference"));
  });

  test("CI is on when CI is set to anything but empty, 0 or false", () => {
    assert.equal(inCi({}), false);
    assert.equal(inCi({ CI: "" }), false);
    assert.equal(inCi({ CI: "0" }), false);
    assert.equal(inCi({ CI: "false" }), false);
    assert.equal(inCi({ CI: "FALSE" }), false);
    assert.equal(inCi({ CI: "true" }), true);
    assert.equal(inCi({ CI: "1" }), true);
    assert.equal(inCi({ CI: "yes" }), true);
  });

  test("present material runs; absent material fails under CI and is skipped elsewhere", () => {
    assert.equal(referenceRule(true, {}), "run");
    assert.equal(referenceRule(true, { CI: "true" }), "run");
    assert.equal(referenceRule(false, {}), "skip");
    assert.equal(referenceRule(false, { CI: "false" }), "skip");
    assert.equal(referenceRule(false, { CI: "true" }), "fail");
  });

  test("needReference returns a present path and neither skips nor throws, in CI or not", () => {
    for (const env of [{}, { CI: "true" }]) {
      const t = recorder();
      assert.equal(
        needReference(t, { what: "this file", path: import.meta.filename }, env),
        import.meta.filename,
      );
      assert.deepEqual(t.skipped, []);
    }
  });

  test("outside CI, needReference skips with a message naming what, where and how, and returns null", () => {
    const t = recorder();
    const missing = join(tmpdir(), "no-such-reference.xsd");
    assert.equal(
      needReference(t, { what: "the XSDs", path: missing, hint: "set LEDGER_SCHEMA_DIR" }, {}),
      null,
    );
    assert.deepEqual(t.skipped, [
      `the XSDs not found at ${missing} (set LEDGER_SCHEMA_DIR); skipped outside CI`,
    ]);

    const searched = recorder();
    assert.equal(needReference(searched, { what: "the captures", path: undefined }, { CI: "0" }), null);
    assert.deepEqual(searched.skipped, [
      `the captures not found at any folder of ${REFERENCE_ROOT}; skipped outside CI`,
    ]);
  });

  test("under CI, needReference throws (the test fails) and does not skip", () => {
    for (const path of [join(tmpdir(), "no-such-reference.xsd"), undefined]) {
      const t = recorder();
      assert.throws(
        () => needReference(t, { what: "the XSDs", path }, { CI: "true" }),
        /^Error: the XSDs not found at .*; under CI \(CI=true\) this check must run$/,
      );
      assert.deepEqual(t.skipped, []);
    }
  });

  test("findReference finds a file or folder by name in the root's folders, and nothing elsewhere", (t) => {
    const root = mkdtempSync(join(tmpdir(), "references-"));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    mkdirSync(join(root, "vendor", "envelopes"), { recursive: true });
    writeFileSync(join(root, "vendor", "service.wsdl"), "<definitions/>");
    writeFileSync(join(root, "top-level.md"), "not in a folder");
    assert.equal(findReference("envelopes", root), join(root, "vendor", "envelopes"));
    assert.equal(findReference("service.wsdl", root), join(root, "vendor", "service.wsdl"));
    assert.equal(findReference("top-level.md", root), undefined, "only the root's folders are searched");
    assert.equal(findReference("absent.xml", root), undefined);
    assert.equal(findReference("service.wsdl", join(root, "missing")), undefined, "no root, nothing found");
  });
});
