import assert from "node:assert/strict";
import { test } from "node:test";
import { readAnswer } from "./answer.ts";
import { REPAIRED_CHARACTER, repairMarkup, withholdRepairedValues } from "./markup-repair.ts";

const answer = (name: string): string =>
  `<?xml version="1.0" ?><QBXML><QBXMLMsgsRs><CustomerQueryRs statusCode="0" statusSeverity="Info" statusMessage="Status OK"><CustomerRet><Name>${name}</Name></CustomerRet></CustomerQueryRs></QBXMLMsgsRs></QBXML>`;

const nameOf = (xml: string): string | undefined =>
  readAnswer(xml)?.root.children[0]?.children[0]?.children[0]?.children[0]?.text;

test("a well-formed answer is read as written, with no repair", () => {
  const read = readAnswer(answer("Tab\there &amp; &#xE9;"));
  assert.equal(read?.repaired, undefined);
  assert.equal(nameOf(answer("Tab\there &amp; &#xE9;")), "Tab\there & é");
});

test("control characters, raw or as references, are replaced with U+FFFD and counted", () => {
  for (const written of ["A\u0001B", "A&#1;B", "A&#x1F;B", "A&#x0b;B", "A&#12;B"]) {
    const read = readAnswer(answer(written));
    assert.equal(read?.repaired, 1, written);
    assert.equal(nameOf(answer(written)), `A${REPAIRED_CHARACTER}B`, written);
  }
  assert.equal(
    repairMarkup("&#9;&#10;&#13;&#32;").repaired,
    0,
    "tab, line feed, carriage return, space are allowed",
  );
});

test("an answer broken otherwise stays unreadable", () => {
  assert.equal(readAnswer(answer("A\u0001B").slice(0, 80)), null);
  assert.equal(readAnswer("<QBXML><QBXMLMsgsRs>"), null);
});

test("withholdRepairedValues nulls each repaired string with its path and keeps the rest", () => {
  const result = {
    data: [{ name: "ok", memo: `x${REPAIRED_CHARACTER}y`, lines: [{ description: REPAIRED_CHARACTER }] }],
    tags: ["fine", `b${REPAIRED_CHARACTER}d`],
  };
  const warnings = withholdRepairedValues(result);
  assert.deepEqual(
    warnings.map((w) => [w.code, w.path]),
    [
      ["LEDGER_MARKUP_REPAIRED", "data[0].memo"],
      ["LEDGER_MARKUP_REPAIRED", "data[0].lines[0].description"],
      ["LEDGER_MARKUP_REPAIRED", "tags[1]"],
    ],
  );
  assert.deepEqual(result, {
    data: [{ name: "ok", memo: null, lines: [{ description: null }] }],
    tags: ["fine", null],
  });
});
