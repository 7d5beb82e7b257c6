/**
 * Turns the bytes of a SOAP request into text, honouring the character encoding the sender
 * declared (SOAP 1.1 over HTTP carries `text/xml`; RFC 7303 §3 and XML 1.0 Appendix F):
 *
 *   1. a byte order mark decides (UTF-8, UTF-16LE, UTF-16BE) and overrides any declaration;
 *   2. else the `charset` parameter of `Content-Type`;
 *   3. else the `encoding` of the XML declaration (read from the ASCII-compatible prefix, or from a
 *      UTF-16 prefix without a byte order mark);
 *   4. else UTF-8.
 *
 * The connector sends UTF-8; other clients send Windows-1252 (often declared only in the prolog)
 * or UTF-16. Bytes that are not valid in the chosen encoding are refused rather than silently
 * replaced, so a request never reaches the application with altered text.
 */
import iconv from "iconv-lite";
import { SoapParseError } from "./soap.ts";

/** How a body was decoded: its text (without a byte order mark) and the encoding used. */
export interface DecodedBody {
  text: string;
  encoding: string;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((byte, index) => bytes[index] === byte);
}

/** The `charset` parameter of a Content-Type header value, lower-cased, or null. */
export function charsetOf(contentType: string | undefined): string | null {
  if (!contentType) return null;
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  const value = (match?.[1] ?? match?.[2] ?? "").trim().toLowerCase();
  return value === "" ? null : value;
}

const DECLARATION = /^\s*<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']/;

/** The encoding named by the XML declaration, read from the first bytes as ASCII or UTF-16. */
function declaredEncoding(bytes: Uint8Array): string | null {
  const head = Buffer.from(bytes.subarray(0, 256));
  // "<?" in UTF-16 without a byte order mark (XML 1.0 Appendix F).
  if (startsWith(head, [0x3c, 0x00, 0x3f, 0x00])) return "utf-16le";
  if (startsWith(head, [0x00, 0x3c, 0x00, 0x3f])) return "utf-16be";
  const match = DECLARATION.exec(head.toString("latin1"));
  return match?.[1]?.toLowerCase() ?? null;
}

function isUtf8(encoding: string): boolean {
  return encoding === "utf-8" || encoding === "utf8";
}

/**
 * Decodes a request body. Throws {@link SoapParseError} (a client fault naming the problem) for an
 * unknown encoding or bytes that are not valid in the declared one.
 */
export function decodeSoapBody(bytes: Uint8Array, contentType: string | undefined): DecodedBody {
  const decoder = new BodyDecoder(contentType);
  const text = decoder.write(bytes) + decoder.end();
  return { text, encoding: decoder.encoding ?? "utf-8" };
}

/** Bytes enough to see a byte order mark and an XML declaration's `encoding`. */
const HEAD_BYTES = 256;

/**
 * The same decoding, a chunk at a time, as a body arrives: the encoding is chosen once the first
 * {@link HEAD_BYTES} bytes (or the whole body, when shorter) are in, and each chunk's text is
 * returned as soon as it is whole (a character split between chunks waits for its last byte).
 */
export class BodyDecoder {
  /** The encoding chosen; null until the head of the body has arrived. */
  encoding: string | null = null;
  private head: Buffer[] = [];
  private headBytes = 0;
  private bodyBytes = 0;
  private step: ((bytes: Uint8Array, last: boolean) => string) | null = null;

  constructor(private readonly contentType: string | undefined) {}

  /** Text decoded from `bytes` (and what was held back before them). */
  write(bytes: Uint8Array): string {
    if (this.step) return this.step(bytes, false);
    this.head.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    this.headBytes += bytes.byteLength;
    return this.headBytes >= HEAD_BYTES ? this.start(false) : "";
  }

  /** The rest of the text; throws when the body ends inside a character. */
  end(): string {
    return this.step ? this.step(new Uint8Array(0), true) : this.start(true);
  }

  private start(last: boolean): string {
    const head = Buffer.concat(this.head, this.headBytes);
    this.head = [];
    let body: Uint8Array = head;
    let encoding: string;
    if (startsWith(head, UTF8_BOM)) [body, encoding] = [head.subarray(3), "utf-8"];
    else if (startsWith(head, [0xff, 0xfe])) [body, encoding] = [head.subarray(2), "utf-16le"];
    else if (startsWith(head, [0xfe, 0xff])) [body, encoding] = [head.subarray(2), "utf-16be"];
    else {
      encoding = charsetOf(this.contentType) ?? declaredEncoding(head) ?? "utf-8";
      // UTF-16 named without an order: the XML declaration's bytes tell it; big-endian otherwise (RFC 2781).
      if (encoding === "utf-16") encoding = head[0] === 0x3c && head[1] === 0x00 ? "utf-16le" : "utf-16be";
    }
    this.step = stepFor(encoding, (count) => (this.bodyBytes += count));
    this.encoding = isUtf8(encoding) ? "utf-8" : encoding;
    return this.step(body, last);
  }
}

/** A decoding step for `encoding`: bytes in, text out; `last` ends the body. */
function stepFor(
  encoding: string,
  count: (bytes: number) => number,
): (bytes: Uint8Array, last: boolean) => string {
  if (isUtf8(encoding)) {
    const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    return (bytes, last) => {
      try {
        return utf8.decode(bytes, { stream: !last });
      } catch {
        throw new SoapParseError(
          "The body is not valid UTF-8. Declare its encoding in the Content-Type charset or the XML declaration (for example windows-1252).",
        );
      }
    };
  }
  const label: string = encoding;
  if (!iconv.encodingExists(encoding)) {
    throw new SoapParseError(
      `Unsupported character encoding "${label}"; send UTF-8, UTF-16 or windows-1252.`,
    );
  }
  const decoder = iconv.getDecoder(encoding, { stripBOM: true });
  // iconv-lite turns bytes an encoding does not assign (five in windows-1252) into U+FFFD. Only a
  // Unicode encoding can carry U+FFFD as a character; anywhere else it marks such a byte.
  const unicode = /^(utf|ucs)/.test(encoding);
  return (bytes, last) => {
    const total = count(bytes.byteLength);
    const text =
      decoder.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) +
      (last ? (decoder.end() ?? "") : "");
    if (last && encoding.startsWith("utf-16") && total % 2 !== 0) {
      throw new SoapParseError(
        `The body is not valid ${encoding.toUpperCase()}: it has an odd number of bytes.`,
      );
    }
    if (!unicode && text.includes("\uFFFD")) {
      throw new SoapParseError(`The body holds bytes that are not characters in ${encoding}.`);
    }
    return text;
  };
}
