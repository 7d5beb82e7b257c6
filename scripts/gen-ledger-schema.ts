import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { XMLParser } from "fast-xml-parser";
import { REFERENCE_ROOT } from "../src/testing/references.ts";
import type { ComplexTypeEntry, LedgerSchemaTable, SimpleTypeEntry } from "../src/ledger/xml/schema-table.ts";

/**
 * Derives the request-schema table (`src/ledger/xml/generated/ledger-schema.json`) from the
 * application SDK's XSDs. The XSDs are licensed and stay outside the repository: only the facts the
 * validator needs (element order, occurrences, choices, enumerations, lengths) are written, and named
 * groups and global elements stay shared by name instead of being expanded.
 *
 * `npm run gen:ledger-schema` reads `../shared/reference/qbxml-schema` (override with
 * `LEDGER_SCHEMA_DIR`); `src/ledger/xml/request-schema.test.ts` fails when the committed table drifts
 * from a fresh derivation.
 */
export const LEDGER_SCHEMA_PATH = resolve(
  import.meta.dirname,
  "..",
  "src/ledger/xml/generated/ledger-schema.json",
);

/** The directory holding `qbxmlops160.xsd` and friends (`LEDGER_SCHEMA_DIR` is relative to the repository). */
export function ledgerSchemaDir(): string {
  const override = process.env.LEDGER_SCHEMA_DIR;
  return override ? resolve(import.meta.dirname, "..", override) : join(REFERENCE_ROOT, "qbxml-schema");
}

/** Product brand tokens that may appear inside enumeration values of the SDK schema. */
export const BRANDED_VALUE = /QBDT|QBO|QuickBooks|Intuit/i;

const NEWER = "qbxmlops160.xsd";
const OLDER = "qbxmlops130.xsd";

type XsdNode = Record<string, unknown>;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseTagValue: false,
  parseAttributeValue: false,
  preserveOrder: true,
});

function tagOf(node: XsdNode): string {
  for (const key of Object.keys(node)) if (key !== ":@") return key;
  throw new Error("XSD node without a tag");
}
const attrsOf = (node: XsdNode): Record<string, string> => (node[":@"] ?? {}) as Record<string, string>;
const childrenOf = (node: XsdNode): XsdNode[] =>
  (node[tagOf(node)] as XsdNode[]).filter((child) => tagOf(child) !== "#text");
const localName = (tag: string): string => tag.replace(/^xsd:/, "");

function attr(node: XsdNode, name: string): string {
  const value = attrsOf(node)[name];
  if (value === undefined) throw new Error(`<${tagOf(node)}> has no ${name}`);
  return value;
}

/**
 * The file an include names. The 13.0 operations schema names a locally edited copy of its elements
 * file (`qbxml130_modified.xsd`) that is not distributed; the original (`qbxml130.xsd`) is used instead.
 */
function includedFile(dir: string, location: string): string {
  if (existsSync(resolve(dir, location))) return location;
  const original = location.replace(/_modified(\.xsd)$/, "$1");
  if (original !== location && existsSync(resolve(dir, original))) return original;
  return location;
}

/** The top-level declarations of a schema and everything it includes. */
interface Declarations {
  elements: Map<string, XsdNode>;
  complexTypes: Map<string, XsdNode>;
  simpleTypes: Map<string, XsdNode>;
  groups: Map<string, XsdNode>;
}

function readDeclarations(dir: string, entry: string, followIncludes: boolean): Declarations {
  const found: Declarations = {
    elements: new Map(),
    complexTypes: new Map(),
    simpleTypes: new Map(),
    groups: new Map(),
  };
  const pending = [entry];
  const seen = new Set<string>();
  while (pending.length > 0) {
    const file = pending.pop() ?? "";
    if (seen.has(file)) continue;
    seen.add(file);
    const document = parser.parse(readFileSync(resolve(dir, file), "utf8")) as XsdNode[];
    const schema = document.find((node) => tagOf(node) === "xsd:schema");
    if (!schema) throw new Error(`${file} has no xsd:schema`);
    for (const node of childrenOf(schema)) {
      const kind = localName(tagOf(node));
      if (kind === "include") {
        if (followIncludes) pending.push(includedFile(dir, attr(node, "schemaLocation")));
      } else if (kind === "element") found.elements.set(attr(node, "name"), node);
      else if (kind === "complexType") found.complexTypes.set(attr(node, "name"), node);
      else if (kind === "simpleType") found.simpleTypes.set(attr(node, "name"), node);
      else if (kind === "group") found.groups.set(attr(node, "name"), node);
      else throw new Error(`${file}: unexpected top-level <${tagOf(node)}>`);
    }
  }
  return found;
}

/**
 * The message elements a message set allows (`QBXMLMsgsRq` for requests, `QBXMLMsgsRs` for
 * responses), in schema order, with their type names.
 */
function messageElements(declarations: Declarations, set: "QBXMLMsgsRq" | "QBXMLMsgsRs"): [string, string][] {
  const msgs = declarations.elements.get(set);
  const complex = msgs && childrenOf(msgs).find((n) => localName(tagOf(n)) === "complexType");
  const choice = complex && childrenOf(complex).find((n) => localName(tagOf(n)) === "choice");
  if (!choice) throw new Error(`${set} is not a choice of message elements`);
  return childrenOf(choice).map((n) => [attr(n, "name"), attr(n, "type")]);
}

function occurs(node: XsdNode): string {
  const min = attrsOf(node).minOccurs ?? "1";
  const max = attrsOf(node).maxOccurs ?? "1";
  if (min === "1" && max === "1") return "";
  if (min === "0" && max === "1") return "?";
  if (min === "0" && max === "unbounded") return "*";
  if (min === "1" && max === "unbounded") return "+";
  return `{${min},${max === "unbounded" ? "" : max}}`;
}

const PARTICLES = new Set(["element", "sequence", "choice", "group"]);

/** Walks the declarations from the request types and collects what they reach. */
class Derivation {
  readonly groups = new Map<string, string>();
  readonly elements = new Map<string, string>();
  readonly complex = new Map<string, ComplexTypeEntry>();
  readonly simple = new Map<string, SimpleTypeEntry>();
  readonly attributes = new Map<string, Record<string, string>>();
  private readonly attributeKeys = new Map<string, string>();
  private readonly simpleKeys = new Map<string, string>();
  private readonly baseKinds = new Map<string, string>();

  constructor(private readonly declarations: Declarations) {
    for (const [name, node] of declarations.simpleTypes) {
      const kind = name.replace(/TYPE$/, "").toLowerCase();
      this.baseKinds.set(name, kind);
      const entry: SimpleTypeEntry = { b: kind };
      const restriction = childrenOf(node).find((n) => localName(tagOf(n)) === "restriction");
      const maxLength = restriction && childrenOf(restriction).find((n) => tagOf(n) === "xsd:maxLength");
      if (maxLength) entry.max = Number(attr(maxLength, "value"));
      this.simple.set(kind, entry);
      this.simpleKeys.set(JSON.stringify(entry), kind);
    }
  }

  /** A message element (request or response): its named type is written under the element's name. */
  message(name: string, typeName: string): void {
    const node = this.declarations.complexTypes.get(typeName);
    if (!node) throw new Error(`unknown complex type ${typeName}`);
    if (this.complexType(node, name) !== name) throw new Error(`${typeName} is not element-only`);
  }

  private globalElement(name: string): void {
    if (this.elements.has(name)) return;
    const node = this.declarations.elements.get(name);
    if (!node) throw new Error(`unknown global element ${name}`);
    this.elements.set(name, "");
    this.elements.set(name, this.elementType(node, name, name));
  }

  private group(name: string): void {
    if (this.groups.has(name)) return;
    const node = this.declarations.groups.get(name);
    if (!node) throw new Error(`unknown group ${name}`);
    this.groups.set(name, "");
    const content = childrenOf(node);
    if (content.length !== 1 || !content[0]) throw new Error(`group ${name} must hold one particle`);
    this.groups.set(name, this.topModel(content[0], `&${name}`));
  }

  /** The type key of an element declaration (its `type`, or its anonymous type). */
  private elementType(node: XsdNode, name: string, key: string): string {
    const named = attrsOf(node).type;
    if (named !== undefined) {
      const kind = this.baseKinds.get(named);
      if (kind === undefined) throw new Error(`element ${key}: type ${named} is not a simple type`);
      return kind;
    }
    const inner = childrenOf(node);
    if (inner.length !== 1 || !inner[0]) throw new Error(`element ${key} must declare one type`);
    const kind = localName(tagOf(inner[0]));
    if (kind === "simpleType") return this.simpleType(inner[0], name);
    if (kind === "complexType") return this.complexType(inner[0], key);
    throw new Error(`element ${key}: unexpected <${tagOf(inner[0])}>`);
  }

  /**
   * Interns a leaf type under a readable key (`str41`, `enum.TxnType`, `int.MaxReturned`); equal
   * types share the key of the first owner.
   */
  private internSimple(entry: SimpleTypeEntry, owner: string): string {
    const canonical = JSON.stringify(entry);
    const known = this.simpleKeys.get(canonical);
    if (known !== undefined) return known;
    const facets = Object.keys(entry).filter((k) => k !== "b");
    let key = entry.b;
    if (facets.length === 1 && entry.max !== undefined) key = `${entry.b}${entry.max}`;
    else if (facets.length > 0) key = `${entry.b}.${owner}`;
    for (let n = 2; this.simple.has(key); n++) key = `${key.replace(/~\d+$/, "")}~${n}`;
    this.simple.set(key, entry);
    this.simpleKeys.set(canonical, key);
    return key;
  }

  private simpleType(node: XsdNode, owner: string): string {
    const restriction = childrenOf(node)[0];
    if (!restriction || localName(tagOf(restriction)) !== "restriction")
      throw new Error(`simple type of ${owner} is not a restriction`);
    const base = this.baseKinds.get(attr(restriction, "base"));
    if (base === undefined) throw new Error(`simple type of ${owner}: unknown base`);
    const inherited = this.simple.get(base);
    const entry: SimpleTypeEntry = { b: base };
    if (inherited?.max !== undefined) entry.max = inherited.max;
    const values: string[] = [];
    for (const facet of childrenOf(restriction)) {
      const value = attr(facet, "value");
      switch (localName(tagOf(facet))) {
        case "enumeration":
          values.push(value);
          break;
        case "maxLength":
          entry.max = Number(value);
          break;
        case "minInclusive":
          entry.lo = Number(value);
          break;
        case "maxInclusive":
          entry.hi = Number(value);
          break;
        default:
          throw new Error(`simple type of ${owner}: unexpected facet <${tagOf(facet)}>`);
      }
    }
    // An enumeration naming product brands is left to the application to check: the derived table
    // keeps the project's neutral naming (identifiers and data say "ledger", never a brand).
    if (values.length > 0 && !values.some((v) => BRANDED_VALUE.test(v))) entry.e = values;
    return this.internSimple(entry, owner);
  }

  /** Element-only content → a `complex` key; simple content with attributes → a `simple` key. */
  private complexType(node: XsdNode, key: string): string {
    let model = "";
    let attributeSet: string | undefined;
    const declared: Record<string, string> = {};
    for (const child of childrenOf(node)) {
      const kind = localName(tagOf(child));
      if (PARTICLES.has(kind)) {
        if (model !== "") throw new Error(`${key}: more than one content particle`);
        model = this.topModel(child, key);
      } else if (kind === "attribute") {
        this.attribute(child, declared);
      } else if (kind === "simpleContent") {
        return this.simpleContent(child, key);
      } else throw new Error(`${key}: unexpected <${tagOf(child)}>`);
    }
    if (Object.keys(declared).length > 0) attributeSet = this.internAttributes(declared);
    if (this.complex.has(key) || this.simple.has(key)) throw new Error(`type key ${key} is taken`);
    this.complex.set(key, attributeSet === undefined ? { m: model } : { m: model, a: attributeSet });
    return key;
  }

  private simpleContent(node: XsdNode, key: string): string {
    const extension = childrenOf(node)[0];
    if (!extension || localName(tagOf(extension)) !== "extension")
      throw new Error(`${key}: simple content must be an extension`);
    const base = this.baseKinds.get(attr(extension, "base"));
    const inherited = base === undefined ? undefined : this.simple.get(base);
    if (!inherited) throw new Error(`${key}: unknown simple content base`);
    const declared: Record<string, string> = {};
    for (const child of childrenOf(extension)) this.attribute(child, declared);
    return this.internSimple({ ...inherited, a: this.internAttributes(declared) }, key);
  }

  private attribute(node: XsdNode, into: Record<string, string>): void {
    if (localName(tagOf(node)) !== "attribute") throw new Error(`unexpected <${tagOf(node)}>`);
    const name = attr(node, "name");
    const named = attrsOf(node).type;
    const inner = childrenOf(node)[0];
    let type: string | undefined;
    if (named !== undefined) type = this.baseKinds.get(named);
    else if (inner) type = this.simpleType(inner, name);
    if (type === undefined) throw new Error(`attribute ${name}: unknown type`);
    into[name] = attrsOf(node).use === "required" ? `!${type}` : type;
  }

  private internAttributes(declared: Record<string, string>): string {
    const canonical = JSON.stringify(declared);
    let key = this.attributeKeys.get(canonical);
    if (key === undefined) {
      key = `a${this.attributeKeys.size}`;
      this.attributeKeys.set(canonical, key);
      this.attributes.set(key, declared);
    }
    return key;
  }

  /** The model of a type or group: a top-level sequence without occurrences is written bare. */
  private topModel(node: XsdNode, owner: string): string {
    if (localName(tagOf(node)) === "sequence" && occurs(node) === "") {
      return childrenOf(node)
        .map((child) => this.particle(child, owner))
        .join(",");
    }
    return this.particle(node, owner);
  }

  private particle(node: XsdNode, owner: string): string {
    const kind = localName(tagOf(node));
    const suffix = occurs(node);
    switch (kind) {
      case "element": {
        const ref = attrsOf(node).ref;
        if (ref !== undefined) {
          this.globalElement(ref);
          return `${ref}${suffix}`;
        }
        const name = attr(node, "name");
        return `${name}:${this.elementType(node, name, `${owner}/${name}`)}${suffix}`;
      }
      case "group": {
        const ref = attr(node, "ref");
        this.group(ref);
        return `&${ref}${suffix}`;
      }
      case "sequence":
      case "choice": {
        const items = childrenOf(node).map((child) => this.particle(child, owner));
        if (items.length === 0) throw new Error(`${owner}: empty ${kind}`);
        return `(${items.join(kind === "sequence" ? "," : "|")})${suffix}`;
      }
      default:
        throw new Error(`${owner}: unexpected particle <${tagOf(node)}>`);
    }
  }
}

function sortedRecord<T>(map: Map<string, T>): Record<string, T> {
  return Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Element names written directly in a model string (not those inside named groups). */
function namesInModel(model: string): Set<string> {
  const names = new Set<string>();
  for (const match of model.matchAll(/(?<![&:\w])([A-Za-z]\w*)/g)) if (match[1]) names.add(match[1]);
  return names;
}

/**
 * Elements of each type or group that the older schema's same type or group lacks: these need the
 * newer message-format version. Types and groups that are new as a whole are not listed (the element
 * that holds them is listed in its parent instead).
 */
function newerElements(newer: Derivation, older: Derivation): Record<string, string[]> {
  const found = new Map<string, string[]>();
  const compare = (key: string, model: string, olderModel: string | undefined): void => {
    if (olderModel === undefined) return;
    const before = namesInModel(olderModel);
    const added = [...namesInModel(model)].filter((name) => !before.has(name));
    if (added.length > 0) found.set(key, added.sort());
  };
  for (const [key, entry] of newer.complex) compare(key, entry.m, older.complex.get(key)?.m);
  for (const [key, model] of newer.groups) compare(`&${key}`, model, older.groups.get(key));
  return sortedRecord(found);
}

/** Derives the whole schema table (requests and responses) of one schema set. */
function derive(declarations: Declarations): {
  derivation: Derivation;
  requests: string[];
  responses: string[];
} {
  const derivation = new Derivation(declarations);
  const requests = messageElements(declarations, "QBXMLMsgsRq").map(([name, type]) => {
    derivation.message(name, type);
    return name;
  });
  const responses = messageElements(declarations, "QBXMLMsgsRs").map(([name, type]) => {
    derivation.message(name, type);
    return name;
  });
  return { derivation, requests, responses };
}

/**
 * What the older schema (13.0) writes directly in each type's and group's model (`&Group` for
 * groups), plus its request messages under `QBXMLMsgsRq`: `scripts/gen-ledger-availability.ts`
 * reads it to tell elements 13.0 already had from those only the newer schema has. A key missing
 * here is a type or group the older schema lacks as a whole.
 */
export function olderElementNames(dir: string): Map<string, ReadonlySet<string>> {
  const { derivation, requests } = derive(readDeclarations(dir, OLDER, true));
  const names = new Map<string, ReadonlySet<string>>([["QBXMLMsgsRq", new Set(requests)]]);
  for (const [key, entry] of derivation.complex) names.set(key, namesInModel(entry.m));
  for (const [key, model] of derivation.groups) names.set(`&${key}`, namesInModel(model));
  return names;
}

/** Derives the table from the XSDs in `dir`. */
export function deriveLedgerSchema(dir: string): LedgerSchemaTable {
  const { derivation, requests, responses } = derive(readDeclarations(dir, NEWER, true));
  const older = derive(readDeclarations(dir, OLDER, true));
  // A global element whose type is written under its own name needs no entry.
  const elements = new Map([...derivation.elements].filter(([name, type]) => name !== type));
  for (const key of derivation.complex.keys()) {
    if (derivation.simple.has(key)) throw new Error(`${key} is both a simple and a complex type key`);
  }
  return {
    format: 2,
    source: `Derived from ${NEWER} (and ${OLDER} for what the older version lacks) by scripts/gen-ledger-schema.ts; do not edit, run \`npm run gen:ledger-schema\`.`,
    xmlVersion: "16.0",
    olderXmlVersion: "13.0",
    requests: [...requests].sort(),
    responses: [...responses].sort(),
    newerRequests: requests.filter((name) => !older.requests.includes(name)).sort(),
    droppedRequests: older.requests.filter((name) => !requests.includes(name)).sort(),
    newerElements: newerElements(derivation, older.derivation),
    elements: sortedRecord(elements),
    groups: sortedRecord(derivation.groups),
    complex: sortedRecord(derivation.complex),
    simple: sortedRecord(derivation.simple),
    attributes: sortedRecord(derivation.attributes),
  };
}

/** One entry per line, so a schema change shows as a readable diff. */
export function renderLedgerSchema(table: LedgerSchemaTable): string {
  const sections = Object.entries(table).map(([section, value]) => {
    const name = JSON.stringify(section);
    if (Array.isArray(value)) {
      if (value.length === 0) return `${name}: []`;
      return `${name}: [\n${value.map((item) => `  ${JSON.stringify(item)}`).join(",\n")}\n]`;
    }
    if (value !== null && typeof value === "object") {
      const entries = Object.entries(value as Record<string, unknown>);
      return `${name}: {\n${entries.map(([key, item]) => `  ${JSON.stringify(key)}: ${JSON.stringify(item)}`).join(",\n")}\n}`;
    }
    return `${name}: ${JSON.stringify(value)}`;
  });
  return `{\n${sections.join(",\n")}\n}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const dir = ledgerSchemaDir();
  if (!existsSync(resolve(dir, NEWER))) {
    console.error(`${NEWER} not found in ${dir}; set LEDGER_SCHEMA_DIR to the directory holding the XSDs.`);
    process.exit(1);
  }
  mkdirSync(dirname(LEDGER_SCHEMA_PATH), { recursive: true });
  const table = deriveLedgerSchema(dir);
  const text = renderLedgerSchema(table);
  writeFileSync(LEDGER_SCHEMA_PATH, text);
  console.log(
    `wrote ${LEDGER_SCHEMA_PATH} (${text.length} bytes, ${table.requests.length} requests, ${table.responses.length} responses)`,
  );
}
