import { secretJsonFields } from "../resources/secret-fields.ts";
import { readXml, XmlReadError } from "./parse.ts";
import { renderIndented, type XmlElement } from "./tree.ts";

/**
 * The values a message or answer may carry that an operator's screen must not show (decision
 * 0028), and that the service shows masked on every path out and stores masked (decision 0032):
 * card numbers and social security numbers keep their last four characters, passwords nothing.
 * Element names are the application's (its schema has no other secret fields: no card security
 * code is ever sent).
 */
export const SECRET_ELEMENTS: Readonly<Record<string, "last4" | "all">> = {
  CreditCardNumber: "last4",
  SSN: "last4",
  ClosingDatePassword: "all",
};

const MASK = "•";

/**
 * A secret value as it may be shown or stored: its last four characters after bullets (the rest
 * as bullets, length kept), or eight bullets for a password or a value too short to keep any.
 * Masking a masked value changes nothing.
 */
export function maskedSecret(value: string, rule: "last4" | "all"): string {
  const text = value.trim();
  if (rule === "all" || text.length < 8) return MASK.repeat(8);
  return `${MASK.repeat(text.length - 4)}${text.slice(-4)}`;
}

const masked = maskedSecret;

/** A document for people to read: secrets masked, one element per line, indented. */
export interface RedactedDocument {
  xml: string;
  redactedValues: number;
}

/**
 * Reads `xml`, masks the values of {@link SECRET_ELEMENTS} and renders it indented with its
 * prolog. Null when it is not one well-formed document: a text that cannot be read cannot be
 * redacted, so it is not shown.
 */
export function redactedDocument(xml: string): RedactedDocument | null {
  let parsed;
  try {
    parsed = readXml(xml);
  } catch (error) {
    if (error instanceof XmlReadError) return null;
    throw error;
  }
  let redactedValues = 0;
  const redact = (element: XmlElement): XmlElement => {
    const rule = SECRET_ELEMENTS[element.name];
    if (rule !== undefined && element.children.length === 0 && element.text !== "") {
      redactedValues += 1;
      return { ...element, text: masked(element.text, rule) };
    }
    if (element.children.length === 0) return element;
    return { ...element, children: element.children.map(redact) };
  };
  const root = redact(parsed.root);
  const prolog = ['<?xml version="1.0" encoding="utf-8"?>'];
  if (parsed.qbxmlVersion !== undefined) prolog.push(`<?qbxml version="${parsed.qbxmlVersion}"?>`);
  return { xml: `${prolog.join("\n")}\n${renderIndented(root)}`, redactedValues };
}

/**
 * The JSON names of the same secrets in typed input and output (derived from the schema and name
 * tables: the card number is `number` inside `creditCard` or a card transaction's `request`, a
 * social security number `ssn`), and any field whose name says password.
 */
function jsonRule(key: string, parent: string | null): "last4" | "all" | null {
  const fields = secretJsonFields(SECRET_ELEMENTS).get(key);
  if (fields) {
    for (const field of fields)
      if (field.parents === null || (parent !== null && field.parents.has(parent))) return field.rule;
  }
  if (/password/i.test(key)) return "all";
  return null;
}

let secretKeyPattern: RegExp | null = null;

/**
 * A typed call's JSON input as stored (decision 0032): its JSON text, with the secrets masked when
 * the text names a secret field at all (one search; most inputs name none and are kept as sent).
 */
export function maskedJsonText(value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  secretKeyPattern ??= new RegExp(
    `"(?:${[...secretJsonFields(SECRET_ELEMENTS).keys()].join("|")}|[^"]*password[^"]*)":`,
    "i",
  );
  return secretKeyPattern.test(text) ? JSON.stringify(redactedJson(value).value) : text;
}

/** A typed call's JSON input (or a typed result) with the same secrets masked. */
export function redactedJson(value: unknown): { value: unknown; redactedValues: number } {
  let redactedValues = 0;
  const walk = (node: unknown, parent: string | null): unknown => {
    if (Array.isArray(node)) return node.map((item) => walk(item, parent));
    if (typeof node !== "object" || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(node)) {
      const rule = jsonRule(key, parent);
      if (rule !== null && typeof child === "string" && child !== "") {
        redactedValues += 1;
        out[key] = masked(child, rule);
      } else out[key] = walk(child, key);
    }
    return out;
  };
  return { value: walk(value, null), redactedValues };
}

// ---------------------------------------------------------------------------------------------
// Text-level masking (decision 0032): documents the service stores or passes back as text.

const SECRET_NAMES = Object.keys(SECRET_ELEMENTS).join("|");
/** An opening tag of a secret element (a self-closing one ends in `/` and holds nothing). */
const SECRET_OPEN_TAG = new RegExp(`<(${SECRET_NAMES})(\\s[^>]*)?>`, "g");
const SECRET_PRESENT = new RegExp(`<(?:${SECRET_NAMES})[\\s>/]`);

/**
 * Whether `xml` may hold a secret element: one search of the text, so a document without any (most
 * of them) costs nothing more.
 */
export function mayHoldSecrets(xml: string): boolean {
  return SECRET_PRESENT.test(xml);
}

/** Calls `visit` with the content span of each secret element of `xml`, in document order. */
function eachSecret(xml: string, visit: (name: string, start: number, end: number) => void): void {
  const open = new RegExp(SECRET_OPEN_TAG.source, "g");
  for (let match = open.exec(xml); match !== null; match = open.exec(xml)) {
    const name = match[1] ?? "";
    if ((match[2] ?? "").endsWith("/")) continue;
    const start = match.index + match[0].length;
    const end = xml.indexOf(`</${name}>`, start);
    if (end < 0) return;
    visit(name, start, end);
    open.lastIndex = end;
  }
}

/** The masked form of an element's raw content: text with markup or references is masked whole. */
function maskedContent(content: string, name: string): string {
  if (content.trim() === "") return content;
  const rule = SECRET_ELEMENTS[name] ?? "all";
  return /[<&]/.test(content) ? MASK.repeat(8) : maskedSecret(content, rule);
}

/** A text naming a secret element at all (as an element, or in a status message). */
const SECRET_NAMED = new RegExp(`\\b(?:${SECRET_NAMES})\\b`);

/**
 * An application status message with its quoted values masked whole when it names a secret
 * element: the application quotes the refused value in some (3210, `The "X" field has an invalid
 * value "…"`), and an answer that refuses a card number must not carry it back.
 */
export function maskSecretsInMessage(message: string): string {
  if (!SECRET_NAMED.test(message)) return message;
  return message.replace(/"([^"]*)"/g, (whole, inner: string) =>
    inner.trim() === "" || inner in SECRET_ELEMENTS ? whole : `"${MASK.repeat(8)}"`,
  );
}

/**
 * `xml` with the values of {@link SECRET_ELEMENTS} masked, as text (no parse): for documents kept
 * at rest (the application's answers) and passed back to callers (passthrough). Status messages that
 * name a secret element have their quoted values masked ({@link maskSecretsInMessage}). Returned as
 * it is when it names no secret element (one search of the text).
 */
export function maskSecretsInText(xml: string): string {
  if (!SECRET_NAMED.test(xml)) return xml;
  const masked = mayHoldSecrets(xml) ? splitSecrets(xml).xml : xml;
  return masked.replace(/statusMessage="([^"]*)"/g, (whole, text: string) =>
    SECRET_NAMED.test(text)
      ? `statusMessage="${maskSecretsInMessage(text.replaceAll("&quot;", '"')).replaceAll('"', "&quot;")}"`
      : whole,
  );
}

/**
 * Splits the secrets out of a document the service wrote (a Request's messages): the document with
 * each secret element's content masked, and the contents taken out, in document order (null when
 * there were none). {@link restoreSecrets} puts them back.
 */
export function splitSecrets(xml: string): { xml: string; values: string[] | null } {
  if (!mayHoldSecrets(xml)) return { xml, values: null };
  const values: string[] = [];
  let out = "";
  let from = 0;
  eachSecret(xml, (name, start, end) => {
    const content = xml.slice(start, end);
    if (content.trim() === "") return;
    values.push(content);
    out += xml.slice(from, start) + maskedContent(content, name);
    from = end;
  });
  return { xml: out + xml.slice(from), values: values.length === 0 ? null : values };
}

/**
 * The document {@link splitSecrets} took `values` out of, with them back in place. Throws when the
 * masked document does not hold as many secret elements as there are values (it was changed).
 */
export function restoreSecrets(masked: string, values: readonly string[]): string {
  let out = "";
  let from = 0;
  let index = 0;
  eachSecret(masked, (_name, start, end) => {
    if (masked.slice(start, end).trim() === "") return;
    const value = values[index++];
    if (value === undefined) return;
    out += masked.slice(from, start) + value;
    from = end;
  });
  if (index !== values.length)
    throw new Error(`restoreSecrets: ${values.length} values for ${index} secret elements`);
  return out + masked.slice(from);
}
