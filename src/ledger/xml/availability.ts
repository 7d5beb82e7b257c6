import { readFileSync } from "node:fs";
import type { LedgerAvailabilityTable } from "./availability-table.ts";
import { ledgerSchema, type LedgerSchema } from "./schema.ts";
import { slotsOf } from "./slots.ts";
import type { XmlElement } from "./tree.ts";

/**
 * Which connections can take which request elements (spec "Versioning"; decision 0016): the first
 * message version of every element and the regional editions that lack it, from
 * `generated/ledger-availability.json` (derived by `scripts/gen-ledger-availability.ts`). The
 * service refuses a message before queueing it when the connection's negotiated version or its
 * company file's edition cannot take an element, and the simulated application refuses the same
 * elements the way the application does.
 */

/** The first version of an element and the editions (connector `qbXMLCountry` values) that lack it. */
export interface Availability {
  /** null: as old as the message format (1.0). */
  readonly firstVersion: string | null;
  readonly lackingCountries: ReadonlySet<string>;
}

/** What a connection reported about its application: the negotiated version and the edition. */
export interface ConnectionCapabilities {
  /** The message version negotiated with the application (`13.0` … `16.0`); null: not known yet. */
  readonly xmlVersion: string | null;
  /** The company file's edition as the connector names it (`US`, `CA`, `UK`, `AU`); null: not known. */
  readonly country: string | null;
}

/** One element on the way from a message down to a refused element. */
export interface ElementStep {
  readonly name: string;
  /** The element's type key in the schema table. */
  readonly typeKey: string;
  /** Its position among the siblings of the same name (0-based), and how many there are. */
  readonly index: number;
  readonly count: number;
}

interface Refused {
  /** From the message (`InvoiceAddRq`) down to the refused element. */
  readonly steps: readonly ElementStep[];
  /** The same path written as `InvoiceAddRq/InvoiceAdd/InvoiceLineAdd[2]/ItemRef`. */
  readonly elementPath: string;
}

export type RefusedElement =
  | (Refused & {
      readonly code: "LEDGER_FIELD_UNSUPPORTED_BY_VERSION";
      readonly minimumXmlVersion: string;
      readonly xmlVersion: string;
    })
  | (Refused & { readonly code: "LEDGER_REGION_UNSUPPORTED"; readonly country: string });

/** The context of the request messages themselves in the table. */
const MESSAGES = "QBXMLMsgsRq";

const NOWHERE: Availability = { firstVersion: null, lackingCountries: new Set() };

export class LedgerAvailability {
  private readonly parsed = new Map<string, Availability>();
  /** request → context → element → availability (the table's overrides, by request). */
  private readonly overrides = new Map<string, Map<string, Record<string, string>>>();

  constructor(readonly table: LedgerAvailabilityTable) {
    for (const [key, names] of Object.entries(table.overrides)) {
      const [request = "", context = ""] = key.split(" ");
      let contexts = this.overrides.get(request);
      if (!contexts) this.overrides.set(request, (contexts = new Map<string, Record<string, string>>()));
      contexts.set(context, names);
    }
  }

  /** The availability of element `name` written by `context` (a type key, `&group` or `QBXMLMsgsRq`) in `request`. */
  of(request: string, context: string, name: string): Availability {
    const text = this.overrides.get(request)?.get(context)?.[name] ?? this.table.elements[context]?.[name];
    if (text === undefined || text === "") return NOWHERE;
    let availability = this.parsed.get(text);
    if (availability === undefined) {
      const parts = text.split(" ");
      const first = parts[0] ?? "";
      availability = {
        firstVersion: /^\d+\.\d+$/.test(first) ? first : null,
        lackingCountries: new Set(parts.filter((p) => p.startsWith("-")).map((p) => p.slice(1))),
      };
      this.parsed.set(text, availability);
    }
    return availability;
  }

  /** The availability of a request message (`InvoiceAddRq`). */
  ofMessage(request: string): Availability {
    return this.of(request, MESSAGES, request);
  }
}

let loaded: LedgerAvailability | null = null;

/** The table, read once on first use. */
export function ledgerAvailability(): LedgerAvailability {
  loaded ??= new LedgerAvailability(
    JSON.parse(
      readFileSync(new URL("./generated/ledger-availability.json", import.meta.url), "utf8"),
    ) as LedgerAvailabilityTable,
  );
  return loaded;
}

/** `major.minor` as a comparable number; null for anything else. */
export function versionNumber(version: string): number | null {
  const match = /^(\d+)\.(\d+)$/.exec(version.trim());
  return match ? Number(match[1]) * 1000 + Number(match[2]) : null;
}

/** The connection's version as a number and its edition, read once per gate. */
interface Reader {
  readonly version: number | null;
  readonly xmlVersion: string;
  readonly country: string;
}

/** Where an element sits: its siblings and position, its type, and its parent's place. */
interface Place {
  readonly parent: Place | null;
  readonly siblings: readonly XmlElement[];
  readonly index: number;
  readonly typeKey: string;
}

/** The steps from the message down to `place` (built only for a refusal). */
function stepsTo(place: Place): ElementStep[] {
  const steps: ElementStep[] = [];
  for (let at: Place | null = place; at !== null; at = at.parent) {
    const position = at.index;
    const name = at.siblings[position]?.name ?? "";
    let index = 0;
    let count = 0;
    at.siblings.forEach((element, i) => {
      if (element.name !== name) return;
      if (i < position) index++;
      count++;
    });
    steps.push({ name, typeKey: at.typeKey, index, count });
  }
  return steps.reverse();
}

/** Why `availability` keeps the element at `place` from the reader, or null when it takes it. */
function refusal(availability: Availability, reader: Reader, place: Place): RefusedElement | null {
  if (availability === NOWHERE) return null;
  const first = availability.firstVersion;
  const needed = first === null ? null : versionNumber(first);
  const byVersion = needed !== null && reader.version !== null && needed > reader.version;
  const byRegion = reader.country !== "" && availability.lackingCountries.has(reader.country);
  if (!byVersion && !byRegion) return null;
  const steps = stepsTo(place);
  const elementPath = steps.map((s) => (s.count > 1 ? `${s.name}[${s.index + 1}]` : s.name)).join("/");
  if (byVersion && first !== null) {
    return {
      code: "LEDGER_FIELD_UNSUPPORTED_BY_VERSION",
      steps,
      elementPath,
      minimumXmlVersion: first,
      xmlVersion: reader.xmlVersion,
    };
  }
  return { code: "LEDGER_REGION_UNSUPPORTED", steps, elementPath, country: reader.country };
}

/**
 * The first element of `messages` (request messages, such as `InvoiceAddRq`, in document order) that
 * the connection cannot take: one newer than its negotiated message version, or one its company
 * file's edition lacks; null when it takes them all. An unknown version or edition refuses nothing
 * (the connection has not reported it yet). Elements the schema does not know are left to schema
 * validation.
 */
export function firstRefusedElement(
  messages: readonly XmlElement[],
  connection: ConnectionCapabilities,
  schema: LedgerSchema = ledgerSchema(),
  availability: LedgerAvailability = ledgerAvailability(),
): RefusedElement | null {
  const reader: Reader = {
    version: connection.xmlVersion === null ? null : versionNumber(connection.xmlVersion),
    xmlVersion: connection.xmlVersion ?? "",
    country: connection.country?.trim().toUpperCase() ?? "",
  };
  if (reader.version === null && reader.country === "") return null;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    if (message === undefined || !schema.requests.has(message.name)) continue;
    const place: Place = { parent: null, siblings: messages, index, typeKey: message.name };
    const found =
      refusal(availability.ofMessage(message.name), reader, place) ??
      refusedWithin(schema, availability, reader, message.name, message, place);
    if (found) return found;
  }
  return null;
}

/** The first refused element below `element` (at `place`), in document order. */
function refusedWithin(
  schema: LedgerSchema,
  availability: LedgerAvailability,
  reader: Reader,
  request: string,
  element: XmlElement,
  place: Place,
): RefusedElement | null {
  const children = element.children;
  if (children.length === 0) return null;
  const slots = slotsOf(schema, place.typeKey);
  for (let index = 0; index < children.length; index++) {
    const child = children[index];
    if (child === undefined) continue;
    const slot = slots.find((s) => s.name === child.name);
    if (slot === undefined) continue;
    const at: Place = { parent: place, siblings: children, index, typeKey: slot.typeKey };
    const found =
      refusal(availability.of(request, slot.owner, child.name), reader, at) ??
      (slot.type.kind === "complex" ? refusedWithin(schema, availability, reader, request, child, at) : null);
    if (found) return found;
  }
  return null;
}
