import {
  amount,
  boolean,
  date,
  dateTime,
  decimal,
  duration,
  enumOf,
  id,
  integer,
  percent,
  price,
  quantity,
  text,
  uuid,
  type AnyFieldKind,
} from "../fields.ts";
import { ownerIdKind } from "../owner-id.ts";
import { SECRET_ELEMENTS } from "../xml/redact.ts";
import { ledgerSchema, type LedgerSchema } from "../xml/schema.ts";
import { slotsOf, type Slot } from "../xml/slots.ts";
import { jsonEnumValue, jsonNameOf, nameTable, type NameTable } from "./names.ts";

/**
 * The JSON view of one XML type, derived from the schema table and the name table: every element
 * becomes a field with its JSON name, its field kind (the closed set in `fields.ts`), how often it
 * may occur, what it excludes and whether it is required. Input shapes (Add/Mod types) and output
 * shapes (Ret types) are built the same way; only the naming of references differs.
 */

/** How the engines treat a field. */
export type FieldForm =
  /** A leaf value with a field kind. */
  | "value"
  /** A reference: `<name>Id` on input, `{id, fullName}` on output. */
  | "ref"
  /** A nested aggregate (address, credit card info, adjustment block…). */
  | "object";

export interface Field {
  /** JSON name (input references carry `Id`/`Ids`). */
  readonly json: string;
  readonly slot: Slot;
  readonly form: FieldForm;
  /** Whether the field is a JSON array (the element repeats). */
  readonly array: boolean;
  /** The leaf kind of a `value` field (also the ID kind of an input `ref`). */
  readonly kind: AnyFieldKind | null;
  /** The nested shape of an `object` field. */
  readonly shape: Shape | null;
  /** Whether an update may clear the field with null (optional text on Mod types). */
  readonly clearable: boolean;
  /**
   * An output field the application's record does not hold, computed from one it does (`isBilled`
   * from a time tracking activity's `billingStatus`): `from` is the JSON name of that field, read
   * first. Its `slot` is that field's element.
   */
  readonly derive?: { readonly from: string; readonly value: (source: unknown) => unknown };
}

export interface Shape {
  readonly typeKey: string;
  readonly direction: "input" | "output";
  /** `objectType` of nested records (lines, linked transactions…), from the name table. */
  readonly objectType: string | null;
  readonly fields: readonly Field[];
}

/** Whether a complex type is a reference: only `ListID` and/or `FullName`. */
export function isReferenceType(schema: LedgerSchema, typeKey: string): boolean {
  const slots = slotsOf(schema, typeKey);
  return (
    slots.length > 0 &&
    slots.length <= 2 &&
    slots.every((s) => s.name === "ListID" || s.name === "FullName") &&
    slots.some((s) => s.name === "ListID")
  );
}

const kinds = new Map<string, AnyFieldKind>();

/**
 * Amounts the spec gives as JSON numbers, with their places (spec: inventory adjustment
 * `valueDifference (number, 2 places)`; the market has the same).
 */
const NUMBER_AMOUNTS: Readonly<Record<string, number>> = { ValueDifference: 2 };

/**
 * The field kind of a leaf element. Kinds are immutable, so elements of one type share one kind
 * (enumerations per element name, since their JSON values are named per element; so are the
 * amounts given as numbers).
 */
export function leafKind(slot: Slot, table: NameTable, clearable: boolean): AnyFieldKind {
  if (slot.type.kind !== "simple") throw new Error(`${slot.name} is not a leaf`);
  const base = slot.type.entry.b;
  const named =
    base === "enum" ||
    base === "guid" ||
    base === "uuid" ||
    slot.name in NUMBER_AMOUNTS ||
    slot.name in SECRET_ELEMENTS;
  const key = `${slot.typeKey}|${clearable ? 1 : 0}|${named ? slot.name : ""}`;
  let kind = kinds.get(key);
  if (!kind) {
    kind = makeLeafKind(slot, table, clearable);
    kinds.set(key, kind);
  }
  return kind;
}

function makeLeafKind(slot: Slot, table: NameTable, clearable: boolean): AnyFieldKind {
  if (slot.type.kind !== "simple") throw new Error(`${slot.name} is not a leaf`);
  const entry = slot.type.entry;
  const options = { clearable };
  const numberPlaces = NUMBER_AMOUNTS[slot.name];
  if (numberPlaces !== undefined) return quantity({ ...options, places: numberPlaces });
  switch (entry.b) {
    case "amt":
      return amount(options);
    case "price":
      return price(options);
    case "percent":
      return percent(options);
    case "quan":
      return quantity(options);
    case "int":
      return integer({
        ...options,
        ...(entry.lo !== undefined ? { min: entry.lo } : {}),
        ...(entry.hi !== undefined ? { max: entry.hi } : {}),
      });
    case "bool":
      return boolean(options);
    case "date":
      return date(options);
    case "datetime":
      return dateTime(options);
    case "id":
      return id(options);
    case "guid":
    case "uuid":
      // An owner is `0` (public) or an application's GUID in braces, checked as the application
      // checks it (issue 25: any other text was written and refused by the schema, a 500); other
      // GUIDs (externalId) are UUIDs.
      if (slot.name === "OwnerID") return ownerIdKind;
      return uuid(options);
    case "enum": {
      const values = entry.e ?? [];
      if (values.length === 0) return text({ ...options, max: entry.max ?? 4095 });
      const json = values.map((v) => jsonEnumValue(table, slot.name, v));
      const xml = Object.fromEntries(json.map((j, i) => [j, values[i] ?? j]));
      return enumOf(json as [string, ...string[]], { ...options, xml });
    }
    case "float":
      return decimal({ ...options, places: 5 });
    case "timeinterval":
      return duration(options);
    default: {
      // A secret element (decision 0032) is masked wherever a record is read: its output masks.
      const secret = SECRET_ELEMENTS[slot.name];
      return text({ ...options, max: entry.max ?? 4095, ...(secret ? { secret } : {}) });
    }
  }
}

const cache = new Map<string, Shape>();
const ID_KIND = id() as AnyFieldKind;

/** The shape of a complex type for one direction. */
export function shapeOf(typeKey: string, direction: "input" | "output"): Shape {
  const key = `${direction}:${typeKey}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const schema = ledgerSchema();
  const table = nameTable();
  const fields: Field[] = [];
  const shape: Shape = {
    typeKey,
    direction,
    objectType: table.objectTypes[typeKey] || null,
    fields,
  };
  cache.set(key, shape);
  const isMod = direction === "input" && /Mod$/.test(typeKey);
  for (const slot of slotsOf(schema, typeKey)) {
    // An element the schema allows zero times is no field (a value adjustment's `NewValue` and
    // `ValueDifference`: the application refuses them, decision 0015).
    if (slot.max === 0) continue;
    const array = slot.max > 1;
    if (slot.type.kind === "complex" && isReferenceType(schema, slot.typeKey)) {
      fields.push({
        json: jsonNameOf(table, typeKey, slot, true, direction),
        slot,
        form: "ref",
        array,
        kind: direction === "input" ? ID_KIND : null,
        shape: null,
        clearable: false,
      });
    } else if (slot.type.kind === "complex") {
      fields.push({
        json: jsonNameOf(table, typeKey, slot, false, direction),
        slot,
        form: "object",
        array,
        kind: null,
        shape: shapeOf(slot.typeKey, direction),
        clearable: false,
      });
    } else {
      const clearable = isMod && slot.min === 0 && !array && slot.type.entry.b === "str";
      fields.push({
        json: jsonNameOf(table, typeKey, slot, false, direction),
        slot,
        form: "value",
        array,
        kind: leafKind(slot, table, clearable),
        shape: null,
        clearable,
      });
    }
  }
  return shape;
}

/**
 * Output fields the market's clients read that the application's record does not hold, each computed
 * from a field it does hold, per record type (named escape hatches, counted by
 * `resources/record-shape.test.ts`):
 *
 * - A time tracking activity's `isBilled` (issue 25, item 6): true when its `BillableStatus` is
 *   `HasBeenBilled`, false for `Billable` and `NotBillable`, null when the record states none. The
 *   market's clients require the field; the application states billing only as the status.
 */
export const DERIVED_OUTPUT: Readonly<
  Record<
    string,
    readonly { json: string; from: string; kind: AnyFieldKind; value: (source: unknown) => unknown }[]
  >
> = {
  TimeTrackingRet: [
    {
      json: "isBilled",
      from: "billingStatus",
      kind: boolean(),
      value: (status) => (status === null || status === undefined ? null : status === "has_been_billed"),
    },
  ],
};

/** The spec's common record fields that not every record element holds (spec "Common application record fields"). */
const COMMON_ELEMENTS: readonly string[] = ["ExternalGUID", "DataExtRet"];

let commonFields: readonly Field[] | null = null;

/**
 * The `externalId` and `customFields` fields as records that hold them read them (the same kinds and
 * nested shape), taken from the first record element of the schema that holds both.
 */
function commonRecordFields(): readonly Field[] {
  if (commonFields) return commonFields;
  const schema = ledgerSchema();
  for (const response of schema.responses) {
    for (const ret of slotsOf(schema, response)) {
      if (ret.type.kind !== "complex") continue;
      const names = new Set(slotsOf(schema, ret.typeKey).map((slot) => slot.name));
      if (!COMMON_ELEMENTS.every((name) => names.has(name))) continue;
      const fields = shapeOf(ret.typeKey, "output").fields.filter((f) =>
        COMMON_ELEMENTS.includes(f.slot.name),
      );
      commonFields = COMMON_ELEMENTS.map((name) => {
        const field = fields.find((f) => f.slot.name === name);
        if (!field) throw new Error(`${ret.typeKey} has no field for ${name}`);
        return field;
      });
      return commonFields;
    }
  }
  throw new Error("no record element holds the common record fields");
}

const records = new Map<string, Shape>();

/**
 * The output shape of a typed record (a group's record element, answered at the top level): its
 * own fields, then those {@link DERIVED_OUTPUT} computes from them, then the spec's common fields
 * its element lacks — `externalId` and `customFields` are on every typed record (spec "Common
 * application record fields"), null and `[]` where the application's record cannot carry them
 * (issue 25, item 7). Their elements are not in the record's type, so the reader never fills them.
 */
export function recordShape(typeKey: string): Shape {
  const cached = records.get(typeKey);
  if (cached) return cached;
  const own = shapeOf(typeKey, "output");
  const names = new Set(own.fields.map((f) => f.json));
  const derived: Field[] = (DERIVED_OUTPUT[typeKey] ?? []).map(({ json, from, kind, value }) => {
    const source = own.fields.find((f) => f.json === from);
    if (!source) throw new Error(`${typeKey}: \`${json}\` is derived from \`${from}\`, which it lacks`);
    return {
      json,
      slot: source.slot,
      form: "value",
      array: false,
      kind,
      shape: null,
      clearable: false,
      derive: { from, value },
    };
  });
  const common = commonRecordFields().filter((f) => !names.has(f.json));
  const shape: Shape =
    derived.length === 0 && common.length === 0
      ? own
      : { ...own, fields: [...own.fields, ...derived, ...common] };
  records.set(typeKey, shape);
  return shape;
}
