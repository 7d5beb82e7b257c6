import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { z } from "zod";
import type { ErrorCode } from "../errors/catalogue.ts";
import { errorFromZod } from "../errors/from-zod.ts";
import { ServiceError } from "../errors/service-error.ts";
import { WINDOWS_1252_HIGH_CODE_POINTS } from "../platform/text.ts";
import {
  amount,
  boolean,
  cost,
  date,
  dateOrDateTime,
  dateTime,
  decimal,
  email,
  enumOf,
  id,
  integer,
  isFieldKind,
  parseFields,
  percent,
  price,
  quantity,
  rate,
  strictObject,
  text,
  url,
  uuid,
  type AnyFieldKind,
  type RandomSource,
} from "./fields.ts";

interface Expected {
  code: ErrorCode;
  param: string | null;
  details?: Record<string, unknown>;
  message?: RegExp;
}

/** Parses `input` the way a route would (plain safeParse, then errorFromZod) and checks the error. */
function expectError(schema: z.ZodType, input: unknown, expected: Expected, prefix = ""): ServiceError {
  const result = schema.safeParse(input);
  assert.equal(result.success, false, `expected ${expected.code} for ${JSON.stringify(input)}`);
  if (result.success) throw new Error("unreachable");
  const error = errorFromZod(result.error, prefix);
  assert.ok(error instanceof ServiceError);
  assert.equal(error.code, expected.code, error.message);
  assert.equal(error.param, expected.param);
  if (expected.details !== undefined) assert.deepEqual(error.details, expected.details);
  else if (expected.code !== "UNSUPPORTED_CHARACTER") assert.deepEqual(error.details, {});
  if (expected.message) assert.match(error.message, expected.message);
  return error;
}

/** One field named `value`, so `param` is predictable. */
function single(kind: AnyFieldKind) {
  return strictObject({ value: kind }, { required: ["value"] });
}

function accepts(kind: AnyFieldKind, input: unknown): unknown {
  const result = single(kind).safeParse({ value: input });
  assert.equal(
    result.success,
    true,
    `expected ${JSON.stringify(input)} to pass: ${JSON.stringify(result.error?.issues)}`,
  );
  return result.data?.value;
}

function rejects(kind: AnyFieldKind, input: unknown, code: ErrorCode, message?: RegExp): ServiceError {
  return expectError(
    single(kind),
    { value: input },
    { code, param: "value", ...(message ? { message } : {}) },
  );
}

/** A deterministic random source that cycles through the given values. */
function cycle(values: readonly number[]): RandomSource {
  let next = 0;
  return () => values[next++ % values.length] ?? 0;
}

const randomValues = fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
  minLength: 1,
  maxLength: 64,
});

const line = strictObject({
  memo: text({ max: 4095, clearable: true }),
  amount: amount(),
  quantity: quantity(),
});
const body = strictObject(
  { refNumber: text({ max: 11 }), memo: text({ max: 4095, clearable: true }), lines: z.array(line) },
  { required: ["refNumber"] },
);

describe("text", () => {
  const kind = text({ max: 5 });

  test("passes Windows-1252 text through and composes decomposed accents first", () => {
    assert.equal(accepts(kind, "Caf\u00e9"), "Caf\u00e9");
    assert.equal(accepts(kind, "Cafe\u0301"), "Caf\u00e9");
  });

  test("measures length after NFC, so five decomposed accents fit in five characters", () => {
    assert.equal(accepts(kind, "e\u0301".repeat(5)), "\u00e9".repeat(5));
  });

  test("rejects an unsupported character with UNSUPPORTED_CHARACTER and the spec's details, in a nested line", () => {
    const error = expectError(
      body,
      { refNumber: "A1", lines: [{}, {}, { memo: "1\u20112" }] },
      {
        code: "UNSUPPORTED_CHARACTER",
        param: "lines[2].memo",
        details: { codePoint: 0x2011, character: "\u2011", index: 1, suggestion: "-" },
      },
    );
    assert.match(error.message, /U\+2011/);
    assert.equal(error.httpStatus, 400);
  });

  test("reports a control character with character null", () => {
    expectError(
      single(kind),
      { value: "a\u0007" },
      {
        code: "UNSUPPORTED_CHARACTER",
        param: "value",
        details: { codePoint: 7, character: null, index: 1, suggestion: null },
      },
    );
  });

  test("reports an emoji with suggestion null", () => {
    expectError(
      single(kind),
      { value: "\u{1f600}" },
      {
        code: "UNSUPPORTED_CHARACTER",
        param: "value",
        details: { codePoint: 0x1f600, character: "\u{1f600}", index: 0, suggestion: null },
      },
    );
  });

  test("checks characters before length, so a long text with an emoji reports the emoji", () => {
    rejects(kind, "abcdefgh\u{1f600}", "UNSUPPORTED_CHARACTER");
  });

  test("rejects text over the maximum with STRING_TOO_LONG naming the maximum", () => {
    expectError(
      body,
      { refNumber: "123456789012" },
      { code: "STRING_TOO_LONG", param: "refNumber", message: /at most 11 characters/ },
    );
  });

  test("honours a minimum length with INVALID_PARAMETER", () => {
    rejects(text({ max: 5, min: 1 }), "", "INVALID_PARAMETER", /at least 1/);
  });

  test("rejects a number with INVALID_PARAMETER naming the expected type", () => {
    rejects(kind, 42, "INVALID_PARAMETER", /Expected a string, received the number 42/);
  });

  test("property: every string of supported Windows-1252 characters within the maximum passes unchanged", () => {
    const chars = [
      "\t",
      "\n",
      "\r",
      ...Array.from({ length: 0x7f - 0x20 }, (_, offset) => String.fromCodePoint(0x20 + offset)),
      ...Array.from({ length: 0x100 - 0xa0 }, (_, offset) => String.fromCodePoint(0xa0 + offset)),
      ...WINDOWS_1252_HIGH_CODE_POINTS.map((codePoint) => String.fromCodePoint(codePoint)),
    ];
    const long = text({ max: 40 });
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...chars), { maxLength: 40 }), (picked) => {
        const value = picked.join("");
        assert.equal(accepts(long, value), value);
      }),
    );
  });
});

describe("clearable and not-clearable fields", () => {
  test("null clears a clearable field", () => {
    assert.deepEqual(parseFields(body, { refNumber: "A1", memo: null }), { refNumber: "A1", memo: null });
  });

  test("null for a field that is not clearable gives FIELD_NOT_CLEARABLE", () => {
    expectError(body, { refNumber: null }, { code: "FIELD_NOT_CLEARABLE", param: "refNumber" });
    expectError(
      body,
      { refNumber: "A", lines: [{ amount: null }] },
      { code: "FIELD_NOT_CLEARABLE", param: "lines[0].amount" },
    );
  });

  test("an absent field is not sent: it stays absent instead of becoming null", () => {
    const parsed = parseFields(body, { refNumber: "A1" });
    assert.deepEqual(parsed, { refNumber: "A1" });
    assert.equal(Object.hasOwn(parsed, "memo"), false);
  });

  test("every kind takes the clearable option", () => {
    const kinds: AnyFieldKind[] = [
      text({ max: 3, clearable: true }),
      amount({ clearable: true }),
      price({ clearable: true }),
      percent({ clearable: true }),
      quantity({ clearable: true }),
      integer({ clearable: true }),
      boolean({ clearable: true }),
      date({ clearable: true }),
      dateTime({ clearable: true }),
      dateOrDateTime({ clearable: true }),
      uuid({ clearable: true }),
      id({ clearable: true }),
      enumOf(["a"], { clearable: true }),
      email({ max: 50, clearable: true }),
      url({ max: 50, clearable: true }),
    ];
    for (const kind of kinds) {
      assert.equal(kind.clearable, true, kind.kind);
      assert.equal(accepts(kind, null), null);
    }
  });
});

describe("strictObject", () => {
  test("an unknown key gives UNKNOWN_PARAMETER naming the nested path", () => {
    expectError(
      body,
      { refNumber: "A", lines: [{ memo: "x" }, { amout: "1.00" }] },
      { code: "UNKNOWN_PARAMETER", param: "lines[1].amout" },
    );
  });

  test("a missing required key gives INVALID_PARAMETER 'Missing required parameter'", () => {
    expectError(
      body,
      {},
      { code: "INVALID_PARAMETER", param: "refNumber", message: /Missing required parameter `refNumber`/ },
    );
  });

  test("parseFields prefixes the param, as a batch member needs", () => {
    assert.throws(
      () => parseFields(body, { refNumber: "A", lines: [{ amount: "1.001" }] }, "requests[2].body"),
      (error: unknown) =>
        error instanceof ServiceError &&
        error.code === "DECIMAL_PRECISION_EXCEEDED" &&
        error.param === "requests[2].body.lines[0].amount",
    );
  });

  test("parseFields tells a wrong-typed nested array from a missing one", () => {
    assert.throws(
      () => parseFields(body, { refNumber: "A", lines: "none" }),
      (error: unknown) =>
        error instanceof ServiceError &&
        error.code === "INVALID_PARAMETER" &&
        error.param === "lines" &&
        /expected array/.test(error.message),
    );
  });

  test("infers the input types: absent is undefined, null only where clearable", () => {
    const parsed = parseFields(body, { refNumber: "A", memo: null, lines: [{ quantity: 2 }] });
    const memo: string | null | undefined = parsed.memo;
    const refNumber: string = parsed.refNumber;
    const quantityValue: number | undefined = parsed.lines?.[0]?.quantity;
    assert.deepEqual([memo, refNumber, quantityValue], [null, "A", 2]);
  });
});

describe("decimal kinds", () => {
  test("amount accepts up to 2 places, as sent", () => {
    for (const input of ["12", "-3.5", "0.10", "1234567.89"]) assert.equal(accepts(amount(), input), input);
  });

  test("amount rejects a third place with DECIMAL_PRECISION_EXCEEDED and never rounds", () => {
    rejects(amount(), "1.005", "DECIMAL_PRECISION_EXCEEDED", /at most 2 decimal places, got 3/);
  });

  test("amount rejects a JSON number with INVALID_PARAMETER naming the expected type", () => {
    rejects(
      amount(),
      12.5,
      "INVALID_PARAMETER",
      /Expected a decimal string such as "12\.50", received the number 12\.5/,
    );
  });

  test("amount rejects other spellings with INVALID_PARAMETER", () => {
    for (const input of ["1e3", " 1", "1.", ".5", "+1", "1,50"])
      rejects(amount(), input, "INVALID_PARAMETER", /decimal string/);
  });

  test("price, cost and rate allow 5 places", () => {
    for (const kind of [price(), cost(), rate()]) {
      assert.equal(accepts(kind, "0.12345"), "0.12345");
      rejects(kind, "0.123456", "DECIMAL_PRECISION_EXCEEDED", /at most 5/);
    }
  });

  test("percent is a decimal string with 5 places ('7.5' means 7.5 %)", () => {
    assert.equal(accepts(percent(), "7.5"), "7.5");
    rejects(percent(), 7.5, "INVALID_PARAMETER", /Expected a decimal string such as "7\.5"/);
    rejects(percent(), "7.123456", "DECIMAL_PRECISION_EXCEEDED");
  });

  test("bounds give INVALID_PARAMETER naming the range", () => {
    const kind = decimal({ places: 2, min: "0", max: "100" });
    assert.equal(accepts(kind, "100.00"), "100.00");
    rejects(kind, "100.01", "INVALID_PARAMETER", /between 0 and 100/);
  });

  test("a malformed bound is a programming error", () => {
    assert.throws(() => amount({ min: "1e3" }), /not a decimal string/);
  });

  test("amount output pads to two places; XML reads into the same form", () => {
    assert.equal(amount().output("12.5"), "12.50");
    assert.equal(amount().output(null), null);
    assert.equal(amount().output(undefined), null);
    assert.deepEqual(amount().fromXml("12.5"), { ok: true, value: "12.50" });
    assert.deepEqual(amount().fromXml("n/a"), { ok: false });
    assert.deepEqual(price().fromXml("12.50000"), { ok: true, value: "12.5" });
    assert.equal(price().output("12.5"), "12.5");
  });

  test("property: any amount with at most 2 places passes unchanged, more places fail", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 15n - 1n), max: 10n ** 15n - 1n }),
        fc.string({ unit: fc.constantFrom(..."0123456789"), maxLength: 8 }),
        (whole, fraction) => {
          const input = fraction ? `${whole.toString()}.${fraction}` : whole.toString();
          if (fraction.length <= 2) assert.equal(accepts(amount(), input), input);
          else rejects(amount(), input, "DECIMAL_PRECISION_EXCEEDED");
        },
      ),
    );
  });
});

describe("quantity", () => {
  test("accepts a JSON number with up to 5 places", () => {
    for (const input of [0, 2, -1.5, 0.00001, 123456.78901]) assert.equal(accepts(quantity(), input), input);
  });

  test("rejects more places with DECIMAL_PRECISION_EXCEEDED, so 0.1 + 0.2 is never silently rounded", () => {
    rejects(quantity(), 0.1 + 0.2, "DECIMAL_PRECISION_EXCEEDED", /got 17/);
    rejects(quantity(), 1.123456, "DECIMAL_PRECISION_EXCEEDED");
  });

  test("rejects a numeric string with INVALID_PARAMETER (spec: quantities are numbers)", () => {
    rejects(quantity(), "1.5", "INVALID_PARAMETER", /Expected a number, received a string/);
  });

  test("takes a places limit and bounds", () => {
    const kind = quantity({ places: 2, min: 0, max: 10 });
    rejects(kind, 1.234, "DECIMAL_PRECISION_EXCEEDED");
    rejects(kind, 11, "INVALID_PARAMETER", /between 0 and 10/);
  });

  test("writes plain notation to XML and reads it back", () => {
    assert.equal(quantity().toXml(0.00001), "0.00001");
    assert.equal(quantity().toXml(1e21), "1000000000000000000000");
    assert.deepEqual(quantity().fromXml("2.50"), { ok: true, value: 2.5 });
  });
});

describe("integer and boolean", () => {
  test("integer accepts whole numbers within bounds", () => {
    assert.equal(accepts(integer({ min: 0, max: 10 }), 10), 10);
    rejects(integer({ min: 0, max: 10 }), 11, "INVALID_PARAMETER", /at most 10/);
    rejects(integer({ min: 0, max: 10 }), -1, "INVALID_PARAMETER", /at least 0/);
  });

  test("integer rejects fractions, unsafe integers and strings with INVALID_PARAMETER naming the type", () => {
    rejects(integer(), 1.5, "INVALID_PARAMETER", /Expected an integer, received the number 1\.5/);
    rejects(integer(), 2 ** 60, "INVALID_PARAMETER", /Expected an integer/);
    rejects(integer(), "1", "INVALID_PARAMETER", /Expected an integer, received a string/);
  });

  test("integer XML codec", () => {
    assert.equal(integer().toXml(-12), "-12");
    assert.deepEqual(integer().fromXml(" 12 "), { ok: true, value: 12 });
    assert.deepEqual(integer().fromXml("1.5"), { ok: false });
  });

  test("boolean rejects the string 'true'", () => {
    assert.equal(accepts(boolean(), false), false);
    rejects(boolean(), "true", "INVALID_PARAMETER", /Expected a boolean, received a string/);
  });

  test("boolean XML codec", () => {
    assert.equal(boolean().toXml(true), "true");
    assert.deepEqual(boolean().fromXml("False"), { ok: true, value: false });
    assert.deepEqual(boolean().fromXml("yes"), { ok: false });
  });
});

describe("date and dateTime", () => {
  test("date accepts real calendar dates only", () => {
    assert.equal(accepts(date(), "2024-02-29"), "2024-02-29");
    for (const input of [
      "2023-02-29",
      "2024-04-31",
      "2024-13-01",
      "2024-2-1",
      "2024-02-29T00:00:00",
      "20240229",
    ]) {
      rejects(date(), input, "INVALID_PARAMETER", /YYYY-MM-DD/);
    }
    rejects(date(), 20240229, "INVALID_PARAMETER", /Expected a date string/);
  });

  test("dateTime accepts an optional offset and optional fractional seconds", () => {
    for (const input of [
      "2024-02-29T13:45:00",
      "2024-02-29T13:45:00-05:00",
      "2024-02-29T13:45:00.123Z",
      "2024-02-29T13:45:00+05:30",
    ]) {
      assert.equal(accepts(dateTime(), input), input);
    }
    for (const input of [
      "2024-02-29",
      "2023-02-29T13:45:00",
      "2024-02-29T13:45:00+0530",
      "2024-02-29 13:45:00",
      "2024-02-29T25:00:00",
    ]) {
      rejects(dateTime(), input, "INVALID_PARAMETER", /ISO 8601/);
    }
  });

  test("dateTime writes the application's form: whole seconds and a ±hh:mm offset", () => {
    assert.equal(dateTime().toXml("2024-02-29T13:45:00.999Z"), "2024-02-29T13:45:00+00:00");
    assert.equal(dateTime().toXml("2024-02-29T13:45"), "2024-02-29T13:45:00");
    assert.equal(dateTime().toXml("2024-02-29T13:45:07-05:00"), "2024-02-29T13:45:07-05:00");
  });

  test("date and dateTime read XML", () => {
    assert.deepEqual(date().fromXml("2024-01-15"), { ok: true, value: "2024-01-15" });
    assert.deepEqual(date().fromXml("15/01/2024"), { ok: false });
    assert.deepEqual(dateTime().fromXml("2024-01-15T10:30:00-05:00"), {
      ok: true,
      value: "2024-01-15T10:30:00-05:00",
    });
    assert.deepEqual(dateTime().fromXml("yesterday"), { ok: false });
  });
});

describe("dateOrDateTime (modified-date filters)", () => {
  test("accepts a calendar date or a date-time, and writes a date-time in the application's form", () => {
    const kind = dateOrDateTime();
    assert.equal(accepts(kind, "2024-02-29"), "2024-02-29");
    assert.equal(accepts(kind, "2024-01-15T10:30"), "2024-01-15T10:30");
    assert.equal(kind.toXml("2024-01-15"), "2024-01-15");
    assert.equal(kind.toXml("2024-01-15T10:30Z"), "2024-01-15T10:30:00+00:00");
    for (const impossible of ["2023-02-29", "2024-02-30T10:00:00", "2024-13-01", "yesterday"]) {
      rejects(kind, impossible, "INVALID_PARAMETER");
    }
  });
});

describe("query strings: one vocabulary with body fields", () => {
  /** What a query parameter of this kind gives for `text`: its value, or the error's code. */
  const fromQuery = (kind: AnyFieldKind, text: string): unknown => {
    const result = kind.schema.safeParse(kind.fromQuery(text));
    return result.success ? result.data : errorFromZod(result.error, "q").code;
  };

  test("each kind reads its JSON type from the text, and refuses what a body field would refuse", () => {
    assert.equal(fromQuery(boolean(), "true"), true);
    assert.equal(fromQuery(boolean(), "false"), false);
    assert.equal(fromQuery(boolean(), "yes"), "INVALID_PARAMETER");
    assert.equal(fromQuery(integer({ min: 1, max: 150 }), "150"), 150);
    assert.equal(fromQuery(integer({ min: 1, max: 150 }), "151"), "INVALID_PARAMETER");
    assert.equal(fromQuery(integer(), "1e3"), "INVALID_PARAMETER");
    assert.equal(fromQuery(quantity(), "2.5"), 2.5);
    assert.equal(fromQuery(date(), "2024-02-30"), "INVALID_PARAMETER");
    assert.equal(fromQuery(amount(), "1.005"), "DECIMAL_PRECISION_EXCEEDED");
    assert.equal(fromQuery(text({ max: 3, min: 1 }), "abcd"), "STRING_TOO_LONG");
    assert.equal(fromQuery(text({ max: 3, min: 1 }), "\u0001"), "UNSUPPORTED_CHARACTER");
    assert.equal(fromQuery(enumOf(["a", "b"]), "c"), "INVALID_PARAMETER");
  });

  test("each kind gives its response schema, nullable", () => {
    assert.deepEqual(quantity().outputSchema(), { type: ["number", "null"] });
    assert.deepEqual(integer().outputSchema(), { type: ["integer", "null"] });
    assert.deepEqual(date().outputSchema(), { type: ["string", "null"], format: "date" });
    assert.equal((amount().outputSchema().type as string[])[1], "null");
    assert.deepEqual(enumOf(["a", "b"]).outputSchema(), {
      type: ["string", "null"],
      enum: ["a", "b", null],
      description: "Open enumeration",
    });
  });
});

describe("identifiers, enumerations, e-mail and URLs", () => {
  test("uuid accepts an RFC 4122 UUID in any case and rejects others", () => {
    assert.equal(
      accepts(uuid(), "3f2b6c1e-8f0a-4c59-9a4e-2d1b7c9e0f13"),
      "3f2b6c1e-8f0a-4c59-9a4e-2d1b7c9e0f13",
    );
    assert.equal(
      accepts(uuid(), "3F2B6C1E-8F0A-4C59-9A4E-2D1B7C9E0F13"),
      "3F2B6C1E-8F0A-4C59-9A4E-2D1B7C9E0F13",
    );
    for (const input of [
      "{3f2b6c1e-8f0a-4c59-9a4e-2d1b7c9e0f13}",
      "3f2b6c1e8f0a4c599a4e2d1b7c9e0f13",
      "not-a-uuid",
    ])
      rejects(uuid(), input, "INVALID_PARAMETER", /UUID/);
  });

  test("uuid is braced and upper-case in XML, and read back in lower case", () => {
    assert.equal(
      uuid().toXml("3f2b6c1e-8f0a-4c59-9a4e-2d1b7c9e0f13"),
      "{3F2B6C1E-8F0A-4C59-9A4E-2D1B7C9E0F13}",
    );
    assert.deepEqual(uuid().fromXml("{3F2B6C1E-8F0A-4C59-9A4E-2D1B7C9E0F13}"), {
      ok: true,
      value: "3f2b6c1e-8f0a-4c59-9a4e-2d1b7c9e0f13",
    });
    assert.deepEqual(uuid().fromXml("{nope}"), { ok: false });
  });

  test("id accepts 1 to 36 characters", () => {
    assert.equal(accepts(id(), "80000001-1700000000"), "80000001-1700000000");
    assert.equal(accepts(id(), "x".repeat(36)), "x".repeat(36));
    rejects(id(), "", "INVALID_PARAMETER", /1 to 36/);
    rejects(id(), "x".repeat(37), "INVALID_PARAMETER", /1 to 36/);
    rejects(id(), 5, "INVALID_PARAMETER", /Expected an ID string/);
  });

  test("enumOf is closed and lists the allowed values", () => {
    const kind = enumOf(["added", "removed"]);
    assert.equal(accepts(kind, "added"), "added");
    rejects(kind, "moved", "INVALID_PARAMETER", /expected one of "added", "removed"/);
  });

  test("enumOf maps values to the application's XML spelling and back", () => {
    const kind = enumOf(["accounts_payable", "bank"], { xml: { accounts_payable: "AccountsPayable" } });
    assert.equal(kind.toXml("accounts_payable"), "AccountsPayable");
    assert.equal(kind.toXml("bank"), "bank");
    assert.deepEqual(kind.fromXml("AccountsPayable"), { ok: true, value: "accounts_payable" });
    assert.deepEqual(kind.fromXml("Equity"), { ok: false });
  });

  test("email checks the form and the length", () => {
    assert.equal(accepts(email({ max: 30 }), "anna@example.com"), "anna@example.com");
    rejects(email({ max: 30 }), "anna@", "INVALID_PARAMETER", /e-mail address/);
    rejects(email({ max: 20 }), "anna.very.long@example.com", "STRING_TOO_LONG", /at most 20/);
  });

  test("url is https-only by default and checks the length", () => {
    assert.equal(accepts(url({ max: 100 }), "https://example.com/hook"), "https://example.com/hook");
    rejects(url({ max: 100 }), "http://example.com/hook", "INVALID_PARAMETER", /https:\/\//);
    rejects(url({ max: 100 }), "example.com", "INVALID_PARAMETER");
    rejects(url({ max: 20 }), "https://example.com/a/very/long/path", "STRING_TOO_LONG", /at most 20/);
    assert.equal(
      accepts(url({ max: 100, https: false }), "http://localhost:3000/back"),
      "http://localhost:3000/back",
    );
  });
});

describe("JSON Schema", () => {
  const every = {
    text: text({ max: 31 }),
    memo: text({ max: 4095, clearable: true }),
    amount: amount(),
    price: price(),
    percent: percent(),
    decimal: decimal({ places: 3, min: "0" }),
    quantity: quantity(),
    integer: integer({ min: 1, max: 150 }),
    boolean: boolean(),
    date: date(),
    dateTime: dateTime(),
    uuid: uuid(),
    id: id(),
    enum: enumOf(["a", "b"]),
    email: email({ max: 1023 }),
    url: url({ max: 2048 }),
  };

  test("z.toJSONSchema works on an object made of every kind, for input and output, without fallbacks", () => {
    const schema = strictObject(every);
    for (const io of ["input", "output"] as const) {
      const json = z.toJSONSchema(schema, { io }) as {
        additionalProperties?: unknown;
        properties?: Record<string, Record<string, unknown>>;
      };
      assert.equal(json.additionalProperties, false);
      assert.deepEqual(Object.keys(json.properties ?? {}), Object.keys(every));
    }
  });

  test("fragments carry the constraints clients need", () => {
    assert.deepEqual(every.text.jsonSchema(), {
      type: "string",
      maxLength: 31,
      description: every.text.jsonSchema()["description"],
    });
    assert.equal(every.amount.jsonSchema()["pattern"], "^-?(0|[1-9]\\d{0,14})(\\.\\d{1,2})?$");
    assert.deepEqual(every.integer.jsonSchema(), { type: "integer", minimum: 1, maximum: 150 });
    assert.deepEqual(every.enum.jsonSchema(), { type: "string", enum: ["a", "b"] });
    assert.equal(every.uuid.jsonSchema()["format"], "uuid");
    assert.equal("$schema" in every.date.jsonSchema(), false);
  });

  test("a clearable field is documented as nullable, a non-clearable one is not", () => {
    const memo = every.memo.jsonSchema() as { anyOf?: unknown[] };
    assert.deepEqual(memo.anyOf?.[1], { type: "null" });
    assert.equal("anyOf" in every.text.jsonSchema(), false);
  });

  test("the decimal pattern in the schema agrees with the validator", () => {
    const pattern = new RegExp(String(every.amount.jsonSchema()["pattern"]));
    for (const input of ["12", "12.5", "12.50", "12.505", "1e3", ".5", "007"]) {
      assert.equal(pattern.test(input), amount().schema.safeParse(input).success, input);
    }
  });

  test("jsonSchema returns a copy, so callers cannot change the kind", () => {
    every.id.jsonSchema()["maxLength"] = 1;
    assert.equal(every.id.jsonSchema()["maxLength"], 36);
  });
});

describe("every kind", () => {
  const kinds: Record<string, AnyFieldKind> = {
    text: text({ max: 8, min: 2 }),
    amount: amount({ min: "-50", max: "50" }),
    price: price(),
    percent: percent(),
    decimal: decimal({ places: 0, min: "5", max: "9" }),
    quantity: quantity({ min: -3, max: 3 }),
    integer: integer({ min: 5000, max: 6000 }),
    boolean: boolean(),
    date: date(),
    dateTime: dateTime(),
    uuid: uuid(),
    id: id(),
    enum: enumOf(["a", "b", "c"]),
    email: email({ max: 60 }),
    url: url({ max: 60 }),
  };

  test("is recognised as a field kind; plain Zod schemas are not", () => {
    for (const kind of Object.values(kinds)) assert.equal(isFieldKind(kind), true);
    assert.equal(isFieldKind(z.string()), false);
    assert.equal(isFieldKind({ kind: "text" }), false);
  });

  test("output turns absent values into null (spec: response fields are all present)", () => {
    for (const kind of Object.values(kinds)) {
      assert.equal(kind.output(null), null);
      assert.equal(kind.output(undefined), null);
    }
  });

  test("fake() without a random source is deterministic", () => {
    for (const kind of Object.values(kinds)) assert.deepEqual(kind.fake(), kind.fake());
  });

  test("property: a fake value passes its own schema and survives the XML round trip", () => {
    fc.assert(
      fc.property(randomValues, (values) => {
        for (const [name, kind] of Object.entries(kinds)) {
          const value = kind.fake(cycle(values));
          const parsed = kind.schema.safeParse(value);
          assert.equal(
            parsed.success,
            true,
            `${name}: ${JSON.stringify(value)} ${JSON.stringify(parsed.error?.issues)}`,
          );
          const decoded = kind.fromXml(kind.toXml(value));
          assert.ok(decoded.ok, `${name}: ${JSON.stringify(value)}`);
          if (name === "uuid") assert.equal(decoded.value, String(value).toLowerCase());
          else if (name === "price" || name === "percent") assert.equal(Number(decoded.value), Number(value));
          else assert.deepEqual(decoded.value, value, name);
        }
      }),
    );
  });
});
