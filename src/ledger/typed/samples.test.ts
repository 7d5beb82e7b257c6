import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { REFERENCE_ROOT, needReference } from "../../testing/references.ts";
import { allResources } from "../resources/definitions.ts";
import { parseDocument } from "../xml/parse.ts";
import { decodeDelete, decodeRecords, responseMessage } from "./actions.ts";

/**
 * The application's real answers (`../shared/reference/qbxml-samples/`, four captured verbatim) must
 * decode with no warnings (issue 7, item 6): every record element a registered group answers with is
 * read, every field of its shape is present, and every value is understood.
 */
const SAMPLES = join(REFERENCE_ROOT, "qbxml-samples");

function recordOwner(element: string) {
  return allResources().find((resource) => resource.records.has(element) && resource.ret === element);
}

describe("real sample answers decode with no warnings", () => {
  const files = existsSync(SAMPLES) ? readdirSync(SAMPLES).filter((name) => name.endsWith(".xml")) : [];
  test("the samples are present", (t) => {
    if (needReference(t, { what: "the application's sample answers", path: SAMPLES }) === null) return;
    assert.ok(files.length > 0, `no samples in ${SAMPLES}`);
  });
  for (const file of files) {
    test(file, () => {
      const text = readFileSync(join(SAMPLES, file), "utf8");
      const document = parseDocument(
        text.trim().startsWith("<?xml") ? text : `<?xml version="1.0" ?>\n${text}`,
      );
      assert.ok(document, "the sample parses");
      const messages = document.root.children.find((c) => c.name === "QBXMLMsgsRs")?.children ?? [];
      let records = 0;
      for (const element of messages) {
        const message = responseMessage(element);
        if (message.statusSeverity === "Error" && element.children.length === 0) continue;
        if (element.name === "ListDelRs") {
          const customers = allResources().find((r) => r.entry.path === "customers");
          assert.ok(customers);
          const { result } = decodeDelete(customers, message);
          assert.equal((result as { deleted: boolean }).deleted, true);
          assert.match(String((result as { deletedAt: string }).deletedAt), /^\d{4}-\d{2}-\d{2}T/);
          continue;
        }
        for (const child of element.children) {
          const owner = recordOwner(child.name);
          if (!owner) continue;
          const page = decodeRecords(owner, {
            ...message,
            statusSeverity: "Info",
            element: { ...element, children: [child] },
          });
          assert.deepEqual(page.warnings, [], `${file}: ${child.name} decodes without warnings`);
          const [record] = page.data;
          assert.ok(record);
          for (const field of owner.records.get(child.name)?.shape.fields ?? []) {
            assert.ok(field.json in record, `${child.name}: field \`${field.json}\` is present`);
          }
          assert.equal(record.objectType, owner.entry.objectType);
          records++;
        }
      }
      if (/_rs\b|_rs_/.test(file) && !/error|warn|list_del|report|hcp|3100/.test(file)) {
        assert.ok(records > 0, `${file} holds at least one record a group reads`);
      }
    });
  }
});

describe("a real report answer reads into the spec's report record", () => {
  test("columns, titles and every kind of row", async (t) => {
    const file = join(SAMPLES, "10_general_summary_report_inventory_stock_status_rs.xml");
    if (needReference(t, { what: "the general summary report sample", path: file }) === null) return;
    const { decodeReport, REPORT_KINDS } = await import("../reports.ts");
    const kind = REPORT_KINDS.find((k) => k.name === "generalSummary");
    assert.ok(kind);
    const text = readFileSync(file, "utf8");
    const document = parseDocument(
      text.trim().startsWith("<?xml") ? text : `<?xml version="1.0" ?>\n${text}`,
    );
    const element = document?.root.children[0]?.children[0];
    assert.ok(element);
    const report = decodeReport(kind, responseMessage(element)).result as {
      objectType: string;
      category: string;
      title: string;
      columnCount: number;
      columns: { columnId: number; titles: unknown[] }[];
      rows: { kind: string; cells: { columnId: number }[] }[];
    };
    assert.equal(report.objectType, "ledger_report");
    assert.equal(report.category, "general_summary");
    assert.match(report.title, /Inventory Stock Status/);
    assert.equal(report.columns.length, report.columnCount);
    assert.ok(report.columns.every((c) => Number.isInteger(c.columnId) && c.titles.length > 0));
    const kinds = new Set(report.rows.map((r) => r.kind));
    for (const expected of ["text", "data", "subtotal"]) assert.ok(kinds.has(expected), `a ${expected} row`);
    assert.ok(report.rows.filter((r) => r.kind === "data").every((r) => r.cells.length > 0));
  });
});
