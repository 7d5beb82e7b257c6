import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import iconv from "iconv-lite";
import {
  WINDOWS_1252_HIGH_CODE_POINTS,
  formatCodePoint,
  isSupportedCodePoint,
  isWindows1252,
  normalizeText,
  suggestReplacement,
} from "./text.ts";

/** Every code point the code page has, minus the controls text refuses (tab, LF and CR stay). */
const SUPPORTED_CHARACTERS: readonly string[] = [
  "\t",
  "\n",
  "\r",
  ...Array.from({ length: 0x7f - 0x20 }, (_, offset) => String.fromCodePoint(0x20 + offset)),
  ...Array.from({ length: 0x100 - 0xa0 }, (_, offset) => String.fromCodePoint(0xa0 + offset)),
  ...WINDOWS_1252_HIGH_CODE_POINTS.map((codePoint) => String.fromCodePoint(codePoint)),
];

const supportedText = fc
  .array(fc.constantFrom(...SUPPORTED_CHARACTERS), { maxLength: 60 })
  .map((chars) => chars.join(""));

function iconvRoundTrips(codePoint: number): boolean {
  // iconv-lite decodes the five unassigned bytes to U+FFFD, so U+FFFD "round-trips" through one of
  // them; it is not a character of the code page.
  if (codePoint === 0xfffd) return false;
  const char = String.fromCodePoint(codePoint);
  return iconv.decode(iconv.encode(char, "win1252"), "win1252") === char;
}

describe("isWindows1252", () => {
  test("agrees with iconv-lite's Windows-1252 table for every code point of the BMP", () => {
    for (let codePoint = 0; codePoint <= 0xffff; codePoint++) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
      assert.equal(isWindows1252(codePoint), iconvRoundTrips(codePoint), formatCodePoint(codePoint));
    }
  });

  test("has exactly the 27 assigned code points of bytes 0x80–0x9F", () => {
    assert.equal(WINDOWS_1252_HIGH_CODE_POINTS.length, 27);
    assert.ok(WINDOWS_1252_HIGH_CODE_POINTS.includes(0x20ac));
    assert.ok(WINDOWS_1252_HIGH_CODE_POINTS.includes(0x0178));
  });

  test("refuses code points outside the BMP", () => {
    assert.equal(isWindows1252(0x1f600), false);
    assert.equal(isWindows1252(0x10000), false);
  });
});

describe("normalizeText", () => {
  test("composes decomposed accents before checking (spec: normalised to composed form first)", () => {
    assert.deepEqual(normalizeText("Cafe\u0301"), { ok: true, value: "Caf\u00e9" });
    assert.deepEqual(normalizeText("A\u030angstro\u0308m"), { ok: true, value: "\u00c5ngstr\u00f6m" });
  });

  test("reports the first unsupported character with the spec's UNSUPPORTED_CHARACTER details", () => {
    assert.deepEqual(normalizeText("Na\u2011me"), {
      ok: false,
      codePoint: 0x2011,
      character: "\u2011",
      index: 2,
      suggestion: "-",
    });
  });

  test("counts the index in the normalised text, so a decomposed accent before it counts once", () => {
    const result = normalizeText("e\u0301\u0151");
    assert.deepEqual(result, {
      ok: false,
      codePoint: 0x0151,
      character: "\u0151",
      index: 1,
      suggestion: "\u00f6",
    });
  });

  test("counts the index in code points, and an emoji is one character", () => {
    assert.deepEqual(normalizeText("ab\u{1f600}"), {
      ok: false,
      codePoint: 0x1f600,
      character: "\u{1f600}",
      index: 2,
      suggestion: null,
    });
  });

  test("accepts tab, line feed and carriage return", () => {
    assert.deepEqual(normalizeText("a\tb\r\nc"), { ok: true, value: "a\tb\r\nc" });
  });

  test("refuses other C0 controls, DEL and C1 controls with character null", () => {
    for (const codePoint of [0x00, 0x01, 0x08, 0x0b, 0x0c, 0x1b, 0x1f, 0x7f, 0x80, 0x85, 0x9f]) {
      const result = normalizeText(`x${String.fromCodePoint(codePoint)}`);
      assert.equal(result.ok, false, formatCodePoint(codePoint));
      if (!result.ok) {
        assert.equal(result.codePoint, codePoint);
        assert.equal(result.character, null);
        assert.equal(result.index, 1);
      }
    }
  });

  test("reports a lone surrogate with character null", () => {
    const result = normalizeText("ab\ud800c");
    assert.deepEqual(result, { ok: false, codePoint: 0xd800, character: null, index: 2, suggestion: null });
  });

  test("passes U+00A0 no-break space, € and the typographic quotes of the code page", () => {
    const value =
      "1\u00a0000 \u20ac \u201cquoted\u201d \u2018it\u2019s\u2019 \u2013 \u2014 \u2026 \u0160\u017e\u0178";
    assert.deepEqual(normalizeText(value), { ok: true, value });
  });

  test("property: every string of supported Windows-1252 characters passes unchanged after NFC", () => {
    fc.assert(
      fc.property(supportedText, (value) => {
        assert.deepEqual(normalizeText(value), { ok: true, value });
      }),
    );
  });

  test("property: text of the code page is already NFC (what lets normalizeText skip normalising it)", () => {
    fc.assert(
      fc.property(supportedText, (value) => {
        assert.equal(value.normalize("NFC"), value);
      }),
      { numRuns: 2000 },
    );
    // Composition joins a character with the one after it: every pair, exhaustively.
    for (const first of SUPPORTED_CHARACTERS) {
      for (const second of SUPPORTED_CHARACTERS)
        assert.equal((first + second).normalize("NFC"), first + second);
    }
  });

  test("property: a failure points at an unsupported character after only supported ones", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 30 }), (input) => {
        const result = normalizeText(input);
        const chars = [...input.normalize("NFC")];
        if (result.ok) {
          assert.equal(result.value, input.normalize("NFC"));
          assert.ok(chars.every((char) => isSupportedCodePoint(char.codePointAt(0) ?? -1)));
        } else {
          assert.equal(chars[result.index]?.codePointAt(0), result.codePoint);
          assert.ok(
            chars.slice(0, result.index).every((char) => isSupportedCodePoint(char.codePointAt(0) ?? -1)),
          );
          // Every character before the failure is in the BMP, so code points and UTF-16 units agree.
          assert.equal(chars.slice(0, result.index).join("").length, result.index);
        }
      }),
    );
  });
});

describe("suggestReplacement", () => {
  const cases: Array<[string, number, string | null]> = [
    ["non-breaking hyphen", 0x2011, "-"],
    ["minus sign", 0x2212, "-"],
    ["thin space", 0x2009, " "],
    ["narrow no-break space keeps its no-break meaning", 0x202f, "\u00a0"],
    ["double high-reversed-9 quotation mark", 0x201f, '"'],
    ["prime", 0x2032, "'"],
    ["o with double acute", 0x0151, "\u00f6"],
    ["U with double acute", 0x0170, "\u00dc"],
    ["c with caron", 0x010d, "c"],
    ["s with comma below", 0x0219, "s"],
    ["l with stroke", 0x0142, "l"],
    ["fi ligature", 0xfb01, "fi"],
    ["full-width A", 0xff21, "A"],
    ["vulgar fraction one third", 0x2153, "1/3"],
    ["zero-width space is removed", 0x200b, ""],
    ["byte order mark is removed", 0xfeff, ""],
    ["combining acute left after NFC is removed", 0x0301, ""],
    ["C1 control decoded as Latin-1 by mistake", 0x0092, "\u2019"],
    ["C1 control of an unassigned byte", 0x0081, null],
    ["NUL", 0x0000, null],
    ["emoji", 0x1f600, null],
    ["Greek alpha", 0x03b1, null],
    ["CJK ideograph", 0x4e2d, null],
    ["rupee sign", 0x20b9, null],
  ];
  for (const [name, codePoint, expected] of cases) {
    test(`${name} (${formatCodePoint(codePoint)}) suggests ${JSON.stringify(expected)}`, () => {
      assert.equal(suggestReplacement(codePoint), expected);
    });
  }

  test("is null for characters that are already supported", () => {
    assert.equal(suggestReplacement(0x41), null);
    assert.equal(suggestReplacement(0xa0), null);
  });

  test("property: every suggestion is itself supported text", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0x10ffff }), (codePoint) => {
        const suggestion = suggestReplacement(codePoint);
        if (suggestion !== null) assert.deepEqual(normalizeText(suggestion), { ok: true, value: suggestion });
      }),
      { numRuns: 5000 },
    );
  });
});
