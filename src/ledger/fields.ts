import Big from "big.js";
import { z } from "zod";
import type { ErrorCode } from "../errors/catalogue.ts";
import { errorFromZod, serviceIssue } from "../errors/from-zod.ts";
import {
  decimalPattern,
  formatAmount,
  MAX_INTEGER_DIGITS,
  parseDecimal,
  placesOfNumber,
  readDecimalText,
  writtenPlaces,
} from "../platform/decimal.ts";
import type { LedgerRecordId } from "../platform/ids.ts";
import { formatCodePoint, normalizeText } from "../platform/text.ts";
import { maskedSecret } from "./xml/redact.ts";

/**
 * The closed set of field kinds (house style §2.3, "Field kinds form a closed set"). Every request
 * field of every resource is one of these kinds, and each kind owns everything about one spec
 * convention: its Zod input schema raising the spec's error codes, whether null clears it, its JSON
 * Schema fragment, its output shape, its XML text codec and a fake value.
 *
 * How input errors reach the caller: a kind raises a Zod custom issue made with `serviceIssue`, and
 * `errorFromZod` turns the first issue into a ServiceError whose `param` is the field path (for
 * example `lines[2].memo`). Each kind's schema starts with a guard that handles null (clear, or
 * FIELD_NOT_CLEARABLE) and the JSON type (INVALID_PARAMETER naming the expected type) itself, as
 * custom issues. Zod's own `invalid_type` issue is thereby only ever raised for a missing value,
 * which is what `errorFromZod` reports it as.
 *
 * Adding a kind is rare and reviewed; resources compose these, they never define their own.
 */

/** Names of the field kinds: the closed set. */
export type FieldKindName =
  | "text"
  | "amount"
  | "price"
  | "percent"
  | "decimal"
  | "quantity"
  | "integer"
  | "boolean"
  | "date"
  | "dateTime"
  | "dateOrDateTime"
  | "uuid"
  | "id"
  | "enum"
  | "email"
  | "url"
  | "duration";

/** A value in [0, 1), like `Math.random()`; passed in so that fakes stay reproducible. */
export type RandomSource = () => number;

/** Result of decoding a field's XML text; `ok: false` becomes a LEDGER_VALUE_UNREADABLE warning. */
export type XmlDecoded<T> = { ok: true; value: T } | { ok: false };

/** A JSON Schema fragment (draft 2020-12, as OpenAPI 3.1 uses), without the `$schema` key. */
export type JsonSchemaFragment = Record<string, unknown>;

/** The value a kind's schema produces: null only for clearable fields (null means "clear it"). */
export type InputValue<T, C extends boolean> = C extends true ? T | null : T;

/**
 * One field kind. `T` is the value type, `C` whether the field is clearable (spec "Conventions":
 * "Fields that can be cleared with null are marked clearable. Sending null for any other field
 * returns FIELD_NOT_CLEARABLE").
 */
export interface FieldKind<T, C extends boolean = boolean> {
  /** Which kind of the closed set this is. */
  readonly kind: FieldKindName;
  /** Whether null is accepted, meaning "clear the stored value". */
  readonly clearable: C;
  /** The input schema. Absent/undefined is handled by {@link strictObject} ("not sent"). */
  readonly schema: z.ZodType<InputValue<T, C>>;
  /** The JSON Schema of the input, for OpenAPI. */
  jsonSchema(): JsonSchemaFragment;
  /**
   * The JSON Schema of the response value (nullable: spec "Absent values are null"), for OpenAPI.
   * Enumerations are open on output (spec "Enumerations marked open may gain values").
   */
  outputSchema(): JsonSchemaFragment;
  /**
   * The JSON value a query-string text stands for (`"true"` → true, `"12"` → 12), to be checked by
   * {@link schema} like a JSON body value: query parameters and body fields share one vocabulary.
   * Text that does not read as the kind's JSON type is passed on unchanged, so the schema refuses it
   * with the same error a body field would get.
   */
  fromQuery(text: string): unknown;
  /** The response value: spec "Response fields are all present. Absent values are null." */
  output(value: T | null | undefined): T | null;
  /** The text of the XML element. Escaping is the XML writer's job, not the kind's. */
  toXml(value: T): string;
  /** Reads the text of an XML element as the application writes it. */
  fromXml(text: string): XmlDecoded<T>;
  /** A valid sample value for the simulator and factories; deterministic without `random`. */
  fake(random?: RandomSource): T;
}

/** Any field kind, whatever its value type. */
// Methods are bivariant in their parameters, so every FieldKind<T, C> is assignable to this.
export type AnyFieldKind = FieldKind<unknown, boolean>;

/** The value type of a field kind. */
export type FieldValue<K> = K extends FieldKind<infer T, boolean> ? T : never;

/**
 * Options shared by every factory.
 *
 * Factories return `FieldKind<T, NoInfer<C>>` so that `C` comes from the `clearable` option alone:
 * without it, a kind written inside a shape (whose expected type is {@link AnyFieldKind}) would
 * infer `C = boolean` from that context and type every field as nullable.
 */
export interface ClearableOption<C extends boolean> {
  /** Accept null to clear the stored value. Default false (null gives FIELD_NOT_CLEARABLE). */
  clearable?: C;
}

/** How one kind is built; the shared parts (null, type guard, JSON Schema) are added by `defineKind`. */
interface KindSpec<T> {
  kind: FieldKindName;
  /** Phrase naming the expected JSON type in INVALID_PARAMETER messages ("a string"). */
  expected: string;
  /** Whether a non-null JSON value has the right type to be checked further. */
  accepts: (value: unknown) => boolean;
  /** The schema for a value that passed `accepts`; its failures must be custom issues or formats. */
  base: z.ZodType<T>;
  /** The response value's JSON Schema without null (default: a string). */
  outputJson?: JsonSchemaFragment;
  /** Reads a query-string text as the kind's JSON value (default: the text itself). */
  fromQuery?: (text: string) => unknown;
  output?: (value: T) => T;
  toXml: (value: T) => string;
  fromXml: (text: string) => XmlDecoded<T>;
  fake: (random: RandomSource) => T;
}

/** Kinds built here, so {@link strictObject} can tell a kind from a plain Zod schema. */
const builtKinds = new WeakSet<object>();

/** Whether a value is a field kind made by one of this module's factories. */
export function isFieldKind(value: unknown): value is AnyFieldKind {
  return typeof value === "object" && value !== null && builtKinds.has(value);
}

function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return `the number ${String(value)}`;
  if (typeof value === "string") return "a string";
  if (typeof value === "boolean") return `the boolean ${String(value)}`;
  if (typeof value === "object") return "an object";
  return typeof value;
}

type IssueSink = { issues: z.core.$ZodRawIssue[]; value: unknown };

function raise(ctx: IssueSink, code: ErrorCode, message: string, details?: Record<string, unknown>): void {
  ctx.issues.push({ ...serviceIssue(code, message, details), input: ctx.value });
}

function defineKind<T, C extends boolean>(spec: KindSpec<T>, clearable: C): FieldKind<T, C> {
  const inner = clearable ? spec.base.nullable() : spec.base;
  // A preprocess step is the one place that sees null and wrong JSON types before the base schema.
  // Zod's JSON Schema generator ignores it in both io modes and describes `inner` instead.
  const schema = z.preprocess((value, ctx) => {
    if (value === undefined) return value;
    if (value === null) {
      if (!clearable) {
        ctx.addIssue(
          serviceIssue(
            "FIELD_NOT_CLEARABLE",
            "This field cannot be cleared with null. Omit it to leave it unchanged, or send a value.",
          ),
        );
      }
      return value;
    }
    if (!spec.accepts(value)) {
      ctx.addIssue(
        serviceIssue("INVALID_PARAMETER", `Expected ${spec.expected}, received ${describeJson(value)}.`),
      );
    }
    return value;
    // `inner` is `ZodNullable<…>` exactly when `C` is true, which TypeScript cannot follow through
    // the runtime `clearable` flag; the cast restates that link.
  }, inner) as unknown as z.ZodType<InputValue<T, C>>;
  let cachedJsonSchema: JsonSchemaFragment | undefined;
  const kind: FieldKind<T, C> = {
    kind: spec.kind,
    clearable,
    schema,
    jsonSchema() {
      cachedJsonSchema ??= fragment(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }));
      return structuredClone(cachedJsonSchema);
    },
    outputSchema() {
      const { type = "string", ...rest } = spec.outputJson ?? {};
      const schema: JsonSchemaFragment = { type: [type, "null"], ...structuredClone(rest) };
      // A nullable enumeration lists null among its values.
      if (Array.isArray(schema.enum)) schema.enum = [...(schema.enum as unknown[]), null];
      return schema;
    },
    fromQuery: spec.fromQuery ?? ((text) => text),
    output(value) {
      if (value === null || value === undefined) return null;
      return spec.output ? spec.output(value) : value;
    },
    toXml: spec.toXml,
    fromXml: spec.fromXml,
    fake(random) {
      return spec.fake(random ?? seededRandom(0x5eed));
    },
  };
  builtKinds.add(kind);
  return Object.freeze(kind);
}

function fragment(schema: object): JsonSchemaFragment {
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  return rest;
}

/** mulberry32: a tiny deterministic generator so `fake()` without a source is reproducible. */
function seededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pickInt(random: RandomSource, min: number, max: number): number {
  return min + Math.min(max - min, Math.floor(random() * (max - min + 1)));
}

function pick<V>(random: RandomSource, values: readonly [V, ...V[]]): V {
  return values[pickInt(random, 0, values.length - 1)] ?? values[0];
}

const isString = (value: unknown): value is string => typeof value === "string";
const ok = <T>(value: T): XmlDecoded<T> => ({ ok: true, value });
const UNREADABLE = { ok: false } as const;

// ---------------------------------------------------------------------------------------------
// text

/** Options of {@link text}. */
export interface TextOptions<C extends boolean> extends ClearableOption<C> {
  /** Maximum length in characters after NFC (one character is one Windows-1252 byte). */
  max: number;
  /** Minimum length; default 0. */
  min?: number;
  /**
   * A secret (a card number, a social security number, a password; decision 0032): accepted in
   * full on input, always masked on output — the last four characters, or nothing for `all`.
   */
  secret?: "last4" | "all";
}

const FAKE_WORDS = [
  "Müller",
  "Café",
  "Grüße",
  "Søren",
  "Œuvre",
  "€ 12",
  "Straße",
  "Ñandú",
  "Zoë",
  "Björk",
  "déjà vu",
] as const;

/**
 * The application's code page (Windows-1252, no control characters): the value's NFC form, or null
 * after UNSUPPORTED_CHARACTER naming the first character outside it.
 */
function inCodePage(ctx: z.core.ParsePayload<string>): string | null {
  const result = normalizeText(ctx.value);
  if (result.ok) return result.value;
  const { codePoint, character, index, suggestion } = result;
  const shown = character === null ? "" : ` (${JSON.stringify(character)})`;
  const hint =
    suggestion === null
      ? ""
      : suggestion === ""
        ? " Remove it."
        : ` Use ${JSON.stringify(suggestion)} instead.`;
  raise(
    ctx,
    "UNSUPPORTED_CHARACTER",
    `Character ${formatCodePoint(codePoint)}${shown} at index ${index} cannot be stored by the application, which accepts Windows-1252 text only.${hint}`,
    { codePoint, character, index, suggestion },
  );
  return null;
}

/**
 * Text (spec "Conventions": text is stored in a Windows-1252 compatible code page; decomposed
 * accents are normalised to composed form first). Checks, in order: NFC normalisation, then the code
 * page (UNSUPPORTED_CHARACTER with `codePoint`, `character`, `index`, `suggestion`), then length
 * (STRING_TOO_LONG naming the maximum). The value passed on is the NFC form.
 */
export function text<C extends boolean = false>(options: TextOptions<C>): FieldKind<string, NoInfer<C>> {
  const { max, min = 0, secret } = options;
  // One check (NFC, then the code page, then the length): each check is a step of Zod's per-value work.
  const base = z
    .string()
    .check((ctx) => {
      const normalized = inCodePage(ctx);
      if (normalized === null) return;
      ctx.value = normalized;
      if (ctx.value.length > max) {
        raise(
          ctx,
          "STRING_TOO_LONG",
          `Text is ${ctx.value.length} characters long; this field allows at most ${max} characters.`,
        );
      } else if (ctx.value.length < min) {
        raise(
          ctx,
          "INVALID_PARAMETER",
          `Text is ${ctx.value.length} characters long; this field needs at least ${min}.`,
        );
      }
    })
    .meta({
      ...(min > 0 ? { minLength: min } : {}),
      maxLength: max,
      description: `Text of up to ${max} characters in the Windows-1252 character set (normalised to NFC).`,
    });
  return defineKind<string, C>(
    {
      kind: "text",
      expected: "a string",
      accepts: isString,
      base,
      ...(secret
        ? {
            output: (value: string) => maskedSecret(value, secret),
            outputJson: {
              type: "string",
              description:
                secret === "all"
                  ? "Never shown: always eight bullets (•) when set."
                  : "Masked: bullets (•) and the last four characters only.",
            },
          }
        : {}),
      toXml: (value) => value,
      fromXml: (value) => ok(value),
      fake: (random) => {
        let out = pick(random, FAKE_WORDS);
        while (out.length < min) out += ` ${pick(random, FAKE_WORDS)}`;
        return out.slice(0, max).padEnd(min, "x");
      },
    },
    options.clearable ?? (false as C),
  );
}

// ---------------------------------------------------------------------------------------------
// decimal strings: amounts, prices, costs, rates, percentages

/** Options of {@link decimal} and its aliases. */
export interface DecimalOptions<C extends boolean> extends ClearableOption<C> {
  /** Inclusive lower bound, a decimal string. */
  min?: string;
  /** Inclusive upper bound, a decimal string. */
  max?: string;
}

type DecimalKindName = "amount" | "price" | "percent" | "decimal";

function decimalKind<C extends boolean>(
  kind: DecimalKindName,
  places: number,
  options: DecimalOptions<C>,
): FieldKind<string, NoInfer<C>> {
  const { min, max } = options;
  for (const bound of [min, max]) {
    if (bound !== undefined && !parseDecimal(bound, { places: Number.MAX_SAFE_INTEGER }).ok) {
      throw new Error(`Decimal bound ${JSON.stringify(bound)} is not a decimal string.`);
    }
  }
  const example = kind === "percent" ? "7.5" : places >= 2 ? "12.50" : "12";
  const rangeText =
    min !== undefined && max !== undefined
      ? `between ${min} and ${max}`
      : min !== undefined
        ? `at least ${min}`
        : max !== undefined
          ? `at most ${max}`
          : "";
  const base = z
    .string()
    .check((ctx) => {
      const result = parseDecimal(ctx.value, {
        places,
        ...(min === undefined ? {} : { min }),
        ...(max === undefined ? {} : { max }),
      });
      if (result.ok) return;
      switch (result.reason) {
        case "not_a_decimal":
          raise(
            ctx,
            "INVALID_PARAMETER",
            `Expected a decimal string such as "${example}": digits with an optional leading "-" and decimal point, without exponent, spaces, "+" or leading zeros.`,
          );
          return;
        case "too_many_digits":
          raise(
            ctx,
            "INVALID_PARAMETER",
            `At most ${MAX_INTEGER_DIGITS} digits are allowed before the decimal point.`,
          );
          return;
        case "too_many_places":
          raise(
            ctx,
            "DECIMAL_PRECISION_EXCEEDED",
            `This field allows at most ${places} decimal places, got ${writtenPlaces(ctx.value)}. Round the value yourself; the service never rounds.`,
          );
          return;
        case "out_of_range":
          raise(ctx, "INVALID_PARAMETER", `The value must be ${rangeText}.`);
          return;
        default: {
          const unreachable: never = result.reason;
          throw new Error(`Unhandled decimal failure ${String(unreachable)}`);
        }
      }
    })
    .meta({
      pattern: decimalPattern(places),
      description:
        `Decimal string with up to ${places} decimal places` +
        (kind === "percent" ? ', in percent ("7.5" means 7.5 %)' : "") +
        (rangeText ? `, ${rangeText}` : "") +
        ". More places are rejected, never rounded.",
      examples: [example],
    });
  const low = new Big(min ?? (kind === "percent" ? "0" : "-1000"));
  const high = new Big(max ?? (kind === "percent" ? "100" : "10000"));
  return defineKind<string, C>(
    {
      kind,
      expected: `a decimal string such as "${example}"`,
      outputJson: { type: "string", description: "Decimal string" },
      accepts: isString,
      base,
      ...(kind === "amount" ? { output: (value: string) => formatAmount(value, 2) } : {}),
      toXml: (value) => value,
      fromXml: (value) => {
        const read = readDecimalText(value);
        if (read === null) return UNREADABLE;
        return ok(kind === "amount" ? formatAmount(read, 2) : read);
      },
      fake: (random) => {
        // Choose a whole number of the smallest unit inside [low, high], so the fake is exact.
        const unit = new Big(1).div(new Big(10).pow(places));
        const steps = high.minus(low).div(unit).round(0, Big.roundDown);
        const chosen = low.plus(unit.times(steps.times(random().toFixed(6)).round(0, Big.roundDown)));
        const fixed = chosen.toFixed(places);
        return fixed === `-${(0).toFixed(places)}` ? fixed.slice(1) : fixed;
      },
    },
    options.clearable ?? (false as C),
  );
}

/**
 * A decimal string with a places limit (spec "Conventions", amounts): more places give
 * DECIMAL_PRECISION_EXCEEDED, never rounding; a JSON number or malformed string gives
 * INVALID_PARAMETER. The value is passed on exactly as sent. See platform/decimal.ts for the grammar.
 */
export function decimal<C extends boolean = false>(
  options: DecimalOptions<C> & { places: number },
): FieldKind<string, NoInfer<C>> {
  return decimalKind("decimal", options.places, options);
}

/** An amount: decimal string with up to 2 places (spec "Most amounts allow up to 2 decimal places"). Output is padded to 2 places. */
export function amount<C extends boolean = false>(
  options: DecimalOptions<C> = {},
): FieldKind<string, NoInfer<C>> {
  return decimalKind("amount", 2, options);
}

/** A price: decimal string with up to 5 places (spec "Prices, costs and rates allow up to 5"). */
export function price<C extends boolean = false>(
  options: DecimalOptions<C> = {},
): FieldKind<string, NoInfer<C>> {
  return decimalKind("price", 5, options);
}

/** A cost: the same convention as {@link price}, up to 5 places. */
export const cost = price;

/** A rate (for example an exchange rate): the same convention as {@link price}, up to 5 places. */
export const rate = price;

/** A percentage: decimal string with up to 5 places, "7.5" means 7.5 % (spec "Percentages are decimal strings"). */
export function percent<C extends boolean = false>(
  options: DecimalOptions<C> = {},
): FieldKind<string, NoInfer<C>> {
  return decimalKind("percent", 5, options);
}

// ---------------------------------------------------------------------------------------------
// numbers

/** Options of {@link quantity}. */
export interface QuantityOptions<C extends boolean> extends ClearableOption<C> {
  /** Maximum decimal places; default 5. */
  places?: number;
  /** Inclusive lower bound. */
  min?: number;
  /** Inclusive upper bound. */
  max?: number;
}

/**
 * A quantity: a JSON number (spec "Quantities are numbers"), finite, with at most `places` (5)
 * decimal places as its shortest spelling shows them. More places give DECIMAL_PRECISION_EXCEEDED,
 * never rounding, so `0.1 + 0.2` sent unrounded is refused rather than silently altered.
 */
export function quantity<C extends boolean = false>(
  options: QuantityOptions<C> = {},
): FieldKind<number, NoInfer<C>> {
  const { places = 5, min, max } = options;
  const base = z
    .number()
    .check((ctx) => {
      const found = placesOfNumber(ctx.value);
      if (found > places) {
        raise(
          ctx,
          "DECIMAL_PRECISION_EXCEEDED",
          `This field allows at most ${places} decimal places, got ${found}. Round the value yourself; the service never rounds.`,
        );
      } else if ((min !== undefined && ctx.value < min) || (max !== undefined && ctx.value > max)) {
        raise(ctx, "INVALID_PARAMETER", `The value must be ${rangePhrase(min, max)}.`);
      }
    })
    .meta({
      ...(min === undefined ? {} : { minimum: min }),
      ...(max === undefined ? {} : { maximum: max }),
      description: `Number with up to ${places} decimal places. More places are rejected, never rounded.`,
    });
  const low = min ?? 0;
  const high = max ?? 1000;
  return defineKind<number, C>(
    {
      kind: "quantity",
      outputJson: { type: "number" },
      fromQuery: (text) => (/^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text),
      expected: "a number",
      accepts: (value) => typeof value === "number" && Number.isFinite(value),
      base,
      toXml: (value) => new Big(value).toFixed(),
      fromXml: (value) => {
        const read = readDecimalText(value);
        return read === null ? UNREADABLE : ok(Number(read));
      },
      fake: (random) => {
        // A whole number of hundredths (or finer units when fewer places are allowed) in range.
        const scale = 10 ** Math.min(places, 2);
        const first = Math.ceil(low * scale);
        const units = pickInt(random, first, Math.max(first, Math.floor(high * scale)));
        return Number(new Big(units).div(scale).toFixed()) + 0;
      },
    },
    options.clearable ?? (false as C),
  );
}

function rangePhrase(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return `between ${min} and ${max}`;
  if (min !== undefined) return `at least ${min}`;
  return `at most ${String(max)}`;
}

/** Options of {@link integer}. */
export interface IntegerOptions<C extends boolean> extends ClearableOption<C> {
  /** Inclusive lower bound; default the smallest safe integer. */
  min?: number;
  /** Inclusive upper bound; default the largest safe integer. */
  max?: number;
}

/** An integer (JSON number without fraction, a safe integer), within inclusive bounds. */
export function integer<C extends boolean = false>(
  options: IntegerOptions<C> = {},
): FieldKind<number, NoInfer<C>> {
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = options;
  const base = z
    .int()
    .min(min, { error: `expected an integer of at least ${min}` })
    .max(max, { error: `expected an integer of at most ${max}` });
  return defineKind<number, C>(
    {
      kind: "integer",
      outputJson: { type: "integer" },
      fromQuery: (text) => (/^-?\d{1,15}$/.test(text) ? Number(text) : text),
      expected: "an integer",
      accepts: (value) => typeof value === "number" && Number.isSafeInteger(value),
      base,
      toXml: (value) => String(value),
      fromXml: (value) => {
        const trimmed = value.trim();
        if (!/^[+-]?\d+$/.test(trimmed)) return UNREADABLE;
        const read = Number(trimmed);
        return Number.isSafeInteger(read) ? ok(read) : UNREADABLE;
      },
      fake: (random) =>
        pickInt(random, Math.max(min, -1000), Math.max(Math.max(min, -1000), Math.min(max, 1000))),
    },
    options.clearable ?? (false as C),
  );
}

// ---------------------------------------------------------------------------------------------
// boolean, dates, identifiers, enumerations

/** A JSON boolean. The application writes `true`/`false`. */
export function boolean<C extends boolean = false>(
  options: ClearableOption<C> = {},
): FieldKind<boolean, NoInfer<C>> {
  return defineKind<boolean, C>(
    {
      kind: "boolean",
      outputJson: { type: "boolean" },
      fromQuery: (text) => (text === "true" ? true : text === "false" ? false : text),
      expected: "a boolean",
      accepts: (value) => typeof value === "boolean",
      base: z.boolean(),
      toXml: (value) => (value ? "true" : "false"),
      fromXml: (value) => {
        const lower = value.trim().toLowerCase();
        return lower === "true" ? ok(true) : lower === "false" ? ok(false) : UNREADABLE;
      },
      fake: (random) => random() < 0.5,
    },
    options.clearable ?? (false as C),
  );
}

const DATE_MESSAGE = "expected a date as YYYY-MM-DD that exists in the calendar, for example 2024-02-29";
const dateSchema = z.iso.date({ error: DATE_MESSAGE });

function fakeDate(random: RandomSource): string {
  const day = pickInt(random, 0, 365 * 8);
  return new Date(Date.UTC(2020, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);
}

/** A date (spec "Dates are `YYYY-MM-DD`"), which must exist in the calendar (no 2023-02-29). */
export function date<C extends boolean = false>(
  options: ClearableOption<C> = {},
): FieldKind<string, NoInfer<C>> {
  return defineKind<string, C>(
    {
      kind: "date",
      outputJson: { type: "string", format: "date" },
      expected: "a date string (YYYY-MM-DD)",
      accepts: isString,
      base: dateSchema,
      toXml: (value) => value,
      fromXml: (value) => (dateSchema.safeParse(value.trim()).success ? ok(value.trim()) : UNREADABLE),
      fake: fakeDate,
    },
    options.clearable ?? (false as C),
  );
}

const DATE_TIME_MESSAGE =
  "expected an ISO 8601 date-time such as 2024-02-29T13:45:00 or 2024-02-29T13:45:00-05:00 (offset optional, local time of the application's computer without one)";
const dateTimeSchema = z.iso.datetime({ offset: true, local: true, error: DATE_TIME_MESSAGE });
const DATE_TIME_PARTS = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2})?(?:\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * A date-time: ISO 8601 with an optional offset (`Z` or `±hh:mm`), with or without seconds and
 * fractional seconds, on a real calendar date. Without an offset it means the application
 * computer's local time (spec, list filters `updatedAfter`/`updatedBefore`).
 *
 * `toXml` writes the application's form: whole seconds and a `±hh:mm` offset. Dropping the fraction
 * loses nothing, because the application's own timestamps have whole seconds (spec "Conventions").
 */
export function dateTime<C extends boolean = false>(
  options: ClearableOption<C> = {},
): FieldKind<string, NoInfer<C>> {
  return defineKind<string, C>(
    {
      kind: "dateTime",
      outputJson: {
        type: "string",
        description: "ISO 8601 date-time with the application computer's UTC offset",
      },
      expected: "a date-time string",
      accepts: isString,
      base: dateTimeSchema,
      toXml: (value) => {
        const parts = DATE_TIME_PARTS.exec(value);
        if (!parts) return value;
        const offset = parts[3] === "Z" ? "+00:00" : (parts[3] ?? "");
        return `${parts[1] ?? ""}${parts[2] ?? ":00"}${offset}`;
      },
      fromXml: (value) => (dateTimeSchema.safeParse(value.trim()).success ? ok(value.trim()) : UNREADABLE),
      fake: (random) => {
        const time = [pickInt(random, 0, 23), pickInt(random, 0, 59), pickInt(random, 0, 59)];
        return `${fakeDate(random)}T${time.map((part) => String(part).padStart(2, "0")).join(":")}${pick(random, ["-05:00", "+00:00", "+01:00", "-08:00"])}`;
      },
    },
    options.clearable ?? (false as C),
  );
}

const dateOrDateTimeSchema = z.union([dateSchema, dateTimeSchema], {
  error: "expected a date (YYYY-MM-DD) or a date-time (YYYY-MM-DDThh:mm:ss, optionally with an offset)",
});

/**
 * A date or a date-time (spec, list parameters `updatedAfter`/`updatedBefore`: "Date or date-time …
 * application local time unless an offset is given"). Both must exist in the calendar; a date-time
 * is written to XML as {@link dateTime} writes it, a date as it is.
 */
export function dateOrDateTime<C extends boolean = false>(
  options: ClearableOption<C> = {},
): FieldKind<string, NoInfer<C>> {
  const asDateTime = dateTime();
  return defineKind<string, C>(
    {
      kind: "dateOrDateTime",
      expected: "a date or date-time string",
      accepts: isString,
      base: dateOrDateTimeSchema.meta({
        description: "A date (YYYY-MM-DD) or an ISO 8601 date-time, with or without an offset.",
      }),
      toXml: (value) => (value.includes("T") ? asDateTime.toXml(value) : value),
      fromXml: (value) =>
        dateOrDateTimeSchema.safeParse(value.trim()).success ? ok(value.trim()) : UNREADABLE,
      fake: (random) => (random() < 0.5 ? fakeDate(random) : asDateTime.fake(random)),
    },
    options.clearable ?? (false as C),
  );
}

const uuidSchema = z.uuid({
  error: "expected a UUID (RFC 4122), for example 3f2b6c1e-8f0a-4c59-9a4e-2d1b7c9e0f13",
});
const HEX = "0123456789abcdef";

/**
 * A UUID (RFC 4122 / 9562 layout, any letter case), such as the caller's `externalId` (spec "Common
 * application record fields"). The application stores GUIDs braced and upper-case, so `toXml`
 * writes `{3F2B…}` and `fromXml` reads either form back as lower case.
 */
export function uuid<C extends boolean = false>(
  options: ClearableOption<C> = {},
): FieldKind<string, NoInfer<C>> {
  return defineKind<string, C>(
    {
      kind: "uuid",
      expected: "a UUID string",
      accepts: isString,
      base: uuidSchema,
      toXml: (value) => `{${value.toUpperCase()}}`,
      fromXml: (value) => {
        const bare = value
          .trim()
          .replace(/^\{(.*)\}$/, "$1")
          .toLowerCase();
        return uuidSchema.safeParse(bare).success ? ok(bare) : UNREADABLE;
      },
      fake: (random) => {
        const digits = Array.from({ length: 32 }, () => HEX[pickInt(random, 0, 15)] ?? "0");
        digits[12] = "4";
        digits[16] = HEX[8 + pickInt(random, 0, 3)] ?? "8";
        const hex = digits.join("");
        return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
      },
    },
    options.clearable ?? (false as C),
  );
}

const DURATION = /^PT(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+S)?$/;
const durationSchema = z.string().regex(DURATION, {
  error: "expected an ISO 8601 duration of hours, minutes and seconds, for example PT1H30M",
});

/**
 * A duration (time tracking): ISO 8601 `PT…H…M…S`, as the application writes it. Other ISO forms
 * (days, fractions, signs) are refused rather than converted.
 */
export function duration<C extends boolean = false>(
  options: ClearableOption<C> = {},
): FieldKind<string, NoInfer<C>> {
  return defineKind<string, C>(
    {
      kind: "duration",
      expected: "a duration string (PT1H30M)",
      accepts: isString,
      base: durationSchema,
      toXml: (value) => value,
      fromXml: (value) => (DURATION.test(value.trim()) ? ok(value.trim()) : UNREADABLE),
      fake: (random) => `PT${pickInt(random, 0, 9)}H${pickInt(random, 1, 59)}M`,
    },
    options.clearable ?? (false as C),
  );
}

const ID_MESSAGE = "expected an application record ID of 1 to 36 characters";
// An ID travels in the application's messages: it must fit their code page like any text.
const idSchema = z
  .string()
  .min(1, { error: ID_MESSAGE })
  .max(36, { error: ID_MESSAGE })
  .check((ctx) => void inCodePage(ctx)) as z.ZodType<string> as z.ZodType<LedgerRecordId>;

/**
 * An application record ID (spec "Record IDs assigned by the accounting application are strings of
 * 1 to 36 characters"), typed with the {@link LedgerRecordId} brand so platform IDs cannot be
 * passed where it is expected.
 */
export function id<C extends boolean = false>(
  options: ClearableOption<C> = {},
): FieldKind<LedgerRecordId, NoInfer<C>> {
  return defineKind<LedgerRecordId, C>(
    {
      kind: "id",
      expected: "an ID string",
      accepts: isString,
      base: idSchema,
      toXml: (value) => value,
      fromXml: (value) =>
        value.length >= 1 && value.length <= 36 ? ok(value as LedgerRecordId) : UNREADABLE,
      fake: (random) => {
        const hex = (length: number) =>
          Array.from({ length }, () => HEX[pickInt(random, 0, 15)] ?? "0").join("");
        return `${hex(8)}-${String(1_700_000_000 + pickInt(random, 0, 99_999_999))}`.toUpperCase() as LedgerRecordId;
      },
    },
    options.clearable ?? (false as C),
  );
}

/** Options of {@link enumOf}. */
export interface EnumOptions<V extends string, C extends boolean> extends ClearableOption<C> {
  /** The application's spelling of each value in XML, where it differs from the JSON value. */
  xml?: Partial<Record<V, string>>;
}

/**
 * A closed input enumeration: any other value gives INVALID_PARAMETER listing the allowed ones.
 * (Open enumerations exist only on output, spec "Enumerations marked open may gain values".)
 */
export function enumOf<const V extends readonly [string, ...string[]], C extends boolean = false>(
  values: V,
  options: EnumOptions<V[number], C> = {},
): FieldKind<V[number], NoInfer<C>> {
  const toXmlMap = new Map<string, string>(
    values.map((value) => [value, options.xml?.[value as V[number]] ?? value]),
  );
  const fromXmlMap = new Map<string, V[number]>(values.map((value) => [toXmlMap.get(value) ?? value, value]));
  // ZodEnum's output is spelled through Zod's internal enum-object types; it is `V[number]`.
  const base = z.enum(values, {
    error: `expected one of ${values.map((value) => JSON.stringify(value)).join(", ")}`,
  }) as unknown as z.ZodType<V[number]>;
  return defineKind<V[number], C>(
    {
      kind: "enum",
      // This version's values; an open enumeration may gain values in a later version (decision 0020).
      outputJson: { type: "string", enum: [...values], description: "Open enumeration" },
      expected: "a string",
      accepts: isString,
      base,
      toXml: (value) => toXmlMap.get(value) ?? value,
      fromXml: (value) => {
        const found = fromXmlMap.get(value.trim());
        return found === undefined ? UNREADABLE : ok(found);
      },
      fake: (random) => pick(random, values),
    },
    options.clearable ?? (false as C),
  );
}

/** Options of {@link email} and {@link url}. */
export interface LengthOptions<C extends boolean> extends ClearableOption<C> {
  /** Maximum length in characters; longer values give STRING_TOO_LONG. */
  max: number;
}

function tooLong(max: number) {
  return (ctx: z.core.ParsePayload<string>): void => {
    if (ctx.value.length > max) {
      raise(
        ctx,
        "STRING_TOO_LONG",
        `The value is ${ctx.value.length} characters long; this field allows at most ${max} characters.`,
      );
    }
  };
}

/**
 * An e-mail address (ASCII, as Zod's e-mail pattern accepts, so always within Windows-1252), with
 * a maximum length (STRING_TOO_LONG).
 */
export function email<C extends boolean = false>(options: LengthOptions<C>): FieldKind<string, NoInfer<C>> {
  const base = z
    .email({ error: "expected an e-mail address such as name@example.com" })
    .check(tooLong(options.max))
    .meta({ maxLength: options.max });
  return defineKind<string, C>(
    {
      kind: "email",
      expected: "an e-mail address string",
      accepts: isString,
      base,
      toXml: (value) => value,
      fromXml: (value) => ok(value),
      fake: (random) =>
        `${pick(random, ["anna", "bjorn", "chloe", "dev"])}${pickInt(random, 1, 999)}@example.com`,
    },
    options.clearable ?? (false as C),
  );
}

/** Options of {@link url}. */
export interface UrlOptions<C extends boolean> extends LengthOptions<C> {
  /** Require `https:`; default true. With false, `http:` is accepted too. */
  https?: boolean;
}

/**
 * An absolute URL with a maximum length (STRING_TOO_LONG), `https:` only unless `https: false`
 * (spec: webhook URLs up to 2048 characters, redirect URLs up to 2000). Destination rules such as
 * "public DNS name, no IP addresses" belong to the webhook destination guard, not to this kind.
 */
export function url<C extends boolean = false>(options: UrlOptions<C>): FieldKind<string, NoInfer<C>> {
  const httpsOnly = options.https ?? true;
  const base = z
    .url({
      protocol: httpsOnly ? /^https$/ : /^https?$/,
      error: httpsOnly ? "expected an absolute https:// URL" : "expected an absolute http:// or https:// URL",
    })
    .check(tooLong(options.max))
    .meta({ maxLength: options.max });
  return defineKind<string, C>(
    {
      kind: "url",
      expected: "a URL string",
      accepts: isString,
      base,
      toXml: (value) => value,
      fromXml: (value) => ok(value),
      fake: (random) =>
        `https://example.com/${pick(random, ["hooks", "return", "callback"])}/${pickInt(random, 1, 999)}`,
    },
    options.clearable ?? (false as C),
  );
}

// ---------------------------------------------------------------------------------------------
// objects

/** What a {@link strictObject} shape holds: field kinds, or Zod schemas (nested objects, line arrays). */
export type FieldShape = Readonly<Record<string, AnyFieldKind | z.ZodType>>;

/** The Zod schema a shape entry contributes. */
export type EntrySchema<E> = E extends z.ZodType
  ? E
  : E extends { readonly schema: infer S extends z.ZodType }
    ? S
    : never;

/** The Zod shape of a {@link strictObject}: every entry optional unless listed as required. */
export type StrictShape<S extends FieldShape, R extends keyof S> = {
  -readonly [K in keyof S]: K extends R ? EntrySchema<S[K]> : z.ZodOptional<EntrySchema<S[K]>>;
};

/** Options of {@link strictObject}. */
export interface StrictObjectOptions<R> {
  /** Keys that must be sent; a missing one gives INVALID_PARAMETER "Missing required parameter". */
  required?: readonly R[];
}

/**
 * A strict request object (spec "Request bodies are strict. An unknown body field returns
 * UNKNOWN_PARAMETER"). A field that is absent is "not sent" and stays unchanged on update; null
 * clears it where the kind is clearable and gives FIELD_NOT_CLEARABLE elsewhere. Entries may be
 * field kinds or other Zod schemas (nested strict objects, arrays of lines), so `param` paths such
 * as `lines[2].memo` come out of `errorFromZod` unchanged.
 */
export function strictObject<S extends FieldShape, R extends keyof S & string = never>(
  shape: S,
  options: StrictObjectOptions<R> = {},
): z.ZodObject<StrictShape<S, R>, z.core.$strict> {
  const required = new Set<string>(options.required ?? []);
  const entries: Record<string, z.ZodType> = {};
  for (const [key, entry] of Object.entries(shape)) {
    const schema = isFieldKind(entry) ? entry.schema : entry;
    entries[key] = required.has(key) ? schema : schema.optional();
  }
  // The runtime shape is built generically; the mapped type above states what it contains.
  return z.strictObject(entries) as unknown as z.ZodObject<StrictShape<S, R>, z.core.$strict>;
}

/**
 * Parses request input with a schema built from field kinds and throws the ServiceError that
 * `errorFromZod` makes of the first issue, with `prefix` before the field path (for a batch member,
 * `requests[2].body`). Parsing with `reportInput` lets `errorFromZod` tell a missing value from a
 * wrong-typed one for plain Zod schemas too (nested objects and arrays that are not field kinds).
 *
 * @throws ServiceError with a request-validation code.
 */
export function parseFields<S extends z.ZodType>(schema: S, input: unknown, prefix = ""): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (!result.success) throw errorFromZod(result.error, prefix);
  return result.data;
}
