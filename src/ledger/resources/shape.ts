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
