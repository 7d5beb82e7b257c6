/**
 * How the XML readers on npm compare on the service's two reading jobs (issue 14: "one XML library
 * for reading, chosen by measurement"). Printed, never asserted: `npx tsx bench/xml-readers.ts`.
 *
 *  (a) a query answer of 1,000 invoices × 5 lines, read into the service's element tree
 *      (`XmlElement`: attributes in order, trimmed leaf text, mixed content refused);
 *  (b) a SOAP envelope carrying that answer as escaped text (`receiveResponseXML`), read down to the
 *      decoded answer text.
 *
 * Each candidate is also run over a set of documents a strict reader must refuse (malformed, a
 * DOCTYPE, an undefined entity, …): a fast reader that lets them through is no candidate. Only the
 * readers that are installed are measured (saxes and fast-xml-parser are dependencies; the others
 * are tried with `import()` and skipped when missing: `npm i --no-save @rgrove/parse-xml@4.2.3
 * sax@1.6.1 saxen@11.2.0 txml@6.0.3` to run them all).
 */
import { performance } from "node:perf_hooks";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { SaxesParser } from "saxes";
import { SoapCallReader } from "../src/connector/call-reader.ts";
import { CONNECTOR_NAMESPACE, escapeXmlText } from "../src/connector/soap.ts";
import { parseDocument } from "../src/ledger/xml/parse.ts";
import type { XmlElement } from "../src/ledger/xml/tree.ts";
import { REFUSED_XML } from "../src/testing/refused-xml.ts";
import { invoiceRet } from "./typed-codec.ts";

const RUNS = 9;
const MAX_DEPTH = 64;

interface Candidate {
  name: string;
  /** The answer as an element tree; undefined when the reader refuses the document. */
  tree(xml: string): XmlElement | undefined;
  /** The decoded text of the envelope's `<response>`; undefined when refused. */
  envelopeText(xml: string): string | undefined;
}

class Refused extends Error {}
const refuse = (): never => {
  throw new Refused();
};

/** Builds `XmlElement`s from open/text/close events (the same rules as the service's reader). */
class TreeBuilder {
  private readonly open: { name: string; attrs: [string, string][]; children: XmlElement[]; text: string }[] =
    [];
  root: XmlElement | undefined;
  openTag(name: string, attrs: [string, string][]): void {
    if (this.root !== undefined || this.open.length >= MAX_DEPTH) refuse();
    this.open.push({ name, attrs, children: [], text: "" });
  }
  text(text: string): void {
    const top = this.open[this.open.length - 1];
    if (top !== undefined) top.text += text;
    else if (text.trim() !== "") refuse();
  }
  closeTag(): void {
    const element = this.open.pop();
    if (element === undefined) return refuse();
    const text = element.text.trim();
    if (element.children.length > 0 && text !== "") refuse();
    const done: XmlElement = {
      name: element.name,
      attrs: element.attrs,
      children: element.children,
      text: element.children.length > 0 ? "" : text,
    };
    const parent = this.open[this.open.length - 1];
    if (parent !== undefined) parent.children.push(done);
    else this.root = done;
  }
  done(): XmlElement | undefined {
    return this.open.length === 0 ? this.root : undefined;
  }
}

function guarded<T>(read: () => T | undefined): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** The text of the first element named `name` in a tree, when it holds text only. */
function findText(element: XmlElement, name: string): string | undefined {
  if (element.name === name || element.name.endsWith(`:${name}`)) return element.text;
  for (const child of element.children) {
    const found = findText(child, name);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Envelope text through a tree reader that keeps untrimmed text for the named leaf. */
function viaTree(tree: (xml: string) => XmlElement | undefined): (xml: string) => string | undefined {
  return (xml) => {
    const root = tree(xml);
    return root ? findText(root, "response") : undefined;
  };
}

function saxesCandidate(xmlns: boolean): Candidate {
  const tree = (xml: string): XmlElement | undefined =>
    guarded(() => {
      const parser = new SaxesParser({ position: false, xmlns });
      const builder = new TreeBuilder();
      parser.on("error", refuse);
      parser.on("doctype", refuse);
      parser.on("opentag", (tag) =>
        builder.openTag(
          tag.name,
          xmlns
            ? Object.values(tag.attributes).map((a) => [
                (a as { name: string }).name,
                (a as { value: string }).value,
              ])
            : Object.entries(tag.attributes as Record<string, string>),
        ),
      );
      parser.on("text", (t) => builder.text(t));
      parser.on("cdata", (t) => builder.text(t));
      parser.on("closetag", () => builder.closeTag());
      parser.write(xml).close();
      return builder.done();
    });
  return { name: `saxes 6.0.0${xmlns ? " (xmlns)" : ""}`, tree, envelopeText: viaTree(tree) };
}

/**
 * What the service reads with now (decision 0035): its purpose-built readers for the subset the
 * application and the Web Connector write, saxes beyond it (`parseDocument`; the call reader).
 */
function serviceCandidate(): Candidate {
  return {
    name: "the service's readers (purpose-built, saxes beyond their subset)",
    tree: (xml) => parseDocument(xml)?.root,
    envelopeText: (xml) =>
      guarded(() => {
        const reader = new SoapCallReader();
        reader.write(xml);
        const call = reader.end();
        return call.method === "receiveResponseXML" ? call.response : undefined;
      }),
  };
}

type Ordered = Record<string, unknown> & { ":@"?: Record<string, string> };

function fastXmlCandidate(): Candidate {
  const ordered = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "",
    parseTagValue: false,
    parseAttributeValue: false,
    preserveOrder: true,
    trimValues: false,
    processEntities: { enabled: true, maxExpandedLength: Number.MAX_SAFE_INTEGER },
  });
  const convert = (node: Ordered, depth: number): XmlElement => {
    if (depth > MAX_DEPTH) refuse();
    const name = Object.keys(node).find((k) => k !== ":@") ?? "";
    const items = (node[name] as Ordered[]) ?? [];
    const children: XmlElement[] = [];
    let text = "";
    for (const item of items) {
      if ("#text" in item) text += String(item["#text"]);
      else children.push(convert(item, depth + 1));
    }
    if (children.length > 0 && text.trim() !== "") refuse();
    return {
      name,
      attrs: Object.entries(node[":@"] ?? {}),
      children,
      text: children.length > 0 ? "" : text.trim(),
    };
  };
  const tree = (xml: string): XmlElement | undefined =>
    guarded(() => {
      if (/<!DOCTYPE/i.test(xml) || XMLValidator.validate(xml) !== true) return undefined;
      const top = (ordered.parse(xml) as Ordered[]).filter((n) => !("?xml" in n) && !("#text" in n));
      if (top.length !== 1 || top[0] === undefined) return undefined;
      return convert(top[0], 1);
    });
  // The service's envelope reader today: validate, then parse to objects (not ordered).
  const objects = new XMLParser({
    parseTagValue: false,
    parseAttributeValue: false,
    ignoreAttributes: false,
    attributeNamePrefix: "@_",
    trimValues: false,
    processEntities: { enabled: true, maxExpandedLength: Number.MAX_SAFE_INTEGER },
  });
  const envelopeText = (xml: string): string | undefined =>
    guarded(() => {
      if (XMLValidator.validate(xml) !== true) return undefined;
      const doc = objects.parse(xml) as Record<
        string,
        Record<string, Record<string, Record<string, unknown>>>
      >;
      const response = doc["soap:Envelope"]?.["soap:Body"]?.receiveResponseXML?.response;
      return typeof response === "string" ? response : undefined;
    });
  return { name: "fast-xml-parser 5.12.1 (validate + parse)", tree, envelopeText };
}

async function optional(load: () => Promise<Candidate>): Promise<Candidate | string> {
  try {
    return await load();
  } catch (error) {
    return `not installed (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`;
  }
}

interface RgroveNode {
  type: string;
  name?: string;
  text?: string;
  attributes?: Record<string, string>;
  children?: RgroveNode[];
}

async function rgroveCandidate(): Promise<Candidate> {
  const name: string = "@rgrove/parse-xml";
  const { parseXml } = (await import(name)) as {
    parseXml: (xml: string, options?: Record<string, boolean>) => RgroveNode;
  };
  const convert = (node: RgroveNode, depth: number): XmlElement => {
    if (depth > MAX_DEPTH) refuse();
    const children: XmlElement[] = [];
    let text = "";
    for (const child of node.children ?? []) {
      if (child.type === "element") children.push(convert(child, depth + 1));
      else if (child.type === "text" || child.type === "cdata") text += child.text ?? "";
    }
    if (children.length > 0 && text.trim() !== "") refuse();
    return {
      name: node.name ?? "",
      attrs: Object.entries(node.attributes ?? {}),
      children,
      text: children.length > 0 ? "" : text.trim(),
    };
  };
  const tree = (xml: string): XmlElement | undefined =>
    guarded(() => {
      const doc = parseXml(xml, { preserveDocumentType: true });
      if (doc.children?.some((c) => c.type === "doctype")) return undefined;
      const root = doc.children?.find((c) => c.type === "element");
      return root ? convert(root, 1) : undefined;
    });
  return { name: "@rgrove/parse-xml 4.2.3", tree, envelopeText: viaTree(tree) };
}

async function saxCandidate(): Promise<Candidate> {
  const sax = (await import(String("sax"))) as {
    default: {
      parser(
        strict: boolean,
        options: Record<string, boolean>,
      ): {
        onerror: (e: Error) => void;
        onopentag: (tag: { name: string; attributes: Record<string, string> }) => void;
        ontext: (t: string) => void;
        oncdata: (t: string) => void;
        onclosetag: () => void;
        ondoctype: () => void;
        write(xml: string): { close(): void };
      };
    };
  };
  const tree = (xml: string): XmlElement | undefined =>
    guarded(() => {
      const parser = sax.default.parser(true, {});
      const builder = new TreeBuilder();
      parser.onerror = refuse;
      parser.ondoctype = refuse;
      parser.onopentag = (tag) => builder.openTag(tag.name, Object.entries(tag.attributes));
      parser.ontext = (t) => builder.text(t);
      parser.oncdata = (t) => builder.text(t);
      parser.onclosetag = () => builder.closeTag();
      parser.write(xml).close();
      return builder.done();
    });
  return { name: "sax 1.6.1 (strict)", tree, envelopeText: viaTree(tree) };
}

async function saxenCandidate(): Promise<Candidate> {
  const { Parser } = (await import(String("saxen"))) as {
    Parser: new () => {
      on(event: string, handler: (...args: never[]) => void): void;
      parse(xml: string): void;
    };
  };
  const tree = (xml: string): XmlElement | undefined =>
    guarded(() => {
      const parser = new Parser();
      const builder = new TreeBuilder();
      parser.on("error", refuse);
      parser.on(
        "openTag",
        (name: string, attrs: () => Record<string, string>, _d: unknown, self: boolean) => {
          builder.openTag(name, Object.entries(attrs()));
          if (self) builder.closeTag();
        },
      );
      parser.on("closeTag", (_n: string, _d: unknown, self: boolean) => {
        if (!self) builder.closeTag();
      });
      parser.on("text", (value: string, decode: (s: string) => string) => builder.text(decode(value)));
      parser.on("cdata", (value: string) => builder.text(value));
      parser.parse(xml);
      return builder.done();
    });
  return { name: "saxen 11.2.0", tree, envelopeText: viaTree(tree) };
}

async function txmlCandidate(): Promise<Candidate> {
  const name: string = "txml";
  const { parse } = (await import(name)) as {
    parse: (xml: string, options?: Record<string, unknown>) => unknown[];
  };
  type TNode = {
    tagName: string;
    attributes: Record<string, string | null>;
    children: Array<TNode | string>;
  };
  const convert = (node: TNode): XmlElement => {
    const children: XmlElement[] = [];
    let text = "";
    for (const child of node.children) {
      if (typeof child === "string") text += child;
      else children.push(convert(child));
    }
    return {
      name: node.tagName,
      attrs: Object.entries(node.attributes).map(([k, v]) => [k, v ?? ""]),
      children,
      text: children.length > 0 ? "" : text.trim(),
    };
  };
  const tree = (xml: string): XmlElement | undefined =>
    guarded(() => {
      const top = (parse(xml, { keepWhitespace: true }) as Array<TNode | string>).filter(
        (n): n is TNode => typeof n !== "string" && !n.tagName.startsWith("?"),
      );
      return top[0] ? convert(top[0]) : undefined;
    });
  return { name: "txml 6.0.3 (not strict: reference)", tree, envelopeText: viaTree(tree) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function time(read: () => unknown, check: (value: unknown) => boolean): number | string {
  const runs: number[] = [];
  for (let i = 0; i < RUNS + 2; i++) {
    const started = performance.now();
    const value = read();
    const elapsed = performance.now() - started;
    if (!check(value)) return "wrong result";
    if (i >= 2) runs.push(elapsed);
  }
  return median(runs);
}

async function main(): Promise<void> {
  const answer = `<?xml version="1.0" ?>\n<QBXML>\n<QBXMLMsgsRs>\n<InvoiceQueryRs requestID="1" statusCode="0" statusSeverity="Info" statusMessage="Status OK">\n${Array.from({ length: 1000 }, (_, n) => invoiceRet(n + 1)).join("\n")}\n</InvoiceQueryRs>\n</QBXMLMsgsRs>\n</QBXML>\n`;
  const envelope =
    '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body>' +
    `<receiveResponseXML xmlns="${CONNECTOR_NAMESPACE}"><ticket>abc</ticket><response>${escapeXmlText(answer)}</response><hresult /><message /></receiveResponseXML></soap:Body></soap:Envelope>`;
  const loaded = [
    serviceCandidate(),
    saxesCandidate(false),
    saxesCandidate(true),
    fastXmlCandidate(),
    await optional(rgroveCandidate),
    await optional(saxCandidate),
    await optional(saxenCandidate),
    await optional(txmlCandidate),
  ];
  const invoices = (root: unknown): boolean =>
    (root as XmlElement | undefined)?.children[0]?.children[0]?.children.length === 1000;
  console.log(
    `answer ${(answer.length / 1e6).toFixed(2)} MB, envelope ${(envelope.length / 1e6).toFixed(2)} MB; median of ${RUNS} runs\n`,
  );
  console.log(
    "| reader | (a) answer → tree | (b) envelope → answer text | refuses (of " + REFUSED_XML.length + ") |",
  );
  console.log("|---|---|---|---|");
  const cell = (value: number | string): string =>
    typeof value === "number" ? `${value.toFixed(1)} ms` : value;
  for (const candidate of loaded) {
    if (typeof candidate === "string") {
      console.log(`| ${candidate} | - | - | - |`);
      continue;
    }
    const a = time(
      () => candidate.tree(answer),
      (root) => invoices(root),
    );
    const b = time(
      () => candidate.envelopeText(envelope),
      (text) => typeof text === "string" && text.trim() === answer.trim(),
    );
    const lets = REFUSED_XML.filter((xml) => candidate.tree(xml) !== undefined);
    const refused = `${REFUSED_XML.length - lets.length}${lets.length > 0 ? ` (lets through: ${lets.map((x) => JSON.stringify(x.slice(0, 24))).join(", ")})` : ""}`;
    console.log(`| ${candidate.name} | ${cell(a)} | ${cell(b)} | ${refused} |`);
  }
}

await main();
