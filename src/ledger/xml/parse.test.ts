import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseDocument } from "./parse.ts";

describe("parseDocument", () => {
  it("reads elements, attributes in order, trimmed text, references, CDATA and the qbxml version", () => {
    const doc = parseDocument(
      `<?xml version="1.0"?>\n<?qbxml version="16.0"?>\n<A x="1" y="&amp;2">\n  <B> Smith &amp; Sons &#233; </B><C><![CDATA[<raw>]]></C></A>`,
    );
    assert.ok(doc);
    assert.equal(doc.qbxmlVersion, "16.0");
    assert.deepEqual(doc.root.attrs, [
      ["x", "1"],
      ["y", "&2"],
    ]);
    assert.deepEqual(
      doc.root.children.map((c) => [c.name, c.text]),
      [
        ["B", "Smith & Sons é"],
        ["C", "<raw>"],
      ],
    );
  });

  it("refuses what is not one well-formed message document", () => {
    const refused = [
      "<A><B></A>",
      "<A/><B/>",
      "<A>text<B/></A>",
      "<A>&undefined;</A>",
      '<!DOCTYPE A [<!ENTITY e "x">]><A>&e;</A>',
      `${"<A>".repeat(65)}${"</A>".repeat(65)}`,
      "",
      "plain text",
    ];
    for (const xml of refused) assert.equal(parseDocument(xml), undefined, xml);
    assert.ok(parseDocument(`${"<A>".repeat(64)}${"</A>".repeat(64)}`), "64 levels are read");
  });
});
