import { readXml, XmlReadError } from "./parse.ts";
import { renderIndented, type XmlElement } from "./tree.ts";

/**
 * The values a message or answer may carry that an operator's screen must not show (decision
 * 0028): card numbers and social security numbers keep their last four characters, passwords
 * nothing. Element names are the application's (its schema has no other secret fields: no card
 * security code is ever sent).
 */
export const SECRET_ELEMENTS: Readonly<Record<string, "last4" | "all">> = {
  CreditCardNumber: "last4",
  SSN: "last4",
  ClosingDatePassword: "all",
};

const MASK = "•";

function masked(value: string, rule: "last4" | "all"): string {
  const text = value.trim();
  if (rule === "all" || text.length < 8) return MASK.repeat(8);
  return `${MASK.repeat(text.length - 4)}${text.slice(-4)}`;
}

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
 * The JSON names of the same secrets in a typed call's input (the generated field names: the card
 * number is `number` inside `creditCard`), and any field whose name says password.
 */
function jsonRule(key: string, parent: string | null): "last4" | "all" | null {
  if (key === "number" && parent === "creditCard") return "last4";
  if (/password/i.test(key)) return "all";
  return null;
}

/** A typed call's JSON input with the same secrets masked. */
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
