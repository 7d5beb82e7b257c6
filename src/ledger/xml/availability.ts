import { readFileSync } from "node:fs";
import type { LedgerAvailabilityTable } from "./availability-table.ts";
import { ledgerSchema, type LedgerSchema } from "./schema.ts";
import { slotsOf } from "./slots.ts";
import type { XmlElement } from "./tree.ts";

/**
 * Which connections can take which request elements (spec "Versioning"; decision 0014): the first
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

  constructor(readonly table: LedgerAvailabilityTable) {}

  /** The availability of element `name` written by `context` (a type key, `&group` or `QBXMLMsgsRq`) in `request`. */
  of(request: string, context: string, name: string): Availability {
    const text =
      this.table.overrides[`${request} ${context}`]?.[name] ?? this.table.elements[context]?.[name];
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

/** Why `availability` keeps an element from a connection, or null when the connection takes it. */
function refusal(
  availability: Availability,
  connection: ConnectionCapabilities,
  steps: readonly ElementStep[],
): RefusedElement | null {
  const elementPath = steps.map((s) => (s.count > 1 ? `${s.name}[${s.index + 1}]` : s.name)).join("/");
  const spoken = connection.xmlVersion === null ? null : versionNumber(connection.xmlVersion);
  const first = availability.firstVersion;
  if (first !== null && spoken !== null && connection.xmlVersion !== null) {
    const needed = versionNumber(first);
    if (needed !== null && needed > spoken) {
      return {
        code: "LEDGER_FIELD_UNSUPPORTED_BY_VERSION",
        steps,
        elementPath,
        minimumXmlVersion: first,
        xmlVersion: connection.xmlVersion,
      };
    }
  }
  const country = connection.country?.trim().toUpperCase() ?? "";
  if (country !== "" && availability.lackingCountries.has(country)) {
    return { code: "LEDGER_REGION_UNSUPPORTED", steps, elementPath, country };
  }
  return null;
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
  if (connection.xmlVersion === null && (connection.country ?? "").trim() === "") return null;
  const counted = counts(messages);
  const seen = new Map<string, number>();
  for (const message of messages) {
    const index = seen.get(message.name) ?? 0;
    seen.set(message.name, index + 1);
    if (!schema.requests.has(message.name)) continue;
    const steps = [
      { name: message.name, typeKey: message.name, index, count: counted.get(message.name) ?? 1 },
    ];
    const found =
      refusal(availability.ofMessage(message.name), connection, steps) ??
      refusedWithin(schema, availability, connection, message.name, message, message.name, steps);
    if (found) return found;
  }
  return null;
}

function counts(elements: readonly XmlElement[]): Map<string, number> {
  const counted = new Map<string, number>();
  for (const element of elements) counted.set(element.name, (counted.get(element.name) ?? 0) + 1);
  return counted;
}

function refusedWithin(
  schema: LedgerSchema,
  availability: LedgerAvailability,
  connection: ConnectionCapabilities,
  request: string,
  element: XmlElement,
  typeKey: string,
  steps: readonly ElementStep[],
): RefusedElement | null {
  if (element.children.length === 0) return null;
  const slots = slotsOf(schema, typeKey);
  const counted = counts(element.children);
  const seen = new Map<string, number>();
  for (const child of element.children) {
    const index = seen.get(child.name) ?? 0;
    seen.set(child.name, index + 1);
    const slot = slots.find((s) => s.name === child.name);
    if (slot === undefined) continue;
    const at = [
      ...steps,
      { name: child.name, typeKey: slot.typeKey, index, count: counted.get(child.name) ?? 1 },
    ];
    const found =
      refusal(availability.of(request, slot.owner, child.name), connection, at) ??
      (slot.type.kind === "complex"
        ? refusedWithin(schema, availability, connection, request, child, slot.typeKey, at)
        : null);
    if (found) return found;
  }
  return null;
}
