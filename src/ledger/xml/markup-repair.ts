/**
 * Repair of one known defect in the application's answers: text it stored with control characters
 * (pasted into its windows, imported) is written into the answer as it is, raw or as a character
 * reference, and XML 1.0 allows neither, so a strict reader refuses the whole answer. Each such
 * character becomes U+FFFD, which Windows-1252 text (all the application stores) never holds, so a
 * value carrying it is exactly a value that was repaired; the typed result then gives it as null
 * with a LEDGER_MARKUP_REPAIRED warning (requests/engine.ts). Only tried after a strict read failed.
 */

/** Characters XML 1.0 forbids in a document, raw. */
const ILLEGAL_RAW = /(?![\t\n\r\u007F-\u009F])\p{Cc}|[\uFFFE\uFFFF]/gu;

/** Character references to them (`&#1;`, `&#x1F;`). */
const ILLEGAL_REFERENCE =
  /&#(?:x0*(?:[0-8bBcCeEfF]|1[0-9a-fA-F]|[fF]{3}[eEfF])|0*(?:[0-8]|1[12]|1[4-9]|2[0-9]|3[01]|6553[45]));/g;

/** The mark a repaired character leaves in the text. */
export const REPAIRED_CHARACTER = "\uFFFD";

/** The answer with every forbidden character replaced, and how many there were (0: nothing to repair). */
export function repairMarkup(xml: string): { xml: string; repaired: number } {
  let repaired = 0;
  const count = (): string => {
    repaired += 1;
    return REPAIRED_CHARACTER;
  };
  const out = xml.replace(ILLEGAL_RAW, count).replace(ILLEGAL_REFERENCE, count);
  return { xml: out, repaired };
}

/** A warning of a value repaired and withheld (spec: Request `warnings`, LEDGER_MARKUP_REPAIRED). */
export interface RepairWarning {
  code: "LEDGER_MARKUP_REPAIRED";
  statusCode: null;
  message: string;
  path: string | null;
}

/**
 * Nulls every string of a typed result that carries a repaired character, with a warning whose
 * `path` points at it (`data[2].memo`); records are kept. Returns the warnings.
 */
export function withholdRepairedValues(result: unknown): RepairWarning[] {
  const warnings: RepairWarning[] = [];
  const visit = (value: unknown, path: string): void => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (typeof item === "string" && item.includes(REPAIRED_CHARACTER)) {
          value[index] = null;
          warnings.push(repairWarning(`${path}[${index}]`));
        } else visit(item, `${path}[${index}]`);
      });
      return;
    }
    if (value === null || typeof value !== "object") return;
    const record = value as Record<string, unknown>;
    for (const [key, item] of Object.entries(record)) {
      const at = path === "" ? key : `${path}.${key}`;
      if (typeof item === "string" && item.includes(REPAIRED_CHARACTER)) {
        record[key] = null;
        warnings.push(repairWarning(at));
      } else visit(item, at);
    }
  };
  visit(result, "");
  return warnings;
}

export function repairWarning(path: string | null): RepairWarning {
  return {
    code: "LEDGER_MARKUP_REPAIRED",
    statusCode: null,
    message:
      path === null
        ? "The application's answer held characters XML does not allow; they were replaced with U+FFFD."
        : `The application sent \`${path}\` with characters XML does not allow; the value is null here.`,
    path,
  };
}
