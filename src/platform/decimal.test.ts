import assert from "node:assert/strict";
import { describe, test } from "node:test";
import Big from "big.js";
import fc from "fast-check";
import {
  decimalPattern,
  formatAmount,
  parseDecimal,
  placesOfNumber,
  readDecimalText,
  writtenPlaces,
} from "./decimal.ts";

const AMOUNT = { places: 2 };
const PRICE = { places: 5 };

/** A decimal string in the accepted grammar with exactly `fractionDigits` places. */
function decimalString(fractionDigits: fc.Arbitrary<number>): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.boolean(),
      fc.bigInt({ min: 0n, max: 10n ** 15n - 1n }),
      fractionDigits.chain((length) =>
        fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: length, maxLength: length }),
      ),
    )
    .map(
      ([negative, whole, fraction]) =>
        `${negative ? "-" : ""}${whole.toString()}${fraction ? `.${fraction}` : ""}`,
    );
}

describe("parseDecimal", () => {
  test("accepts plain decimals and returns them exactly as sent, never padded", () => {
    for (const input of ["12", "-3.5", "0.10", "0", "-0", "0.00", "999999999999999.99"]) {
      assert.deepEqual(parseDecimal(input, AMOUNT), { ok: true, value: input });
    }
  });

  test("refuses other spellings as not_a_decimal", () => {
    for (const input of [
      "1e3",
      "1E3",
      " 1",
      "1 ",
      "+1",
      "1.",
      ".5",
      "007",
      "-01",
      "1,5",
      "",
      "-",
      "abc",
      "0x10",
      "1_000",
      "١٢",
      "Infinity",
      "NaN",
    ]) {
      assert.deepEqual(
        parseDecimal(input, AMOUNT),
        { ok: false, reason: "not_a_decimal" },
        JSON.stringify(input),
      );
    }
  });

  test("refuses JSON numbers and other non-strings (spec: amounts are decimal strings)", () => {
    for (const input of [12, 12.5, null, undefined, true, ["1"], { value: "1" }]) {
      assert.deepEqual(parseDecimal(input, AMOUNT), { ok: false, reason: "not_a_decimal" });
    }
  });

  test("refuses more places than allowed instead of rounding", () => {
    assert.deepEqual(parseDecimal("1.234", AMOUNT), { ok: false, reason: "too_many_places" });
    assert.deepEqual(parseDecimal("1.123456", PRICE), { ok: false, reason: "too_many_places" });
    assert.deepEqual(parseDecimal("1.12345", PRICE), { ok: true, value: "1.12345" });
  });

  test("allows at most 15 digits before the point (no application figure is longer)", () => {
    assert.deepEqual(parseDecimal("-999999999999999", AMOUNT), { ok: true, value: "-999999999999999" });
    assert.deepEqual(parseDecimal("1000000000000000", AMOUNT), { ok: false, reason: "too_many_digits" });
    assert.deepEqual(parseDecimal(`${"9".repeat(4096)}.5`, AMOUNT), { ok: false, reason: "too_many_digits" });
    assert.match("999999999999999.99", new RegExp(decimalPattern(2)));
    assert.doesNotMatch("1000000000000000", new RegExp(decimalPattern(2)));
  });

  test("counts places as written, so a trailing zero beyond the limit is refused", () => {
    assert.deepEqual(parseDecimal("1.230", AMOUNT), { ok: false, reason: "too_many_places" });
  });

  test("checks inclusive bounds with decimal arithmetic", () => {
    const limits = { places: 2, min: "0", max: "100.00" };
    assert.deepEqual(parseDecimal("0", limits), { ok: true, value: "0" });
    assert.deepEqual(parseDecimal("100", limits), { ok: true, value: "100" });
    assert.deepEqual(parseDecimal("100.01", limits), { ok: false, reason: "out_of_range" });
    assert.deepEqual(parseDecimal("-0.01", limits), { ok: false, reason: "out_of_range" });
  });

  test("reports too_many_places before out_of_range, because never rounding is the rule that matters", () => {
    assert.deepEqual(parseDecimal("1000.001", { places: 2, max: "10" }), {
      ok: false,
      reason: "too_many_places",
    });
  });

  test("property: any decimal with at most `places` places passes unchanged", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 0, max: 8 })
          .chain((places) =>
            fc.tuple(fc.constant(places), decimalString(fc.integer({ min: 0, max: places }))),
          ),
        ([places, input]) => {
          assert.deepEqual(parseDecimal(input, { places }), { ok: true, value: input });
        },
      ),
    );
  });

  test("property: any decimal with more than `places` places fails with too_many_places", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 0, max: 8 })
          .chain((places) =>
            fc.tuple(fc.constant(places), decimalString(fc.integer({ min: places + 1, max: places + 10 }))),
          ),
        ([places, input]) => {
          assert.deepEqual(parseDecimal(input, { places }), { ok: false, reason: "too_many_places" });
        },
      ),
    );
  });

  test("property: the JSON Schema pattern accepts exactly what parseDecimal accepts", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5 }),
        fc.string({ unit: fc.constantFrom(..."-+.0123456789e "), maxLength: 10 }),
        (places, input) => {
          assert.equal(
            new RegExp(decimalPattern(places)).test(input),
            parseDecimal(input, { places }).ok,
            JSON.stringify(input),
          );
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe("formatAmount", () => {
  test("pads to two places for output", () => {
    assert.equal(formatAmount("12.5"), "12.50");
    assert.equal(formatAmount("12"), "12.00");
    assert.equal(formatAmount(new Big("-3.1")), "-3.10");
  });

  test("never rounds: more places than asked are kept", () => {
    assert.equal(formatAmount("1.23456", 2), "1.23456");
  });

  test("writes plain notation for very large and very small values, and zero without a sign", () => {
    assert.equal(formatAmount(new Big("1e21")), "1000000000000000000000.00");
    assert.equal(formatAmount("0.0000001"), "0.0000001");
    assert.equal(formatAmount("-0"), "0.00");
  });

  test("takes the places to pad to", () => {
    assert.equal(formatAmount("7.5", 5), "7.50000");
  });
});

describe("readDecimalText", () => {
  test("reads the application's spellings leniently into plain notation", () => {
    assert.equal(readDecimalText("12.50"), "12.5");
    assert.equal(readDecimalText(" 12.50 "), "12.5");
    assert.equal(readDecimalText("+5."), "5");
    assert.equal(readDecimalText(".5"), "0.5");
    assert.equal(readDecimalText("-0.00"), "0");
  });

  test("returns null for text that is not a decimal, so the decoder can warn instead of guessing", () => {
    for (const text of ["", "abc", "1e3", "1,5", "12.5.1", "--1"])
      assert.equal(readDecimalText(text), null, text);
  });
});

/**
 * The text-only readings of decimals (decision 0035) give exactly what big.js gave before them, on
 * any spelling the application or a caller may write: leading zeros, trailing zeros, signs, zero.
 */
describe("formatAmount and readDecimalText agree with big.js", () => {
  const bigFormat = (value: string, places: number): string => {
    const big = new Big(value);
    const plain = big.eq(0) ? big.abs() : big;
    return plain.toFixed(Math.max(places, Math.max(0, plain.c.length - plain.e - 1)));
  };
  const bigRead = (text: string): string | null => {
    const trimmed = text.trim();
    if (!/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/.test(trimmed)) return null;
    const big = new Big(trimmed.startsWith("+") ? trimmed.slice(1) : trimmed);
    return (big.eq(0) ? big.abs() : big).toFixed();
  };
  const digits = (max: number) => fc.string({ unit: fc.constantFrom(..."0000123456789"), maxLength: max });
  const spelling = fc
    .tuple(
      fc.constantFrom("", "-", "+", " ", " -"),
      digits(20),
      fc.constantFrom("", "."),
      digits(12),
      fc.constantFrom("", " ", "x"),
    )
    .map(([sign, whole, point, fraction, tail]) => `${sign}${whole}${point}${fraction}${tail}`);

  test("formatAmount, on plain decimals and big.js's other spellings", () => {
    fc.assert(
      fc.property(spelling, fc.integer({ min: 0, max: 6 }), (text, places) => {
        let expected: string | Error;
        try {
          expected = bigFormat(text, places);
        } catch (error) {
          expected = error as Error;
        }
        if (expected instanceof Error) assert.throws(() => formatAmount(text, places));
        else assert.equal(formatAmount(text, places), expected, text);
      }),
      { numRuns: 3000 },
    );
    for (const text of ["1e3", "-0.0", "000", "0.000100", "-000.5"])
      assert.equal(formatAmount(text, 2), bigFormat(text, 2), text);
  });

  test("readDecimalText", () => {
    fc.assert(
      fc.property(spelling, (text) => assert.equal(readDecimalText(text), bigRead(text), text)),
      { numRuns: 3000 },
    );
    for (const text of ["", ".", "+", "-.", "5.", ".5", "-.50", "+0", "00.00", " 7 "])
      assert.equal(readDecimalText(text), bigRead(text), text);
  });
});

describe("placesOfNumber and writtenPlaces", () => {
  test("count the places of a JSON number by its shortest spelling", () => {
    assert.equal(placesOfNumber(100), 0);
    assert.equal(placesOfNumber(1.5), 1);
    assert.equal(placesOfNumber(0.00001), 5);
    assert.equal(placesOfNumber(1e-7), 7);
    assert.equal(placesOfNumber(0.1 + 0.2), 17);
    assert.equal(placesOfNumber(1e21), 0);
    assert.equal(placesOfNumber(Number.NaN), Number.POSITIVE_INFINITY);
  });

  test("count written places of a string", () => {
    assert.equal(writtenPlaces("12"), 0);
    assert.equal(writtenPlaces("1.230"), 3);
  });
});
