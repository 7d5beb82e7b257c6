/**
 * Text rules of the spec's "Conventions": "Text is stored in a Windows-1252 compatible code page.
 * Characters outside it are rejected with UNSUPPORTED_CHARACTER. Decomposed accents are normalised
 * to composed form first."
 *
 * Decisions (see also the TSDoc of each export):
 *
 * - Order: NFC first, then the code page check, so `e` + U+0301 is accepted as `é`, and every index
 *   refers to the normalised string.
 * - `index` counts Unicode code points (not UTF-16 code units): the same number a client gets in any
 *   language, and an emoji counts as one character.
 * - Control characters: tab, line feed and carriage return are accepted (memos and addresses are
 *   multi-line). Every other C0 control (U+0000–U+001F), DEL (U+007F) and every C1 control
 *   (U+0080–U+009F) is rejected with `character: null`. They cannot appear in the application's XML
 *   (C0) or are not Windows-1252 characters at all (C1: the code page maps bytes 0x80–0x9F to `€`,
 *   `‚`, … instead). Lone UTF-16 surrogates are reported the same way, with `character: null`,
 *   because they cannot be shown or encoded.
 * - `suggestion` is a Windows-1252 replacement when a sensible one exists, `""` when the character
 *   is invisible and best deleted (zero-width characters, combining marks left over after NFC,
 *   variation selectors), and null otherwise (emoji, CJK, Greek, most controls).
 */

/**
 * The 27 code points that Windows-1252 assigns to the bytes 0x80–0x9F (bytes 0x81, 0x8D, 0x8F,
 * 0x90 and 0x9D are unassigned). Indexed by `byte - 0x80`; 0 marks an unassigned byte.
 */
// prettier-ignore
const HIGH_BYTES: readonly number[] = [
  0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0,
  0, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
];

const HIGH_CODE_POINTS: ReadonlySet<number> = new Set(HIGH_BYTES.filter((cp) => cp !== 0));

/** Text made only of supported characters (tab, line feed, carriage return and the printable code page). */
const CODE_PAGE_TEXT = new RegExp(
  `^[\\t\\n\\r\\x20-\\x7e\\xa0-\\xff${HIGH_BYTES.filter((cp) => cp !== 0)
    .map((cp) => `\\u${cp.toString(16).padStart(4, "0")}`)
    .join("")}]*$`,
);

/**
 * Whether a code point has a byte in Windows-1252 (controls included): U+0000–U+007F,
 * U+00A0–U+00FF and the 27 code points of {@link WINDOWS_1252_HIGH_CODE_POINTS}.
 */
export function isWindows1252(codePoint: number): boolean {
  if (codePoint <= 0x7f) return codePoint >= 0;
  if (codePoint >= 0xa0 && codePoint <= 0xff) return true;
  return HIGH_CODE_POINTS.has(codePoint);
}

/** The 27 assigned code points of the Windows-1252 bytes 0x80–0x9F, in byte order. */
export const WINDOWS_1252_HIGH_CODE_POINTS: readonly number[] = HIGH_BYTES.filter((cp) => cp !== 0);

/** Tab, line feed and carriage return: the only control characters text may carry. */
function isAllowedControl(codePoint: number): boolean {
  return codePoint === 0x09 || codePoint === 0x0a || codePoint === 0x0d;
}

/** C0 controls, DEL and C1 controls: reported with `character: null`. */
function isControl(codePoint: number): boolean {
  return codePoint <= 0x1f || (codePoint >= 0x7f && codePoint <= 0x9f);
}

function isSurrogate(codePoint: number): boolean {
  return codePoint >= 0xd800 && codePoint <= 0xdfff;
}

/**
 * Whether text may contain this code point: it is in Windows-1252 and is not a control character
 * other than tab, line feed or carriage return.
 */
export function isSupportedCodePoint(codePoint: number): boolean {
  if (isControl(codePoint)) return isAllowedControl(codePoint);
  return isWindows1252(codePoint);
}

function isSupportedString(text: string): boolean {
  for (const char of text) {
    if (!isSupportedCodePoint(char.codePointAt(0) ?? -1)) return false;
  }
  return true;
}

/**
 * Hand-picked replacements for characters that neither NFKC nor stripping accents maps into the
 * code page, or maps badly (U+2011 becomes U+2010 under NFKC, which is still unsupported; `ő`
 * would lose its accent entirely, while `ö` is what Hungarian writers use as a fallback).
 */
const REPLACEMENTS: ReadonlyMap<number, string> = new Map<number, string>([
  // Spaces: the no-break ones keep their meaning as U+00A0.
  ...range(0x2000, 0x200a).map((cp): [number, string] => [cp, cp === 0x2007 ? "\u00a0" : " "]),
  [0x202f, "\u00a0"],
  [0x205f, " "],
  [0x3000, " "],
  [0x2028, "\n"],
  [0x2029, "\n"],
  // Hyphens, dashes and minus.
  [0x2010, "-"],
  [0x2011, "-"],
  [0x2012, "-"],
  [0x2015, "\u2014"],
  [0x2043, "-"],
  [0x2212, "-"],
  [0xfe58, "\u2014"],
  [0xfe63, "-"],
  [0xff0d, "-"],
  // Quotes, primes and apostrophes.
  [0x02b9, "'"],
  [0x02ba, '"'],
  [0x02bc, "\u2019"],
  [0x201b, "'"],
  [0x201f, '"'],
  [0x2032, "'"],
  [0x2033, '"'],
  [0x2035, "'"],
  [0x2036, '"'],
  // Dots and bullets.
  [0x2023, "\u2022"],
  [0x2024, "."],
  [0x2025, ".."],
  [0x2027, "\u00b7"],
  [0x2219, "\u2022"],
  // Mathematical symbols and arrows.
  [0x2044, "/"],
  [0x2215, "/"],
  [0x2217, "*"],
  [0x2248, "~"],
  [0x2260, "!="],
  [0x2264, "<="],
  [0x2265, ">="],
  [0x2190, "<-"],
  [0x2192, "->"],
  [0x2194, "<->"],
  [0x21d2, "=>"],
  [0x20a4, "\u00a3"],
  // Letters that have no decomposition, and the Hungarian double acute.
  [0x0110, "D"],
  [0x0111, "d"],
  [0x0126, "H"],
  [0x0127, "h"],
  [0x0131, "i"],
  [0x0141, "L"],
  [0x0142, "l"],
  [0x0150, "\u00d6"],
  [0x0151, "\u00f6"],
  [0x0166, "T"],
  [0x0167, "t"],
  [0x0170, "\u00dc"],
  [0x0171, "\u00fc"],
  [0x1e9e, "SS"],
  // Greek small mu: the code page has the micro sign, which looks and is used the same way.
  [0x03bc, "\u00b5"],
]);

/** Invisible characters whose best replacement is nothing at all. */
function isInvisible(codePoint: number): boolean {
  return (
    (codePoint >= 0x200b && codePoint <= 0x200d) ||
    codePoint === 0x2060 ||
    codePoint === 0xfeff ||
    codePoint === 0x180e ||
    (codePoint >= 0xfe00 && codePoint <= 0xfe0f)
  );
}

const COMBINING_MARK = /\p{M}/u;
const COMBINING_MARKS = /\p{M}/gu;

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, offset) => from + offset);
}

function replaceEach(text: string): string {
  let out = "";
  for (const char of text) out += REPLACEMENTS.get(char.codePointAt(0) ?? -1) ?? char;
  return out;
}

/**
 * A Windows-1252 replacement for an unsupported code point, `""` when the character is invisible
 * and should simply be removed, or null when nothing sensible exists (emoji, CJK, Greek, …).
 *
 * Tried in order: C1 controls map to the Windows-1252 character of the same byte (text that was
 * decoded as Latin-1 by mistake, so U+0092 suggests `’`); the hand-picked table; NFKC
 * (ligatures, full-width forms, compatibility spaces); then the base letter without its accents.
 */
export function suggestReplacement(codePoint: number): string | null {
  if (isSupportedCodePoint(codePoint)) return null;
  if (codePoint >= 0x80 && codePoint <= 0x9f) {
    const mapped = HIGH_BYTES[codePoint - 0x80] ?? 0;
    return mapped === 0 ? null : String.fromCodePoint(mapped);
  }
  if (isControl(codePoint) || isSurrogate(codePoint) || codePoint > 0x10ffff || codePoint < 0) return null;
  const explicit = REPLACEMENTS.get(codePoint);
  if (explicit !== undefined) return explicit;
  const char = String.fromCodePoint(codePoint);
  if (isInvisible(codePoint) || COMBINING_MARK.test(char)) return "";
  const compatible = replaceEach(char.normalize("NFKC"));
  if (compatible.length > 0 && compatible !== char && isSupportedString(compatible)) return compatible;
  const unaccented = replaceEach(char.normalize("NFKD").replace(COMBINING_MARKS, "")).normalize("NFC");
  if (unaccented.length > 0 && unaccented !== char && isSupportedString(unaccented)) return unaccented;
  return null;
}

/** The result of {@link normalizeText}: the NFC value, or the first unsupported character. */
export type TextNormalization =
  | { ok: true; value: string }
  | {
      ok: false;
      /** The offending Unicode code point (a lone surrogate's own value for broken UTF-16). */
      codePoint: number;
      /** The character itself; null for control characters and lone surrogates. */
      character: string | null;
      /** 0-based position in the NFC-normalised text, counted in code points. */
      index: number;
      /** A Windows-1252 replacement, `""` for "delete it", or null. */
      suggestion: string | null;
    };

/**
 * Normalises text to NFC and checks it against the application's Windows-1252 code page (spec
 * "Conventions", text). On failure it returns exactly the spec's UNSUPPORTED_CHARACTER details:
 * `codePoint`, `character` (null for control characters), `index` (0-based, in code points of the
 * normalised text) and `suggestion` (nullable).
 */
export function normalizeText(input: string): TextNormalization {
  // Almost all text is already in the code page: every such string is NFC (no character of the
  // code page decomposes or combines), so one native scan answers it.
  if (CODE_PAGE_TEXT.test(input)) return { ok: true, value: input };
  const value = input.normalize("NFC");
  let index = 0;
  for (const char of value) {
    const codePoint = char.codePointAt(0) ?? 0;
    if (!isSupportedCodePoint(codePoint)) {
      const hidden = isControl(codePoint) || isSurrogate(codePoint);
      return {
        ok: false,
        codePoint,
        character: hidden ? null : char,
        index,
        suggestion: suggestReplacement(codePoint),
      };
    }
    index += 1;
  }
  return { ok: true, value };
}

/** `U+2011`: the notation used in messages. */
export function formatCodePoint(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
}
