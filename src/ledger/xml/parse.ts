/**
 * Parses a message document into {@link XmlElement}s in one streaming pass (saxes: strict
 * well-formedness, predefined and numeric references decoded). Anything that is not well-formed,
 * that declares a DOCTYPE, mixes text with elements, nests deeper than any message does, or has more
 * than one root fails here: the simulated application turns a failure into HRESULT 0x80040400 and
 * the service into LEDGER_RESPONSE_UNREADABLE.
 */
import { SaxesParser } from "saxes";
import type { XmlElement } from "./tree.ts";

/** A parsed message document. */
export interface ParsedDocument {
  readonly root: XmlElement;
  /** The `<?qbxml version="…"?>` value, when present. */
  readonly qbxmlVersion: string | undefined;
}

/** Deeper than any message of the schema nests (about 12); protects the recursive readers. */
const MAX_DEPTH = 64;

interface OpenElement {
  readonly name: string;
  readonly attrs: ReadonlyArray<readonly [string, string]>;
  readonly children: XmlElement[];
  text: string;
}

class Malformed extends Error {}

/** Parses `xml`; `undefined` when it is not a well-formed single-root document. */
export function parseDocument(xml: string): ParsedDocument | undefined {
  const parser = new SaxesParser({ position: false });
  const open: OpenElement[] = [];
  let root: XmlElement | undefined;
  let qbxmlVersion: string | undefined;
  const fail = (): never => {
    throw new Malformed();
  };
  parser.on("error", fail);
  parser.on("doctype", fail);
  parser.on("opentag", (tag) => {
    if (root !== undefined || open.length >= MAX_DEPTH) fail();
    open.push({
      name: tag.name,
      attrs: Object.entries(tag.attributes as Record<string, string>),
      children: [],
      text: "",
    });
  });
  const appendText = (text: string): void => {
    const top = open[open.length - 1];
    if (top !== undefined) top.text += text;
  };
  parser.on("text", appendText);
  parser.on("cdata", appendText);
  parser.on("closetag", () => {
    const element = open.pop();
    if (element === undefined) return fail();
    const text = element.text.trim();
    // Mixed content never appears in the protocol; treat it as a malformed document.
    if (element.children.length > 0 && text !== "") fail();
    const done: XmlElement = {
      name: element.name,
      attrs: element.attrs,
      children: element.children,
      text: element.children.length > 0 ? "" : text,
    };
    const parent = open[open.length - 1];
    if (parent !== undefined) parent.children.push(done);
    else root = done;
  });
  parser.on("processinginstruction", (pi) => {
    if (pi.target === "qbxml") qbxmlVersion = /\bversion\s*=\s*(["'])(.*?)\1/.exec(pi.body)?.[2];
  });
  try {
    parser.write(xml).close();
  } catch (error) {
    if (error instanceof Malformed) return undefined;
    throw error;
  }
  return root === undefined ? undefined : { root, qbxmlVersion };
}
