import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import fc from "fast-check";
import { REFERENCE_ROOT, needReference } from "../../testing/references.ts";
import { REFUSED_XML } from "../../testing/refused-xml.ts";
import { parseDocument, readXml, type ParsedDocument } from "./parse.ts";
import { readPlainDocument } from "./plain-reader.ts";
import { renderDocument, type XmlElement } from "./tree.ts";

/**
 * The purpose-built reader (decision 0035) reads a document only when the general reader (saxes)
 * reads it too, into the same tree: on the application's real answers, on generated answers, and on
 * generated documents that are broken at a random place. Where it gives up, `parseDocument` gives
 * the general reader's answer, so the two roads never differ.
 */
const SAMPLES = join(REFERENCE_ROOT, "qbxml-samples");

/** The general reader's result, or null when it refuses the document. */
function general(xml: string): ParsedDocument | null {
  try {
    return readXml(xml);
  } catch {
    return null;
  }
}

/** The tree as plain data (the plain reader shares one frozen empty array between leaves). */
const plain = (document: ParsedDocument | null | undefined): unknown =>
  document === null || document === undefined ? null : JSON.parse(JSON.stringify(document));

/** The plain reader agrees with the general one, and `parseDocument` with the general one alone. */
function agree(xml: string): "plain" | "general" {
  const fast = readPlainDocument(xml);
  const slow = general(xml);
  if (fast !== null) {
    assert.ok(slow !== null, `the plain reader read what the general reader refuses: ${xml.slice(0, 300)}`);
    assert.deepEqual(plain(fast), plain(slow), xml.slice(0, 300));
  }
  assert.deepEqual(plain(parseDocument(xml)), plain(slow), xml.slice(0, 300));
  return fast === null ? "general" : "plain";
}

describe("the plain reader and the general reader", () => {
  test("the application's sample answers: the same trees, each read by the plain reader", (t) => {
    if (needReference(t, { what: "the application's sample answers", path: SAMPLES }) === null) return;
    const files = existsSync(SAMPLES) ? readdirSync(SAMPLES).filter((name) => name.endsWith(".xml")) : [];
    assert.ok(files.length > 0);
    let read = 0;
    for (const file of files) {
      const text = readFileSync(join(SAMPLES, file), "utf8");
      const document = text.trim().startsWith("<?xml") ? text : `<?xml version="1.0" ?>\n${text}`;
      if (agree(document) === "plain") read += 1;
      // The same answers as a Windows program may write them: carriage returns are left to saxes.
      assert.equal(agree(document.replace(/\n/g, "\r\n")), "general");
    }
    assert.ok(read >= files.length / 2, `the plain reader read ${read} of ${files.length} samples`);
  });

  test("the documents a strict reader refuses are refused on both roads", () => {
    for (const xml of [
      ...REFUSED_XML,
      `${"<A>".repeat(64)}${"</A>".repeat(64)}`,
      "<A>]]></A>",
      "<A></B>",
      "<A></AB>",
      "<A x='1'y='2'/>",
      '<?xml version="1.0" ?><?xml version="1.0" ?><A/>',
      '<?qbxml version="16.0"?><?qbxml version="16.0"?><A/>',
      " <A/>",
      "\uFEFF<A/>",
      "<A/>\u00A0",
    ])
      agree(xml);
  });

  test("generated answers: the same trees, read by the plain reader", () => {
    fc.assert(
      fc.property(
        answer(),
        fc.constantFrom("", '<?xml version="1.0" ?>\n', '<?qbxml version="16.0"?>'),
        (root, prolog) => {
          const xml = prolog + renderDocument(root).replace(/^<\?xml version="1.0" \?>\n/, "");
          const road = agree(xml);
          // Outside the subset (names with a prefix or non-ASCII letters, a tab or line break in an
          // attribute, a carriage return, a control character, a surrogate): left to saxes.
          if (
            inSubset(root) &&
            // eslint-disable-next-line no-control-regex -- the control characters are what it looks for
            !/[\u0000-\u0008\u000B-\u001F\u007F-\u009F\uD800-\uDFFF\uFFFE\uFFFF\r]/.test(xml)
          )
            assert.equal(road, "plain", xml.slice(0, 300));
        },
      ),
      { numRuns: 400 },
    );
  });

  test("generated answers broken at a random place: both roads agree", () => {
    fc.assert(
      fc.property(
        answer(),
        fc.nat(),
        fc.constantFrom(
          "<",
          ">",
          "&",
          "/",
          '"',
          "'",
          "=",
          " ",
          "\r",
          "]]>",
          "<!--x-->",
          "<![CDATA[x]]>",
          "&#65;",
          "&amp;",
          "<B>",
          "</B>",
          "<?pi x?>",
          "",
          "\u0000",
        ),
        fc.nat({ max: 3 }),
        (root, position, insert, removed) => {
          const xml = renderDocument(root);
          const at = position % (xml.length + 1);
          agree(xml.slice(0, at) + insert + xml.slice(at + removed));
        },
      ),
      { numRuns: 1500 },
    );
  });
});

/** Whether every name and attribute value of the tree is of the plain reader's subset. */
function inSubset(element: XmlElement): boolean {
  return (
    /^[A-Za-z_][A-Za-z0-9._-]*$/.test(element.name) &&
    element.attrs.every(([, value]) => !/[\t\n]/.test(value)) &&
    element.children.every(inSubset)
  );
}

/** Element names of the subset and a few outside it (prefixed, non-ASCII). */
const NAME = fc.constantFrom("QBXML", "InvoiceRet", "TxnID", "Memo", "a", "_x", "x.y-z9", "p:Name", "Café");

/** Text as the application writes it (escaped by the renderer), special characters included. */
const TEXT = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "12.50",
    "2026-11-02",
    "Acme & Sons",
    "<tag>",
    '"quoted"',
    "it's",
    "  padded  ",
    "line\nbreak",
    "tab\there",
  ),
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 6 }),
);

const ATTRIBUTES = fc.uniqueArray(
  fc.tuple(fc.constantFrom("statusCode", "requestID", "iterator", "a"), TEXT),
  {
    maxLength: 3,
    selector: ([key]) => key,
  },
);

function answer(): fc.Arbitrary<XmlElement> {
  const { element } = fc.letrec<{ element: XmlElement }>((tie) => ({
    element: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.record({ name: NAME, attrs: ATTRIBUTES, children: fc.constant([]), text: TEXT }),
      fc.record({
        name: NAME,
        attrs: ATTRIBUTES,
        children: fc.array(tie("element"), { minLength: 1, maxLength: 4 }),
        text: fc.constant(""),
      }),
    ),
  }));
  return element;
}
