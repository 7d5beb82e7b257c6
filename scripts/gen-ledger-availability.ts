import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { SaxesParser } from "saxes";
import type { LedgerAvailabilityTable } from "../src/ledger/xml/availability-table.ts";
import { LedgerSchema } from "../src/ledger/xml/schema.ts";
import { slotsOf } from "../src/ledger/xml/slots.ts";
import { deriveLedgerSchema, ledgerSchemaDir, olderElementNames } from "./gen-ledger-schema.ts";

/**
 * Derives the availability table (`src/ledger/xml/generated/ledger-availability.json`): for every
 * element of every request message, in the context where it sits (the type or group whose model
 * writes it), the first message version that has it and the regional editions that lack it
 * (decision 0016). Sources, all outside the repository (licensed; only the derived facts are
 * written):
 *
 * - the SDK's sample files for 13.0 and 14.0 (`qbxmlops130.sample.xml`, `qbxmlops140.sample.xml`),
 *   whose comments give per element the version that introduced it (`v6.0`) and the editions that
 *   lack it (`not in …`), also for whole alternatives (`v11.0, BEGIN OR: …`);
 * - the 13.0 and 16.0 XSDs: an element the 14.0 sample has and the 13.0 one lacks is first in 14.0;
 *   an element only the 16.0 XSD has is given `UNKNOWN_FIRST_VERSION` (no sample or XSD of 15.0
 *   says which of 15.0 and 16.0 introduced it).
 *
 * `npm run gen:ledger-availability` reads `../shared/reference/qbxml-schema` (override with
 * `LEDGER_SCHEMA_DIR`); `src/ledger/xml/availability.test.ts` fails when the committed table drifts
 * from a fresh derivation (and, under CI, when the sources are missing).
 */
export const LEDGER_AVAILABILITY_PATH = resolve(
  import.meta.dirname,
  "..",
  "src/ledger/xml/generated/ledger-availability.json",
);

export const SAMPLE_FILES = ["qbxmlops130.sample.xml", "qbxmlops140.sample.xml"] as const;

/** What an element only the 16.0 schema has is taken to need (decision 0016: the later bound). */
export const UNKNOWN_FIRST_VERSION = "16.0";

/** The version of the newer sample: what its elements that the older sample lacks need at least. */
const NEWER_SAMPLE_VERSION = "14.0";

/** The samples' edition names → the connector's `qbXMLCountry`; the online edition is not ours. */
export const EDITIONS: Readonly<Record<string, string | null>> = {
  QBD: "US",
  QBCA: "CA",
  QBUK: "UK",
  QBAU: "AU",
  QBOE: null,
};
const COUNTRIES = ["US", "CA", "UK", "AU"];

/** The samples' own code for an edition (a country, or null for the online edition). */
export function editionCode(country: string | null): string {
  const code = Object.entries(EDITIONS).find(([, c]) => c === country)?.[0];
  if (code === undefined) throw new Error(`no edition for ${String(country)}`);
  return code;
}

/** Matches any edition code of the samples: none may reach the committed table. */
export const EDITION_CODE = new RegExp(Object.keys(EDITIONS).join("|"), "i");

/** The annotation of one element of a sample. */
interface Annotation {
  version: string | null;
  lacking: Set<string>;
}

function versionValue(version: string): number {
  const [major = "0", minor = "0"] = version.split(".");
  return Number(major) * 1000 + Number(minor);
}

function later(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return versionValue(b) > versionValue(a) ? b : a;
}

/** `v6.0` and `not in QBD|QBCA` of a comment (other facts in it, such as lengths, are not ours). */
function annotationOf(comment: string): Annotation {
  const version = /\bv(\d+\.\d+)\b/.exec(comment)?.[1] ?? null;
  const lacking = new Set<string>();
  for (const edition of (/\bnot in ([A-Z|]+)/.exec(comment)?.[1] ?? "").split("|")) {
    if (edition === "") continue;
    const country = EDITIONS[edition];
    if (country === undefined) throw new Error(`sample: unknown edition ${edition} in "${comment}"`);
    if (country !== null) lacking.add(country);
  }
  return { version, lacking };
}

function merge(into: Annotation, from: Annotation): void {
  into.version = later(into.version, from.version);
  for (const country of from.lacking) into.lacking.add(country);
}

/** Where the request messages sit in a sample; paths are kept from the request down. */
const REQUESTS = "QBXML/QBXMLMsgsRq/";

interface OpenElement {
  readonly path: string;
  readonly line: number;
  readonly annotation: Annotation;
  /** The `BEGIN OR` … `END OR` runs open among its children, with their annotations. */
  readonly alternatives: Annotation[];
}

/**
 * The request elements of a sample file by path (`InvoiceAddRq/InvoiceAdd/ClassRef`), each with
 * its annotation. A comment on the line of an element's start tag (aggregates) or end tag (leaves)
 * annotates it; a comment on a line of its own is a heading (`BEGIN OR`, `END OR`, value lists),
 * and a `BEGIN OR` heading's annotation holds for every alternative until its `END OR`.
 */
export function readSample(file: string): Map<string, Annotation> {
  const found = new Map<string, Annotation>();
  const parser = new SaxesParser({ position: true });
  const open: OpenElement[] = [];
  let closed: { element: OpenElement; line: number } | null = null;
  parser.on("opentag", (tag) => {
    const parent = open[open.length - 1];
    const path = parent === undefined ? tag.name : `${parent.path}/${tag.name}`;
    const annotation: Annotation = { version: null, lacking: new Set() };
    for (const run of parent?.alternatives ?? []) merge(annotation, run);
    open.push({ path, line: parser.line, annotation, alternatives: [] });
    if (!path.startsWith(REQUESTS)) return;
    const key = path.slice(REQUESTS.length);
    if (found.has(key)) throw new Error(`${file}: ${key} appears twice`);
    found.set(key, annotation);
  });
  parser.on("closetag", () => {
    const element = open.pop();
    if (element) closed = { element, line: parser.line };
  });
  parser.on("comment", (comment) => {
    const top = open[open.length - 1];
    if (closed !== null && closed.line === parser.line)
      return merge(closed.element.annotation, annotationOf(comment));
    if (top !== undefined && top.line === parser.line) return merge(top.annotation, annotationOf(comment));
    if (top === undefined) return;
    const heading = comment.trim();
    const begin = heading.indexOf("BEGIN OR");
    if (begin >= 0) top.alternatives.push(annotationOf(heading.slice(0, begin)));
    else if (heading === "END OR" && top.alternatives.pop() === undefined)
      throw new Error(`${file}: END OR without BEGIN OR in ${top.path}`);
  });
  parser.write(readFileSync(file, "utf8")).close();
  return found;
}

function render(version: string | null, lacking: ReadonlySet<string>): string {
  const countries = COUNTRIES.filter((c) => lacking.has(c)).map((c) => `-${c}`);
  return [...(version === null ? [] : [version]), ...countries].join(" ");
}

function sorted<T>(entries: Iterable<[string, T]>): Record<string, T> {
  return Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Derives the table from the XSDs and samples in `dir`. */
export function deriveLedgerAvailability(dir: string): LedgerAvailabilityTable {
  const table = deriveLedgerSchema(dir);
  const schema = new LedgerSchema(table);
  const older = olderElementNames(dir);
  const [olderSample, newerSample] = SAMPLE_FILES.map((name) => readSample(resolve(dir, name)));
  if (!olderSample || !newerSample) throw new Error("two samples expected");
  const matched = new Set<string>();

  /**
   * The availability of the element at `path`, written directly by `context`'s model, from the
   * samples; null when neither sample has the path (a request only the newer schema has).
   */
  const sampled = (path: string): string | null => {
    const inOlder = olderSample.get(path);
    const inNewer = newerSample.get(path);
    if (inOlder) matched.add(`13:${path}`);
    if (inNewer) matched.add(`14:${path}`);
    if (!inOlder && !inNewer) return null;
    const version = inOlder ? inOlder.version : later(inNewer?.version ?? null, NEWER_SAMPLE_VERSION);
    // Editions: the newest sample that has the element says which lack it.
    return render(version, (inNewer ?? inOlder)?.lacking ?? new Set());
  };
  /** Without a sample: the 13.0 XSD has it (as old as the samples' elements), or only 16.0 does. */
  const unsampled = (context: string, name: string): string =>
    older.get(context)?.has(name) ? "" : UNKNOWN_FIRST_VERSION;

  // context → element → availability → the requests where the samples say so
  const seen = new Map<string, Map<string, Map<string, string[]>>>();
  const note = (request: string, context: string, name: string, value: string | null): void => {
    let names = seen.get(context);
    if (!names) seen.set(context, (names = new Map()));
    let values = names.get(name);
    if (!values) names.set(name, (values = new Map()));
    // A path no sample has takes what the samples say of its context elsewhere (noted as null).
    const key = value ?? "\u0000";
    const requests = values.get(key) ?? [];
    if (!requests.includes(request)) requests.push(request);
    values.set(key, requests);
  };
  const walk = (request: string, typeKey: string, path: string, depth: number): void => {
    if (depth > 40) throw new Error(`${path}: nesting deeper than any message`);
    for (const slot of slotsOf(schema, typeKey)) {
      const at = `${path}/${slot.name}`;
      note(request, slot.owner, slot.name, sampled(at));
      if (slot.type.kind === "complex") walk(request, slot.typeKey, at, depth + 1);
    }
  };
  for (const request of table.requests) {
    note(request, "QBXMLMsgsRq", request, sampled(request));
    walk(request, request, request, 0);
  }
  // Every element of the samples is an element of the schema: otherwise the walk missed facts.
  for (const [version, sample] of [
    ["13", olderSample],
    ["14", newerSample],
  ] as const) {
    const missed = [...sample.keys()].filter((path) => !matched.has(`${version}:${path}`));
    if (missed.length > 0)
      throw new Error(`sample ${version}.0 elements not in the schema: ${missed.join(", ")}`);
  }

  const elements = new Map<string, Map<string, string>>();
  const overrides = new Map<string, Map<string, string>>();
  const put = (into: Map<string, Map<string, string>>, key: string, name: string, value: string): void => {
    let names = into.get(key);
    if (!names) into.set(key, (names = new Map()));
    names.set(name, value);
  };
  for (const [context, names] of seen) {
    for (const [name, values] of names) {
      // The availability most requests share is the context's; the others are overrides per request.
      const fromSamples = [...values].filter(([value]) => value !== "\u0000");
      const ranked = fromSamples.sort(
        ([a, ra], [b, rb]) => rb.length - ra.length || (a < b ? -1 : a > b ? 1 : 0),
      );
      const [base, ...others] = ranked;
      const value = base?.[0] ?? unsampled(context, name);
      if (value !== "") put(elements, context, name, value);
      for (const [other, requests] of others) {
        for (const request of requests) {
          if (base?.[1].includes(request))
            throw new Error(`${request}: ${context} ${name} is both "${value}" and "${other}"`);
          put(overrides, `${request} ${context}`, name, other);
        }
      }
    }
  }
  const record = (map: Map<string, Map<string, string>>): Record<string, Record<string, string>> =>
    sorted([...map].map(([key, names]) => [key, sorted(names)]));
  return {
    format: 1,
    source: `Derived from ${SAMPLE_FILES.join(" and ")} (first versions and editions) and the 13.0 and 16.0 XSDs by scripts/gen-ledger-availability.ts; do not edit, run \`npm run gen:ledger-availability\`.`,
    unknownFirstVersion: UNKNOWN_FIRST_VERSION,
    countries: COUNTRIES,
    elements: record(elements),
    overrides: record(overrides),
  };
}

/** One context per line, so a change shows as a readable diff. */
export function renderLedgerAvailability(table: LedgerAvailabilityTable): string {
  const sections = Object.entries(table).map(([section, value]) => {
    const name = JSON.stringify(section);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length === 0) return `${name}: {}`;
      return `${name}: {\n${entries.map(([key, item]) => `  ${JSON.stringify(key)}: ${JSON.stringify(item)}`).join(",\n")}\n}`;
    }
    return `${name}: ${JSON.stringify(value)}`;
  });
  return `{\n${sections.join(",\n")}\n}\n`;
}

/** Whether every source of the derivation is in `dir`. */
export function availabilitySourcesIn(dir: string): boolean {
  return ["qbxmlops130.xsd", "qbxmlops160.xsd", ...SAMPLE_FILES].every((name) =>
    existsSync(resolve(dir, name)),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const dir = ledgerSchemaDir();
  if (!availabilitySourcesIn(dir)) {
    console.error(
      `the XSDs and ${SAMPLE_FILES.join(", ")} are not all in ${dir}; set LEDGER_SCHEMA_DIR to the directory holding them.`,
    );
    process.exit(1);
  }
  mkdirSync(dirname(LEDGER_AVAILABILITY_PATH), { recursive: true });
  const table = deriveLedgerAvailability(dir);
  const text = renderLedgerAvailability(table);
  writeFileSync(LEDGER_AVAILABILITY_PATH, text);
  console.log(
    `wrote ${LEDGER_AVAILABILITY_PATH} (${text.length} bytes, ${Object.keys(table.elements).length} contexts, ${Object.keys(table.overrides).length} overrides)`,
  );
}
