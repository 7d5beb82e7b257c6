import { ServiceError } from "../../errors/service-error.ts";
import {
  formatCodePoint,
  isSupportedCodePoint,
  normalizeText,
  suggestReplacement,
} from "../../platform/text.ts";

/**
 * What the passthrough accepts in a message before it is parsed (issue 6): no DOCTYPE (so no
 * entity declarations, external entities or entity expansion), only the five predefined entities
 * and character references, no processing instructions after the prolog, and only characters the
 * application's Windows-1252 code page holds (spec "Conventions": UNSUPPORTED_CHARACTER with its
 * position). Text is normalised to NFC first, as everywhere else.
 */
const PREDEFINED = new Set(["lt", "gt", "amp", "quot", "apos"]);
const REFERENCE = /&(?:#x([0-9A-Fa-f]+)|#([0-9]+)|([A-Za-z_][\w.-]*))?(;?)/g;

/** Returns the NFC text, or throws PASSTHROUGH_INVALID_XML / UNSUPPORTED_CHARACTER naming `param`. */
export function checkPassthroughText(xml: string, param: string): string {
  const normalized = normalizeText(xml);
  if (!normalized.ok) {
    const { codePoint, character, index, suggestion } = normalized;
    throw new ServiceError("UNSUPPORTED_CHARACTER", {
      param,
      message: `The XML contains ${formatCodePoint(codePoint)}${character ? ` (${character})` : ""} at index ${index}, which the application's code page (Windows-1252) cannot hold.`,
      details: { codePoint, character, index, suggestion },
    });
  }
  const text = normalized.value;
  const invalid = (message: string): ServiceError =>
    new ServiceError("PASSTHROUGH_INVALID_XML", { param, message });
  // CDATA sections and comments hold literal text: blanked out (same length, so positions hold).
  const markup = text.replace(/<!\[CDATA\[[\s\S]*?\]\]>|<!--[\s\S]*?-->/g, (m) => " ".repeat(m.length));
  if (/<!DOCTYPE/i.test(markup) || /<!ENTITY/i.test(markup)) {
    throw invalid("DOCTYPE and entity declarations are not allowed in request messages.");
  }
  for (const match of markup.matchAll(REFERENCE)) {
    const [whole, hex, decimal, name, semicolon] = match;
    if (hex === undefined && decimal === undefined && name === undefined) {
      throw invalid("A bare `&` is not allowed: write it as `&amp;`.");
    }
    if (semicolon !== ";") throw invalid(`The reference \`${whole}\` must end with \`;\`.`);
    if (name !== undefined) {
      if (!PREDEFINED.has(name)) {
        throw invalid(
          `The entity \`&${name};\` is not defined: only \`&lt;\`, \`&gt;\`, \`&amp;\`, \`&quot;\`, \`&apos;\` and character references are allowed.`,
        );
      }
      continue;
    }
    const codePoint = hex !== undefined ? Number.parseInt(hex, 16) : Number.parseInt(decimal ?? "", 10);
    if (!Number.isSafeInteger(codePoint) || codePoint > 0x10ffff || !isSupportedCodePoint(codePoint)) {
      const index = [...text.slice(0, match.index)].length;
      const printable =
        codePoint > 0x1f && codePoint <= 0x10ffff && !(codePoint >= 0x7f && codePoint <= 0x9f);
      throw new ServiceError("UNSUPPORTED_CHARACTER", {
        param,
        message: `The character reference \`${whole}\` at index ${index} is not a character the application's code page (Windows-1252) can hold.`,
        details: {
          codePoint: Number.isSafeInteger(codePoint) ? codePoint : -1,
          character: printable ? String.fromCodePoint(codePoint) : null,
          index,
          suggestion: Number.isSafeInteger(codePoint) ? suggestReplacement(codePoint) : null,
        },
      });
    }
  }
  return text;
}
