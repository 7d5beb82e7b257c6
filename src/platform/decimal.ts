import Big from "big.js";

/**
 * Decimal rules of the spec's "Conventions": "Amounts are decimal strings. Most amounts allow up to
 * 2 decimal places. Prices, costs and rates allow up to 5. More places are rejected with
 * DECIMAL_PRECISION_EXCEEDED and never rounded silently." Percentages are decimal strings too.
 *
 * Arithmetic goes through `big.js`; no value is ever turned into a binary float on the way in.
 *
 * Accepted input grammar (the JSON number grammar without exponent, written as a string):
 * `-?(0|[1-9][0-9]*)(\.[0-9]+)?`. So `"12"`, `"-3.5"`, `"0.10"` and `"-0"` are accepted, while
 * `"1e3"`, `" 1"`, `"+1"`, `"1."`, `".5"`, `"007"`, `"1,5"` and `""` are not decimals. Rejecting
 * these keeps one unambiguous spelling per value that every client's formatter already produces,
 * and lets the JSON Schema `pattern` state the rule exactly.
 *
 * Places are counted as written: `"1.230"` has three places even though its value has two. That
 * keeps the check identical to the published pattern and never reinterprets what was sent.
 */

/** Why {@link parseDecimal} refused a value. */
export type DecimalFailure = "not_a_decimal" | "too_many_digits" | "too_many_places" | "out_of_range";

/**
 * Digits allowed before the decimal point: the application's amounts, prices and quantities stay
 * far below 10^15, and a longer value is a mistake, never a figure to forward to it.
 */
export const MAX_INTEGER_DIGITS = 15;

/** Limits of a decimal field: places allowed, and optional inclusive bounds as decimal strings. */
export interface DecimalLimits {
  /** Maximum number of digits after the decimal point (2 for amounts, 5 for prices, costs, rates). */
  places: number;
  /** Inclusive lower bound, a decimal string (never a float). */
  min?: string;
  /** Inclusive upper bound, a decimal string (never a float). */
  max?: string;
}

/** The result of {@link parseDecimal}. `value` is the string exactly as sent (never padded). */
export type DecimalParseResult = { ok: true; value: string } | { ok: false; reason: DecimalFailure };

const DECIMAL = /^-?(0|[1-9]\d*)(?:\.(\d+))?$/;

/**
 * Parses a decimal string with a places limit (spec "Conventions", amounts). JSON numbers and
 * every other non-string are `not_a_decimal`: amounts are decimal strings so that no precision is
 * lost in a client's float parser. Checks run in the order syntax, places, range, so a value that
 * is both too precise and out of range reports `too_many_places` (the never-round rule comes first).
 */
export function parseDecimal(input: unknown, limits: DecimalLimits): DecimalParseResult {
  if (typeof input !== "string") return { ok: false, reason: "not_a_decimal" };
  const match = DECIMAL.exec(input);
  if (!match) return { ok: false, reason: "not_a_decimal" };
  if ((match[1]?.length ?? 0) > MAX_INTEGER_DIGITS) return { ok: false, reason: "too_many_digits" };
  if ((match[2]?.length ?? 0) > limits.places) return { ok: false, reason: "too_many_places" };
  if (limits.min !== undefined || limits.max !== undefined) {
    const value = new Big(input);
    if (limits.min !== undefined && value.lt(limits.min)) return { ok: false, reason: "out_of_range" };
    if (limits.max !== undefined && value.gt(limits.max)) return { ok: false, reason: "out_of_range" };
  }
  return { ok: true, value: input };
}

/** Number of digits written after the decimal point of a string accepted by {@link parseDecimal}. */
export function writtenPlaces(input: string): number {
  const point = input.indexOf(".");
  return point < 0 ? 0 : input.length - point - 1;
}

/** Significant decimal places of a value (trailing zeros do not count): `1.50` has 1. */
export function decimalPlaces(value: Big): number {
  return Math.max(0, value.c.length - value.e - 1);
}

/**
 * Decimal places of a JSON number, exactly as its shortest round-trip spelling shows them
 * (`0.1 + 0.2` has 17). Used for quantities, which the spec sends as numbers.
 */
export function placesOfNumber(value: number): number {
  if (!Number.isFinite(value)) return Number.POSITIVE_INFINITY;
  return decimalPlaces(new Big(value));
}

/**
 * The JSON Schema `pattern` for a decimal string with at most `places` places, the exact grammar
 * that {@link parseDecimal} accepts.
 */
export function decimalPattern(places: number): string {
  const integer = `(0|[1-9]\\d{0,${MAX_INTEGER_DIGITS - 1}})`;
  return places > 0 ? `^-?${integer}(\\.\\d{1,${places}})?$` : `^-?${integer}$`;
}

/**
 * Formats an amount for output with at least `places` decimal places (`"12.5"` → `"12.50"`, the
 * spec's amounts have 2). It pads but never rounds: a value with more places keeps them all, so
 * output never loses what the application stored. Negative zero prints as zero.
 *
 * @throws Error when `value` is not a number `big.js` can read (a programming error).
 */
export function formatAmount(value: Big | string, places = 2): string {
  if (typeof value === "string") {
    // Plain decimals (every value the reader and the input rules pass on) without big.js: the same
    // digits, read as text (decision 0035: an answer's amounts were parsed three times each).
    const plain = PLAIN_DECIMAL.exec(value);
    if (plain) return formatted(plain[1] === "-", plain[2] ?? "0", plain[3] ?? "", places);
  }
  const big = value instanceof Big ? value : new Big(value);
  const plain = big.eq(0) ? big.abs() : big;
  return plain.toFixed(Math.max(places, decimalPlaces(plain)));
}

/** A decimal in plain notation: sign, integer digits, fraction digits. */
const PLAIN_DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * The canonical text of a plain decimal, as `big.js` writes it: no leading zeros, the fraction's
 * trailing zeros dropped and then padded back to at least `places`, and no sign on zero.
 */
function formatted(negative: boolean, integer: string, fraction: string, places: number): string {
  let start = 0;
  while (start < integer.length - 1 && integer.charCodeAt(start) === 48) start += 1;
  const whole = integer.slice(start);
  let end = fraction.length;
  while (end > 0 && fraction.charCodeAt(end - 1) === 48) end -= 1;
  const significant = fraction.slice(0, end);
  const digits = significant.length < places ? significant.padEnd(places, "0") : significant;
  const zero = whole === "0" && significant === "";
  return `${negative && !zero ? "-" : ""}${whole}${digits === "" ? "" : `.${digits}`}`;
}

const LENIENT_DECIMAL = /^([+-]?)(?=\.?\d)(\d*)(?:\.(\d*))?$/;

/**
 * Reads a decimal as the application writes it in XML, more leniently than request input
 * (surrounding whitespace, a leading `+`, `.5` and `5.` are accepted), and returns it in plain
 * notation without trailing zeros. Null when the text is not a decimal, so the XML decoder can
 * report LEDGER_VALUE_UNREADABLE instead of guessing.
 */
export function readDecimalText(text: string): string | null {
  const parts = LENIENT_DECIMAL.exec(text.trim());
  if (!parts) return null;
  // As big.js would print it (`toFixed()`), read as text: no digit is ever turned into a float.
  return formatted(parts[1] === "-", parts[2] || "0", parts[3] ?? "", 0);
}
