/**
 * Renders stored records as `…Ret` elements by walking the Ret type's slots in schema order: each
 * slot is filled from the system fields (IDs, times, EditSequence, FullName, Sublevel), the stored
 * fields, the computed table, or — when the schema requires it and nothing else has it — a neutral
 * default. Lines of one family come out together, in their stored order. References come out with
 * their target's current FullName.
 */
import { ledgerSchema } from "../../ledger/xml/schema.ts";
import { excludes, slotsOf, type Slot } from "../../ledger/xml/slots.ts";
import { leaf, node, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { appliedToValue, computedValue, type ComputeScope } from "./computed.ts";
import { isRefSlot, objectType, type ObjectType } from "./objects.ts";
import type { LedgerLine, LedgerRecord } from "./records.ts";
import { formatDate, formatDateTime } from "./time.ts";

/** Rendering options of one Ret. */
export interface RenderOptions {
  /** Transactions: include the lines (queries default to false, Add/Mod to true). */
  readonly includeLines: boolean;
  /** Include LinkedTxn elements. */
  readonly includeLinked: boolean;
  /** `IncludeRetElement` values; empty = everything. */
  readonly includeRetElements: readonly string[];
  /** `OwnerID` values whose DataExtRet are included. */
  readonly ownerIds: readonly string[];
}

/** Ret elements computed even where an Add stored a value (the stored one is the starting point). */
const ALWAYS_COMPUTED = new Set(["QuantityOnHand"]);

/** Options for answers to Add and Mod. */
export const WRITE_RENDER: RenderOptions = {
  includeLines: true,
  includeLinked: true,
  includeRetElements: [],
  ownerIds: [],
};

/** A stored reference rendered with ListID + current FullName. */
function renderRef(name: string, stored: XmlElement, file: CompanyFile): XmlElement {
  const listId = stored.children.find((c) => c.name === "ListID")?.text;
  const target = listId === undefined ? undefined : file.recordById(listId);
  if (listId === undefined || target === undefined) return node(name, stored.children);
  const kind = objectType(target.object)?.kind;
  const label = kind === "list" ? file.fullNameOf(target) : undefined;
  return node(name, [leaf("ListID", listId), ...(label === undefined ? [] : [leaf("FullName", label)])]);
}

/** A value for a required slot nothing else fills. */
function defaultFor(slot: Slot, file: CompanyFile): XmlElement {
  if (slot.type.kind === "complex")
    return node(
      slot.name,
      renderType(slot.typeKey, [], file, () => undefined),
    );
  const entry = slot.type.entry;
  const now = file.nowSeconds();
  switch (entry.b) {
    case "amt":
      return leaf(slot.name, "0.00");
    case "bool":
      return leaf(slot.name, "false");
    case "date":
      return leaf(slot.name, formatDate(now, file.utcOffset));
    case "datetime":
      return leaf(slot.name, formatDateTime(now, file.utcOffset));
    case "enum":
      return leaf(slot.name, entry.e?.[0] ?? "");
    case "str":
    case "id":
      return leaf(slot.name, "");
    default:
      return leaf(slot.name, String(entry.lo ?? 0));
  }
}

/** Supplies values for a slot before the stored fields are looked at. */
type Provider = (slot: Slot) => XmlElement[] | undefined;

/** Renders the children of a `typeKey` element from `stored` fields. */
export function renderType(
  typeKey: string,
  stored: readonly XmlElement[],
  file: CompanyFile,
  provide: Provider,
  fallback: Provider = () => undefined,
): XmlElement[] {
  const schema = ledgerSchema();
  if (!schema.isComplex(typeKey)) return [];
  const out: XmlElement[] = [];
  const emitted: Slot[] = [];
  for (const slot of slotsOf(schema, typeKey)) {
    if (emitted.some((e) => excludes(e, slot))) continue;
    let values = provide(slot);
    if (values === undefined) {
      const own = stored.filter((f) => f.name === slot.name);
      if (own.length > 0) values = own.map((f) => storedValue(slot, f, file));
    }
    values ??= fallback(slot);
    if ((values === undefined || values.length === 0) && slot.min >= 1) values = [defaultFor(slot, file)];
    if (values === undefined || values.length === 0) continue;
    out.push(...values.slice(0, slot.max));
    emitted.push(slot);
  }
  return out;
}

function storedValue(slot: Slot, field: XmlElement, file: CompanyFile): XmlElement {
  if (isRefSlot(slot)) return renderRef(slot.name, field, file);
  if (slot.type.kind !== "complex") return leaf(slot.name, field.text);
  if (slot.name === "AppliedToTxnRet" || slot.name === "RefundAppliedToTxnRet") {
    return node(
      slot.name,
      renderType(
        slot.typeKey,
        field.children,
        file,
        () => undefined,
        (inner) => {
          const value = appliedToValue(inner.name, field, file);
          return value === undefined ? undefined : [leaf(inner.name, value)];
        },
      ),
    );
  }
  return node(
    slot.name,
    renderType(slot.typeKey, field.children, file, () => undefined),
  );
}

function systemValue(
  slot: Slot,
  object: ObjectType,
  record: LedgerRecord,
  file: CompanyFile,
): XmlElement[] | undefined {
  const name = slot.name;
  switch (name) {
    case "ListID":
    case "TxnID":
      return name === object.idElement ? [leaf(name, record.id)] : undefined;
    case "TimeCreated":
      return [leaf(name, formatDateTime(record.created, file.utcOffset))];
    case "TimeModified":
      return [leaf(name, formatDateTime(record.modified, file.utcOffset))];
    case "EditSequence":
      return [leaf(name, String(record.editSequence))];
    case "TxnNumber":
      return record.txnNumber === undefined ? [] : [leaf(name, String(record.txnNumber))];
    case "FullName":
      return object.kind === "list" && slot.type.kind === "simple"
        ? [leaf(name, file.fullNameOf(record))]
        : undefined;
    case "Sublevel":
      return object.hierarchical ? [leaf(name, String(file.sublevelOf(record)))] : undefined;
    default:
      return undefined;
  }
}

/**
 * Stored fields without the custom field values (`DataExtRet`, at any depth) of owners the query did
 * not name: the application returns a value only for the owners a query asks for.
 */
function ownersOnly(fields: readonly XmlElement[], owners: readonly string[]): readonly XmlElement[] {
  // Copies only what changes: most lines hold no custom field values at all.
  let out: XmlElement[] | null = null;
  fields.forEach((field, index) => {
    let kept: XmlElement | null = field;
    if (field.name === "DataExtRet") {
      const owner = field.children.find((c) => c.name === "OwnerID")?.text ?? "";
      if (!owners.includes(owner.toLowerCase())) kept = null;
    } else if (field.children.length > 0) {
      const children = ownersOnly(field.children, owners);
      if (children !== field.children) kept = { ...field, children };
    }
    if (kept !== field && out === null) out = fields.slice(0, index);
    if (out !== null && kept !== null) out.push(kept);
  });
  return out ?? fields;
}

function renderLine(
  element: string,
  line: LedgerLine,
  file: CompanyFile,
  owners: readonly string[],
): XmlElement {
  const typeKey = ledgerSchema().keyOf(element, null);
  const lineSlot = slotsOf(ledgerSchema(), typeKey);
  const computeGroup = (slot: Slot): XmlElement[] | undefined => {
    if (slot.name === "TxnLineID") return [leaf("TxnLineID", line.id)];
    if (slot.name === "TotalAmount" && lineSlot.some((s) => s.name === "ItemGroupRef")) {
      const sum = line.fields
        .filter((f) => f.children.some((c) => c.name === "TxnLineID"))
        .reduce((acc, f) => acc + Number(f.children.find((c) => c.name === "Amount")?.text ?? "0"), 0);
      return [leaf("TotalAmount", sum.toFixed(2))];
    }
    return undefined;
  };
  return node(element, renderType(typeKey, ownersOnly(line.fields, owners), file, computeGroup));
}

/** The `<{Object}Ret>` of `record`. */
export function renderRet(record: LedgerRecord, file: CompanyFile, options: RenderOptions): XmlElement {
  const object = objectType(record.object);
  if (object === undefined) throw new Error(`no object type ${record.object}`);
  const scope: ComputeScope = { file, record, includeLinked: options.includeLinked };
  const wanted = options.includeRetElements;
  const families = new Set<string>();
  const owners = options.ownerIds.map((o) => o.toLowerCase());
  const provide = (slot: Slot): XmlElement[] | undefined => {
    if (wanted.length > 0 && !wanted.includes(slot.name)) return [];
    const family = object.lineFamilies.get(slot.name);
    if (family !== undefined) {
      if (!options.includeLines || families.has(family)) return [];
      families.add(family);
      return record.lines
        .filter((l) => object.lineFamilies.get(l.element ?? object.defaultLine ?? "") === family)
        .map((l) => renderLine(l.element ?? object.defaultLine ?? slot.name, l, file, owners));
    }
    if (slot.name === "DataExtRet") {
      return record.fields
        .filter((f) => f.name === "DataExtRet")
        .filter((f) =>
          owners.includes((f.children.find((c) => c.name === "OwnerID")?.text ?? "").toLowerCase()),
        )
        .map((f) =>
          node(
            "DataExtRet",
            renderType(slot.typeKey, f.children, file, () => undefined),
          ),
        );
    }
    if (slot.name === "LinkedTxn" || ALWAYS_COMPUTED.has(slot.name)) return computedValue(slot.name, scope);
    return systemValue(slot, object, record, file);
  };
  return node(
    object.ret,
    renderType(object.ret, record.fields, file, provide, (slot) => computedValue(slot.name, scope)),
  );
}
