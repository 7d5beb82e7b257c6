import { resolve } from "node:path";
import { buildOpenApi } from "../src/api/openapi.ts";
import { apiRoutes } from "../src/api/routes/index.ts";
import { readMarketDocument } from "./import-market-names.ts";

/**
 * Every enumeration of the market's OpenAPI document against ours (issue 15, "Names"): query
 * parameters, request bodies and answers of every operation under the market's application prefix,
 * matched with ours by path, method and field path (the paths and field names are the same, see
 * `import-market-names.ts`). Our closed enumerations are `enum`s; open ones (answers) list their
 * values in the description ("Open enumeration: a, b"). `npm run compare:enums` prints the
 * differences; `test/contract/market-enums.test.ts` requires each to be recorded (decision 0015).
 */
type Json = Record<string, unknown>;

export const MARKET_PREFIX = "/quickbooks-desktop/";
export const OUR_PREFIX = "/v1/ledger-desktop/";

function derefer(document: Json): (schema: unknown) => Json {
  const schemas = ((document.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  return (schema) => {
    let current = (schema ?? {}) as Json;
    for (let hops = 0; hops < 50; hops++) {
      if (typeof current.$ref === "string") {
        current = schemas[current.$ref.split("/").pop() ?? ""] ?? {};
        continue;
      }
      const anyOf = (current.anyOf as Json[] | undefined)?.filter((s) => s.type !== "null");
      if (anyOf?.length === 1 && anyOf[0]) {
        current = anyOf[0];
        continue;
      }
      return current;
    }
    return current;
  };
}

/**
 * Every enumeration of a document under `prefix`, by site: `GET accounts ?accountType`,
 * `POST invoices body.lines[].x`, `GET invoices 200.data[].x` (answers of 200 or 201).
 */
export function enumSites(document: Json, prefix: string): Map<string, string[]> {
  const deref = derefer(document);
  const sites = new Map<string, string[]>();
  const add = (label: string, values: readonly unknown[]): void => {
    const strings = values.filter((v): v is string => typeof v === "string");
    if (strings.length === 0) return;
    sites.set(label, [...new Set([...(sites.get(label) ?? []), ...strings])]);
  };
  const walk = (label: string, raw: unknown, depth: number, path: ReadonlySet<Json>): void => {
    const schema = deref(raw);
    if (depth > 12 || path.has(schema)) return;
    const inner = new Set(path).add(schema);
    if (Array.isArray(schema.enum)) add(label, schema.enum);
    const open = /^Open enumeration: (.*)$/.exec(
      typeof schema.description === "string" ? schema.description : "",
    );
    if (open?.[1]) add(label, open[1].split(", "));
    // Variants (the market's report rows) each name their kind with a constant.
    if (typeof schema.const === "string" && !label.endsWith(".objectType")) add(label, [schema.const]);
    for (const key of ["anyOf", "oneOf", "allOf"]) {
      const variants = schema[key];
      if (Array.isArray(variants)) for (const variant of variants) walk(label, variant, depth + 1, inner);
    }
    if (schema.items) walk(`${label}[]`, schema.items, depth + 1, inner);
    for (const [name, prop] of Object.entries((schema.properties ?? {}) as Json)) {
      walk(`${label}.${name}`, prop, depth + 1, inner);
    }
  };
  for (const [path, operations] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    if (!path.startsWith(prefix)) continue;
    const route = path.slice(prefix.length);
    for (const [method, raw] of Object.entries(operations)) {
      const operation = raw as Json;
      if (typeof operation !== "object" || operation === null || !("responses" in operation)) continue;
      const op = `${method.toUpperCase()} ${route}`;
      for (const parameter of (operation.parameters ?? []) as unknown[]) {
        const p = deref(parameter);
        if (p.in !== "query") continue;
        const schema = deref(p.schema);
        const values = schema.enum ?? deref(schema.items).enum;
        if (Array.isArray(values)) add(`${op} ?${String(p.name)}`, values);
      }
      const content = (value: unknown): Json | undefined =>
        ((deref(value).content as Json | undefined)?.["application/json"] as Json | undefined) ?? undefined;
      const body = content(operation.requestBody);
      if (body) walk(`${op} body`, body.schema, 0, new Set());
      const responses = operation.responses as Json;
      const answer = content(responses["200"] ?? responses["201"]);
      if (answer) walk(`${op} 200`, answer.schema, 0, new Set());
    }
  }
  return sites;
}

export type DifferenceKind = "market-only" | "ours-only" | "absent";

export interface EnumComparison {
  /** Sites of the market's document, and those we have too. */
  readonly marketSites: number;
  readonly sharedSites: number;
  /** Market values at shared sites, and how many of them we refuse or never produce. */
  readonly marketValues: number;
  readonly refused: number;
  /** Market values at sites we do not have (the field is missing or not an enumeration). */
  readonly absentValues: number;
  /** The same counts once per field path and value (a line's `transactionType` counted once). */
  readonly distinct: { readonly values: number; readonly refused: number; readonly absent: number };
  /**
   * The differences, each once per field (`200.lines[].transactionType market-only unknown`): the
   * field path without method and route (a list's `200.data[]` is its record's `200`), the kind,
   * the value; `absent` keys name the whole site. Sorted, with the sites that show each.
   */
  readonly differences: ReadonlyMap<string, readonly string[]>;
}

/** The field path of a site, without its operation: `GET invoices 200.data[].x` → `200.x`. */
export function fieldOf(site: string): string {
  return site.replace(/^[A-Z]+ \S+ /, "").replace(/^200\.data\[\]/, "200");
}

export function compareEnumerations(market: Json, ours: Json): EnumComparison {
  const theirs = enumSites(market, MARKET_PREFIX);
  const mine = enumSites(ours, OUR_PREFIX);
  const differences = new Map<string, string[]>();
  const note = (key: string, site: string): void => {
    differences.set(key, [...(differences.get(key) ?? []), site]);
  };
  let sharedSites = 0;
  let marketValues = 0;
  let refused = 0;
  let absentValues = 0;
  const distinct = { values: new Set<string>(), refused: new Set<string>(), absent: new Set<string>() };
  for (const [site, values] of theirs) {
    const our = mine.get(site);
    if (!our) {
      absentValues += values.length;
      for (const value of values) distinct.absent.add(`${fieldOf(site)} ${value}`);
      note(`${fieldOf(site)} absent`, site);
      continue;
    }
    sharedSites++;
    marketValues += values.length;
    for (const value of values) {
      distinct.values.add(`${fieldOf(site)} ${value}`);
      if (our.includes(value)) continue;
      refused++;
      distinct.refused.add(`${fieldOf(site)} ${value}`);
      note(`${fieldOf(site)} market-only ${value}`, site);
    }
    for (const value of our) if (!values.includes(value)) note(`${fieldOf(site)} ours-only ${value}`, site);
  }
  return {
    marketSites: theirs.size,
    sharedSites,
    marketValues,
    refused,
    absentValues,
    distinct: {
      values: distinct.values.size,
      refused: distinct.refused.size,
      absent: distinct.absent.size,
    },
    differences: new Map([...differences].sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}

/** Our OpenAPI document, built from the routes (the committed `openapi.json` is the same). */
export function ourDocument(): Json {
  return buildOpenApi(apiRoutes, "http://localhost");
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const result = compareEnumerations(readMarketDocument(), ourDocument());
  for (const [key, sites] of result.differences)
    console.log(`${key}  (${sites.length} sites, e.g. ${sites[0]})`);
  const percent = (n: number, of: number): string => `${((100 * n) / Math.max(of, 1)).toFixed(1)} %`;
  console.log(
    `${result.marketSites} market enumeration sites, ${result.sharedSites} also ours; ` +
      `${result.refused} of ${result.marketValues} market values there refused or never produced ` +
      `(${percent(result.refused, result.marketValues)}); ${result.absentValues} values at sites we lack; ` +
      `${result.differences.size} distinct differences`,
  );
  const { values, refused, absent } = result.distinct;
  console.log(
    `once per field and value: ${refused} of ${values} refused or never produced ` +
      `(${percent(refused, values)}); ${absent} at fields we lack; ` +
      `all together ${percent(refused + absent, values + absent)}`,
  );
}
