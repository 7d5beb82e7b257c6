import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parse } from "yaml";
import { CATALOGUE, type CatalogueEntry } from "../src/ledger/resources/catalogue.ts";
import { defaultJsonName, defaultEnumValue, plural, type NameTable } from "../src/ledger/resources/names.ts";
import { ledgerSchema } from "../src/ledger/xml/schema.ts";
import { REFERENCE_ROOT } from "../src/testing/references.ts";
import { slotsOf, type Slot } from "../src/ledger/xml/slots.ts";

/**
 * One-off importer (house style §2.3 "Seeding"): the JSON names the market already publishes for
 * each resource group, matched to the application's XML elements, so our field names are the ones
 * developers know. It reads the market's OpenAPI document (`../shared/reference/conductor-openapi.yml`,
 * brand names translated here) and the schema table, aligns each record type's elements (in schema
 * order) with the document's properties (in the same order), and writes only the names that differ
 * from our mechanical naming rule (`src/ledger/resources/names.ts`) to
 * `src/ledger/resources/generated/names.json`. No description or other prose is copied.
 *
 * After import the committed table is the source of truth; `npm run import:names` re-runs it and a
 * test (`definitions.names.test.ts`) lists every remaining difference from the document.
 */
export const NAMES_PATH = resolve(import.meta.dirname, "..", "src/ledger/resources/generated/names.json");
export const MARKET_DOCUMENT = process.env.LEDGER_MARKET_OPENAPI
  ? resolve(import.meta.dirname, "..", process.env.LEDGER_MARKET_OPENAPI)
  : join(REFERENCE_ROOT, "conductor-openapi.yml");

type Json = Record<string, unknown>;

interface Prop {
  name: string;
  schema: Json;
  /** `{id, fullName}` object (output references). */
  isRef: boolean;
  isArray: boolean;
  /** The object schema of an object or array-of-objects property. */
  object: Json | null;
  enumValues: string[] | null;
}

/** Reads the market's OpenAPI document; paths and types use the market's brand, translated here. */
export function readMarketDocument(path = MARKET_DOCUMENT): Json {
  return parse(readFileSync(path, "utf8"), { maxAliasCount: -1 }) as Json;
}

class Market {
  readonly schemas: Record<string, Json>;
  readonly paths: Record<string, Json>;

  constructor(document: Json) {
    this.schemas = (document.components as Json).schemas as Record<string, Json>;
    this.paths = document.paths as Record<string, Json>;
  }

  deref(schema: Json): Json {
    let current = schema;
    for (;;) {
      const ref = current.$ref;
      if (typeof ref === "string") {
        current = this.schemas[ref.replace("#/components/schemas/", "")] ?? {};
        continue;
      }
      const anyOf = current.anyOf as Json[] | undefined;
      if (anyOf) {
        const nonNull = anyOf.filter((s) => s.type !== "null");
        if (nonNull.length === 1 && nonNull[0]) {
          current = nonNull[0];
          continue;
        }
      }
      return current;
    }
  }

  props(schema: Json): Prop[] {
    const properties = (this.deref(schema).properties ?? {}) as Record<string, Json>;
    return Object.entries(properties)
      .filter(([name]) => name !== "objectType")
      .map(([name, raw]) => {
        const value = this.deref(raw);
        const isArray = value.type === "array";
        const element = isArray ? this.deref((value.items ?? {}) as Json) : value;
        const inner = (element.properties ?? null) as Record<string, unknown> | null;
        const isRef =
          inner !== null && Object.keys(inner).length === 2 && "id" in inner && "fullName" in inner;
        const enumValues = (element.enum as string[] | undefined) ?? null;
        return {
          name,
          schema: value,
          isRef,
          isArray,
          object: inner !== null && !isRef ? element : null,
          enumValues,
        };
      });
  }

  objectType(schema: Json): string | null {
    const objectType = (this.deref(schema).properties as Json | undefined)?.objectType as Json | undefined;
    const value = objectType?.const;
    return typeof value === "string" ? value.replace(/^qbd_/, "ledger_") : null;
  }

  body(path: string, method: "post"): Json | null {
    const operation = this.paths[path]?.[method] as Json | undefined;
    const content = (operation?.requestBody as Json | undefined)?.content as Json | undefined;
    return ((content?.["application/json"] as Json | undefined)?.schema as Json | undefined) ?? null;
  }
}

const isRefSlot = (slot: Slot): boolean =>
  slot.type.kind === "complex" &&
  slotsOf(ledgerSchema(), slot.typeKey).every((s) => s.name === "ListID" || s.name === "FullName") &&
  slotsOf(ledgerSchema(), slot.typeKey).some((s) => s.name === "ListID");

const tokens = (name: string): string[] =>
  name
    .replace(/Id$|Ids$/, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean);

/** JSON types a leaf of each base kind is written as (decimals are strings, quantities numbers). */
const JSON_TYPES: Readonly<Record<string, readonly string[]>> = {
  bool: ["boolean"],
  int: ["integer", "number"],
  quan: ["number"],
  float: ["number", "string"],
};

function sameValueType(base: string, prop: Prop): boolean {
  const element = prop.isArray ? prop.schema.items : prop.schema;
  const type = (element as Json | undefined)?.type;
  if (typeof type !== "string") return true;
  return (JSON_TYPES[base] ?? ["string"]).includes(type);
}

/** How well an element and a property match; null when they cannot be the same field. */
function score(slot: Slot, prop: Prop, direction: "input" | "output"): number | null {
  const ref = isRefSlot(slot);
  const repeated = slot.max > 1;
  if (direction === "output" && ref !== prop.isRef) return null;
  if (direction === "input" && ref && !/Ids?$/.test(prop.name)) return null;
  if (repeated !== prop.isArray && !(direction === "input" && ref && /Ids$/.test(prop.name) === repeated))
    return null;
  if (!ref && (slot.type.kind === "complex") !== (prop.object !== null)) return null;
  if (!ref && slot.type.kind === "simple" && !sameValueType(slot.type.entry.b, prop)) return null;
  const candidate = defaultJsonName(slot.name, { repeated, ref, direction });
  if (candidate === prop.name) return 10;
  const a = new Set(tokens(candidate));
  const b = tokens(prop.name);
  const shared = b.filter((t) => a.has(t)).length;
  return 1 + (4 * shared) / Math.max(a.size, b.length);
}

/** Aligns elements and properties, both in order (longest best-scoring common subsequence). */
function align(
  slots: readonly Slot[],
  props: readonly Prop[],
  direction: "input" | "output",
): [Slot, Prop][] {
  const n = slots.length;
  const m = props.length;
  const best: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const s = score(slots[i] as Slot, props[j] as Prop, direction);
      const row = best[i] as number[];
      const next = best[i + 1] as number[];
      row[j] = Math.max(next[j] ?? 0, row[j + 1] ?? 0, s === null ? -1 : s + (next[j + 1] ?? 0));
    }
  }
  const pairs: [Slot, Prop][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    const s = score(slots[i] as Slot, props[j] as Prop, direction);
    const here = (best[i] as number[])[j] ?? 0;
    if (s !== null && here === s + ((best[i + 1] as number[])[j + 1] ?? 0)) {
      pairs.push([slots[i] as Slot, props[j] as Prop]);
      i++;
      j++;
    } else if (here === ((best[i + 1] as number[])[j] ?? 0)) i++;
    else j++;
  }
  return pairs;
}

/** The output name a property implies: an input reference `customerId` is the output `customer`. */
function baseName(slot: Slot, prop: Prop, direction: "input" | "output"): string {
  if (direction !== "input" || !isRefSlot(slot)) return prop.name;
  if (/Ids$/.test(prop.name)) return plural(prop.name.replace(/Ids$/, ""));
  return prop.name.replace(/Id$/, "");
}

/** Votes gathered over every aligned record type. */
class Votes {
  readonly names = new Map<string, Map<string, Map<string, number>>>();
  readonly objectTypes = new Map<string, Map<string, number>>();
  readonly enums = new Map<string, Map<string, string>>();
  readonly unmatched = new Map<string, string[]>();

  name(typeKey: string, element: string, json: string): void {
    let perType = this.names.get(typeKey);
    if (!perType) this.names.set(typeKey, (perType = new Map()));
    let perElement = perType.get(element);
    if (!perElement) perType.set(element, (perElement = new Map()));
    perElement.set(json, (perElement.get(json) ?? 0) + 1);
  }

  objectType(typeKey: string, value: string): void {
    let perType = this.objectTypes.get(typeKey);
    if (!perType) this.objectTypes.set(typeKey, (perType = new Map()));
    perType.set(value, (perType.get(value) ?? 0) + 1);
  }
}

function alignType(
  market: Market,
  votes: Votes,
  typeKey: string,
  schema: Json,
  direction: "input" | "output",
  label: string,
  seen: Set<string>,
): void {
  const visit = `${typeKey}|${label}`;
  if (seen.has(visit)) return;
  seen.add(visit);
  const slots = slotsOf(ledgerSchema(), typeKey);
  const props = market.props(schema);
  const objectType = market.objectType(schema);
  if (objectType) votes.objectType(typeKey, objectType);
  const pairs = align(slots, props, direction);
  const matched = new Set(pairs.map(([, p]) => p.name));
  const missing = props.filter((p) => !matched.has(p.name)).map((p) => p.name);
  if (missing.length > 0) votes.unmatched.set(label, missing);
  for (const [slot, prop] of pairs) {
    votes.name(typeKey, slot.name, baseName(slot, prop, direction));
    if (slot.type.kind === "simple" && slot.type.entry.e && prop.enumValues) {
      // Values are matched by their letters only (`AccountsPayable` = `accounts_payable`), and only
      // where that match is unambiguous; others keep the snake_case rule.
      const map = votes.enums.get(slot.name) ?? new Map<string, string>();
      const normal = (v: string): string => v.replace(/_/g, "").toLowerCase();
      const counts = new Map<string, number>();
      for (const v of prop.enumValues) counts.set(normal(v), (counts.get(normal(v)) ?? 0) + 1);
      for (const value of slot.type.entry.e) {
        const json = prop.enumValues.find((v) => normal(v) === normal(value));
        if (json !== undefined && counts.get(normal(value)) === 1 && json !== defaultEnumValue(value))
          map.set(value, json);
      }
      if (map.size > 0) votes.enums.set(slot.name, map);
    }
    if (slot.type.kind === "complex" && prop.object && !isRefSlot(slot)) {
      alignType(market, votes, slot.typeKey, prop.object, direction, `${label}.${prop.name}`, seen);
    }
  }
}

function topWinner(counts: Map<string, number>): string {
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? "";
}

/** Builds the name table from the market document. */
export function importNames(document: Json): NameTable & { unmatched: Record<string, string[]> } {
  const market = new Market(document);
  const votes = new Votes();
  const seen = new Set<string>();
  const base = "/quickbooks-desktop/";
  for (const entry of CATALOGUE.filter((e: CatalogueEntry) => e.origin === "market")) {
    const schemaName = entry.objectType.replace(/^ledger_/, "qbd_");
    const output = market.schemas[schemaName];
    const ret = entry.query?.ret ?? `${entry.object}Ret`;
    if (output && ledgerSchema().isComplex(ret))
      alignType(market, votes, ret, output, "output", entry.objectType, seen);
    const create = market.body(`${base}${entry.path}`, "post");
    if (create && ledgerSchema().isComplex(`${entry.object}Add`))
      alignType(market, votes, `${entry.object}Add`, create, "input", `${entry.path}.create`, seen);
    const update = market.body(`${base}${entry.path}/{id}`, "post");
    if (update && ledgerSchema().isComplex(`${entry.object}Mod`))
      alignType(market, votes, `${entry.object}Mod`, update, "input", `${entry.path}.update`, seen);
  }

  // Per type, the name most alignments chose; then the most common name of each element becomes
  // global and only the exceptions stay per type.
  const chosen = new Map<string, Map<string, string>>();
  const globalVotes = new Map<string, Map<string, number>>();
  for (const [typeKey, perType] of votes.names) {
    const names = new Map<string, string>();
    for (const [element, counts] of perType) {
      const json = topWinner(counts);
      names.set(element, json);
      if (/(Add|Mod)$/.test(typeKey)) continue;
      const perElement = globalVotes.get(element) ?? new Map<string, number>();
      perElement.set(json, (perElement.get(json) ?? 0) + 1);
      globalVotes.set(element, perElement);
    }
    chosen.set(typeKey, names);
  }
  const global: Record<string, string> = {};
  for (const [element, counts] of [...globalVotes].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const json = topWinner(counts);
    if (json !== defaultJsonName(element, { repeated: false, ref: false, direction: "output" }))
      global[element] = json;
  }
  const table: NameTable = { global, byType: {}, objectTypes: {}, enumValues: {} };
  for (const [typeKey, names] of [...chosen].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const slots = slotsOf(ledgerSchema(), typeKey);
    const exceptions: Record<string, string> = {};
    for (const [element, json] of names) {
      const slot = slots.find((s) => s.name === element);
      if (!slot) continue;
      const derived = defaultJsonName(slot.name, {
        repeated: slot.max > 1,
        ref: false,
        direction: "output",
        base: global[slot.name],
      });
      if (derived !== json) exceptions[element] = json;
    }
    if (Object.keys(exceptions).length > 0) table.byType[typeKey] = exceptions;
  }
  for (const [typeKey, counts] of [...votes.objectTypes].sort(([a], [b]) => (a < b ? -1 : 1))) {
    table.objectTypes[typeKey] = topWinner(counts);
  }
  for (const [element, map] of [...votes.enums].sort(([a], [b]) => (a < b ? -1 : 1))) {
    table.enumValues[element] = Object.fromEntries(map);
  }
  return {
    ...table,
    unmatched: Object.fromEntries([...votes.unmatched].sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  if (!existsSync(MARKET_DOCUMENT)) {
    console.error(`${MARKET_DOCUMENT} not found; set LEDGER_MARKET_OPENAPI.`);
    process.exit(1);
  }
  const { unmatched, ...table } = importNames(readMarketDocument());
  mkdirSync(dirname(NAMES_PATH), { recursive: true });
  writeFileSync(NAMES_PATH, `${JSON.stringify(table, null, 1)}\n`);
  console.log(`wrote ${NAMES_PATH}`);
  console.log(`properties of the market's document left unmatched (${Object.keys(unmatched).length} types):`);
  for (const [label, names] of Object.entries(unmatched)) console.log(`  ${label}: ${names.join(", ")}`);
}
