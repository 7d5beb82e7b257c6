/**
 * Parses a request document into {@link XmlElement}s. Anything that is not well-formed, or that has
 * more than one root, fails here; the processor turns every failure into HRESULT 0x80040400.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";
import type { XmlElement } from "./tree.ts";

/** A parsed request document. */
export interface ParsedDocument {
  readonly root: XmlElement;
  /** The `<?qbxml version="…"?>` value, when present. */
  readonly qbxmlVersion: string | undefined;
}

// fast-xml-parser's preserveOrder output: one key per node plus ":@" for attributes.
type OrderedNode = Record<string, unknown>;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseTagValue: false,
  parseAttributeValue: false,
  ignorePiTags: false,
  // Entities are decoded below so that numeric references work too.
  processEntities: false,
  trimValues: true,
});

const NAMED_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, body: string) => {
    if (body.startsWith("#x")) return String.fromCodePoint(Number.parseInt(body.slice(2), 16));
    if (body.startsWith("#")) return String.fromCodePoint(Number.parseInt(body.slice(1), 10));
    return NAMED_ENTITIES[body] ?? whole;
  });
}

function nodeName(n: OrderedNode): string | undefined {
  return Object.keys(n).find((key) => key !== ":@");
}

function readAttrs(n: OrderedNode): Array<readonly [string, string]> {
  const raw = n[":@"];
  if (typeof raw !== "object" || raw === null) return [];
  return Object.entries(raw).map(([key, value]) => [key, decodeEntities(String(value))] as const);
}

function toElement(name: string, n: OrderedNode): XmlElement | undefined {
  const body = n[name];
  if (!Array.isArray(body)) return undefined;
  const children: XmlElement[] = [];
  let text = "";
  for (const item of body as OrderedNode[]) {
    const itemName = nodeName(item);
    if (itemName === undefined) continue;
    if (itemName === "#text") {
      text += String(item["#text"]);
      continue;
    }
    const converted = toElement(itemName, item);
    if (converted === undefined) return undefined;
    children.push(converted);
  }
  // Mixed content never appears in the protocol; treat it as a malformed document.
  if (children.length > 0 && text.trim() !== "") return undefined;
  return { name, attrs: readAttrs(n), children, text: decodeEntities(text) };
}

/** Parses `xml`; `undefined` when it is not a well-formed single-root document. */
export function parseDocument(xml: string): ParsedDocument | undefined {
  if (XMLValidator.validate(xml) !== true) return undefined;
  let nodes: unknown;
  try {
    nodes = parser.parse(xml);
  } catch {
    return undefined;
  }
  if (!Array.isArray(nodes)) return undefined;
  let root: XmlElement | undefined;
  let qbxmlVersion: string | undefined;
  for (const n of nodes as OrderedNode[]) {
    const name = nodeName(n);
    if (name === undefined || name === "#text") continue;
    if (name === "?xml") continue;
    if (name === "?qbxml") {
      qbxmlVersion = readAttrs(n).find(([key]) => key === "version")?.[1];
      continue;
    }
    if (root !== undefined) return undefined;
    root = toElement(name, n);
    if (root === undefined) return undefined;
  }
  return root === undefined ? undefined : { root, qbxmlVersion };
}
