import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parse } from "yaml";
import { REPORT_KINDS, reportFilters } from "../src/ledger/reports.ts";
import { CATALOGUE, type CatalogueEntry } from "../src/ledger/resources/catalogue.ts";
import { allResources } from "../src/ledger/resources/definitions.ts";
import {
  defaultJsonName,
  defaultEnumValue,
  EXPANSIONS,
  plural,
  wordsOf,
  type NameTable,
} from "../src/ledger/resources/names.ts";
import { listFilters, type FilterParam } from "../src/ledger/typed/filters.ts";
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
 * Enumeration values are matched the same way, wherever the market publishes an enumeration for
 * the same element: request and response fields (by the alignment above) and query parameters of
 * the same path and name (list filters, reports, deleted objects). See {@link matchEnumValues}.
 *
 * After import the committed table is the source of truth; `npm run import:names` re-runs it
 * (deterministically: the same document gives the same file) and two tests list every remaining
 * difference from the document: `names.market.test.ts` (field names) and
 * `enums.market.test.ts` (enumeration values).
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

  /** The enumeration of a query parameter of `GET path`, when it has one. */
  queryEnum(path: string, name: string): string[] | null {
    const operation = this.paths[path]?.get as Json | undefined;
    for (const raw of (operation?.parameters ?? []) as Json[]) {
      const parameter = this.deref(raw);
      if (parameter.in !== "query" || parameter.name !== name) continue;
      const schema = this.deref((parameter.schema ?? {}) as Json);
      const values = schema.enum ?? this.deref((schema.items ?? {}) as Json).enum;
      return Array.isArray(values) ? values.filter((v): v is string => typeof v === "string") : null;
    }
    return null;
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

/** One place where the market publishes an enumeration of one of the application's elements. */
interface EnumSite {
  readonly element: string;
  readonly xml: readonly string[];
  readonly market: readonly string[];
  readonly label: string;
}

/** What is left after aligning one type: matched by name elsewhere in a second pass. */
interface Leftover {
  readonly typeKey: string;
  readonly label: string;
  readonly direction: "input" | "output";
  readonly slots: Slot[];
  readonly props: Prop[];
}

/** Votes gathered over every aligned record type. */
class Votes {
  readonly names = new Map<string, Map<string, Map<string, number>>>();
  readonly objectTypes = new Map<string, Map<string, number>>();
  readonly enumSites: EnumSite[] = [];
  readonly leftovers: Leftover[] = [];
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
  const leftProps = props.filter((p) => !matched.has(p.name));
  if (leftProps.length > 0) {
    const used = new Set(pairs.map(([slot]) => slot));
    votes.leftovers.push({
      typeKey,
      label,
      direction,
      slots: slots.filter((slot) => !used.has(slot)),
      props: leftProps,
    });
  }
  for (const [slot, prop] of pairs) pairVotes(market, votes, typeKey, slot, prop, direction, label, seen);
}

function pairVotes(
  market: Market,
  votes: Votes,
  typeKey: string,
  slot: Slot,
  prop: Prop,
  direction: "input" | "output",
  label: string,
  seen: Set<string>,
): void {
  votes.name(typeKey, slot.name, baseName(slot, prop, direction));
  if (slot.type.kind === "simple" && slot.type.entry.e && prop.enumValues) {
    votes.enumSites.push({
      element: slot.name,
      xml: slot.type.entry.e,
      market: prop.enumValues,
      label: `${label}.${prop.name}`,
    });
  }
  if (slot.type.kind === "complex" && prop.object && !isRefSlot(slot)) {
    alignType(market, votes, slot.typeKey, prop.object, direction, `${label}.${prop.name}`, seen);
  }
}

/**
 * Second pass over what the in-order alignment left (the market moved a few properties to the end
 * of a type): a property pairs with a left-over element when the alignment of another type gave
 * that element exactly this name, and no other left-over element of the type has it.
 */
function alignLeftovers(market: Market, votes: Votes, seen: Set<string>): void {
  const namesOf = (element: string): Set<string> => {
    const out = new Set<string>();
    for (const perType of votes.names.values())
      for (const json of perType.get(element)?.keys() ?? []) out.add(json);
    return out;
  };
  // Pairing a nested type aligns it, which may leave more over: the list grows while it is read.
  for (let index = 0; index < votes.leftovers.length; index++) {
    const leftover = votes.leftovers[index] as Leftover;
    const missing: string[] = [];
    const free = new Set(leftover.slots);
    for (const prop of leftover.props) {
      const candidates = [...free].filter(
        (slot) =>
          score(slot, prop, leftover.direction) !== null &&
          namesOf(slot.name).has(baseName(slot, prop, leftover.direction)),
      );
      const [only] = candidates;
      if (candidates.length !== 1 || !only) {
        missing.push(prop.name);
        continue;
      }
      free.delete(only);
      pairVotes(market, votes, leftover.typeKey, only, prop, leftover.direction, leftover.label, seen);
    }
    if (missing.length > 0) votes.unmatched.set(leftover.label, missing);
  }
}

/** Every enumeration leaf at or below a query element (a filter aggregate holds its enumeration). */
function enumLeaves(slot: Slot, depth = 0): Slot[] {
  if (slot.type.kind === "simple") return slot.type.entry.e?.length ? [slot] : [];
  if (depth > 2) return [];
  return slotsOf(ledgerSchema(), slot.typeKey).flatMap((inner) => enumLeaves(inner, depth + 1));
}

/** The query parameters' enumerations: our parameter of the same path and name, and its element. */
function querySites(market: Market, votes: Votes, base: string): void {
  const visit = (path: string, params: readonly FilterParam[]): void => {
    for (const param of params) {
      const values =
        param.kind.kind === "enum" ? (param.kind.jsonSchema().enum as string[] | undefined) : undefined;
      if (!values) continue;
      const theirs = market.queryEnum(`${base}${path}`, param.name);
      if (!theirs) continue;
      const leaves = enumLeaves(param.slot).filter(
        (leaf) => leaf.type.kind === "simple" && leaf.type.entry.e?.length === values.length,
      );
      const [leaf] = leaves;
      if (leaves.length !== 1 || !leaf || leaf.type.kind !== "simple") continue;
      votes.enumSites.push({
        element: leaf.name,
        xml: leaf.type.entry.e ?? [],
        market: theirs,
        label: `GET ${path} ?${param.name}`,
      });
    }
  };
  for (const resource of allResources()) {
    if (resource.entry.origin !== "market" || !resource.actions.includes("list")) continue;
    visit(resource.entry.path, listFilters(resource).params);
  }
  for (const kind of REPORT_KINDS) visit(`reports/${kind.path}`, reportFilters(kind).params);
}

/** Letters and digits only, lower case: `AccountsPayable` and `accounts_payable` are the same. */
const letters = (value: string): string => value.replace(/[^A-Za-z0-9]/g, "").toLowerCase();

/** An XML value with the abbreviations the naming rule spells out spelled out (`TxnID` → transactionid). */
const spelledOut = (value: string): string =>
  wordsOf(value)
    .map((word) => EXPANSIONS[word.toLowerCase()] ?? word.toLowerCase())
    .join("");

/** Whether every letter of `short` appears in `long` in order, the first letters equal. */
function abbreviates(short: string, long: string): boolean {
  if (short.length < 3 || short[0] !== long[0]) return false;
  let at = 0;
  for (const char of long) if (char === short[at]) at++;
  return at === short.length;
}

/**
 * The market's spelling of each XML value of one enumeration, where one can be told (rule 5 of
 * `names.ts` otherwise). In rounds, each only among the values still unmatched:
 * 1. the same letters (`AccountsPayable` = `accounts_payable`);
 * 2. the same letters once the naming rule's abbreviations are spelled out (`CustomerMsg` =
 *    `customer_message`, `TxnType` = `transaction_type`, `SalesRep` = `sales_representative`);
 * 3. one is an abbreviation of the other, letter by letter from the same first letter (`ShipDate` →
 *    `shipping_date`, `OpenPOs` → `open_purchase_orders`, `PrevYearComp` →
 *    `previous_year_comparison`, `PendingOnly` → `pending`): pairs where each is the other's only
 *    candidate, repeated; when none is left, pairs where each is the other's strictly closest
 *    candidate (the shorter spelling covers most of the longer one), and again.
 * A value with two equally close candidates stays unmatched. Values the market spells with other
 * words (`Yes` → `veteran`) are never guessed: they are reviewed choices in `names.ts`.
 */
export function matchEnumValues(xml: readonly string[], market: readonly string[]): Map<string, string> {
  const result = new Map<string, string>();
  const freeXml = new Set(xml);
  const freeMarket = new Set(market);
  const uniquePairs = (same: (x: string, m: string) => boolean): boolean => {
    const xs = [...freeXml];
    const ms = [...freeMarket];
    let progress = false;
    for (const x of xs) {
      const candidates = ms.filter((m) => freeMarket.has(m) && same(x, m));
      const [only] = candidates;
      if (candidates.length !== 1 || only === undefined) continue;
      if (xs.filter((other) => freeXml.has(other) && same(other, only)).length !== 1) continue;
      result.set(x, only);
      freeXml.delete(x);
      freeMarket.delete(only);
      progress = true;
    }
    return progress;
  };
  uniquePairs((x, m) => letters(x) === letters(m));
  uniquePairs((x, m) => spelledOut(x) === letters(m));
  // The closeness of an abbreviation (shorter over longer letter count), 0 when there is none.
  const closeness = (x: string, m: string): number => {
    let best = 0;
    for (const form of [letters(x), spelledOut(x)]) {
      const [short, long] = form.length <= letters(m).length ? [form, letters(m)] : [letters(m), form];
      if (abbreviates(short, long)) best = Math.max(best, short.length / long.length);
    }
    return best;
  };
  for (;;) {
    while (uniquePairs((x, m) => closeness(x, m) > 0));
    // Stuck (`OpenPOs` abbreviates both `open_purchase_orders` and `open_purchase_orders_by_job`):
    // pair the values that are each other's strictly closest candidate, then go on.
    const best = (scores: number[]): number => {
      const top = Math.max(0, ...scores);
      return scores.filter((score) => score === top).length === 1 ? top : -1;
    };
    let progress = false;
    for (const x of [...freeXml]) {
      const ms = [...freeMarket];
      const scores = ms.map((m) => closeness(x, m));
      const top = best(scores);
      const m = ms[scores.indexOf(top)];
      if (top <= 0 || m === undefined) continue;
      if (best([...freeXml].map((other) => closeness(other, m))) !== top) continue;
      result.set(x, m);
      freeXml.delete(x);
      freeMarket.delete(m);
      progress = true;
    }
    if (!progress) break;
  }
  return result;
}

/**
 * The enumeration table: per element, each value's spelling chosen by the most sites (an element's
 * sites may disagree; the losers are printed and the enumeration test lists them). Only spellings
 * that differ from rule 5 are kept.
 */
function enumTable(sites: readonly EnumSite[]): {
  table: Record<string, Record<string, string>>;
  conflicts: string[];
} {
  const votes = new Map<string, Map<string, Map<string, string[]>>>();
  for (const site of sites) {
    const perElement = votes.get(site.element) ?? new Map<string, Map<string, string[]>>();
    votes.set(site.element, perElement);
    for (const [value, json] of matchEnumValues(site.xml, site.market)) {
      const perValue = perElement.get(value) ?? new Map<string, string[]>();
      perElement.set(value, perValue);
      perValue.set(json, [...(perValue.get(json) ?? []), site.label]);
    }
  }
  const table: Record<string, Record<string, string>> = {};
  const conflicts: string[] = [];
  for (const [element, perElement] of [...votes].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const map: Record<string, string> = {};
    for (const [value, spellings] of [...perElement].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const counts = new Map([...spellings].map(([json, labels]) => [json, labels.length]));
      const json = topWinner(counts);
      if (spellings.size > 1) {
        const others = [...spellings].filter(([j]) => j !== json).map(([j, l]) => `${j} (${l.join(", ")})`);
        conflicts.push(`${element}.${value}: ${json} over ${others.join("; ")}`);
      }
      if (json !== defaultEnumValue(value)) map[value] = json;
    }
    if (Object.keys(map).length > 0) table[element] = map;
  }
  return { table, conflicts };
}

function topWinner(counts: Map<string, number>): string {
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? "";
}

/** Builds the name table from the market document. */
export function importNames(
  document: Json,
): NameTable & { unmatched: Record<string, string[]>; conflicts: string[] } {
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
  alignLeftovers(market, votes, seen);
  querySites(market, votes, base);

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
  const enums = enumTable(votes.enumSites);
  table.enumValues = enums.table;
  return {
    ...table,
    conflicts: enums.conflicts,
    unmatched: Object.fromEntries([...votes.unmatched].sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  if (!existsSync(MARKET_DOCUMENT)) {
    console.error(`${MARKET_DOCUMENT} not found; set LEDGER_MARKET_OPENAPI.`);
    process.exit(1);
  }
  const { unmatched, conflicts, ...table } = importNames(readMarketDocument());
  mkdirSync(dirname(NAMES_PATH), { recursive: true });
  writeFileSync(NAMES_PATH, `${JSON.stringify(table, null, 2)}\n`);
  console.log(`wrote ${NAMES_PATH}`);
  console.log(`properties of the market's document left unmatched (${Object.keys(unmatched).length} types):`);
  for (const [label, names] of Object.entries(unmatched)) console.log(`  ${label}: ${names.join(", ")}`);
  console.log(`enumeration values the market spells differently at different places (${conflicts.length}):`);
  for (const conflict of conflicts) console.log(`  ${conflict}`);
}
