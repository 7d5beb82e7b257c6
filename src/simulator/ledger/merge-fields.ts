/**
 * How a Mod changes stored fields and lines (protocol guide §2.6): a present element replaces the
 * stored one (aggregates field by field), an empty element clears it, an element excludes the
 * alternatives of its schema choice; the lines listed for a family replace that family (an existing
 * TxnLineID keeps and updates its line, `-1` adds one, an omitted line is deleted), `Clear…Lines`
 * empties a family, and families that are not mentioned stay as they are. Line amounts are completed
 * here too: Quantity × Rate (or Cost), a percentage of the lines above, or the item's price.
 */
import Big from "big.js";
import { ledgerSchema } from "../../ledger/xml/schema.ts";
import { excludes, slotsOf } from "../../ledger/xml/slots.ts";
import { leaf, node, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { lineAmount, money, stockOf } from "./ledger-math.ts";
import { isLineType, isRefSlot, slotNamed, type ObjectType } from "./objects.ts";
import { fieldText, refId, type LedgerLine } from "./records.ts";
import { statusObjectNotFound, type Status } from "./status.ts";
import type { InputLine } from "./store-input.ts";

function isEmpty(element: XmlElement): boolean {
  return element.text === "" && element.children.length === 0;
}

/** Applies `incoming` (already in Ret naming) to `stored` fields of a `retKey` element. */
export function mergeFields(
  stored: readonly XmlElement[],
  incoming: readonly XmlElement[],
  retKey: string,
): XmlElement[] {
  let result = [...stored];
  const names = [...new Set(incoming.map((f) => f.name))];
  for (const name of names) {
    const items = incoming.filter((f) => f.name === name);
    const slot = slotNamed(retKey, name);
    if (slot !== undefined) {
      result = result.filter((f) => {
        const other = slotNamed(retKey, f.name);
        return other === undefined || other === slot || !excludes(other, slot);
      });
    }
    const kept = items.filter((f) => !isEmpty(f));
    if (slot !== undefined && slot.max > 1) {
      result = [...result.filter((f) => f.name !== name), ...kept];
      continue;
    }
    const item = kept[0];
    const current = result.find((f) => f.name === name);
    result = result.filter((f) => f.name !== name);
    if (item === undefined) continue;
    if (slot !== undefined && slot.type.kind === "complex" && !isRefSlot(slot) && current !== undefined) {
      result.push(node(name, mergeFields(current.children, item.children, slot.typeKey)));
    } else {
      result.push(item);
    }
  }
  return result;
}

/** The price an item charges (sales lines) or costs (purchase lines). */
function itemPrice(file: CompanyFile, itemId: string | undefined, purchase: boolean): string | undefined {
  const item = itemId === undefined ? undefined : file.recordById(itemId);
  if (item === undefined) return undefined;
  const inside = (aggregate: string, name: string): string | undefined =>
    item.fields.find((f) => f.name === aggregate)?.children.find((c) => c.name === name)?.text;
  return purchase
    ? (fieldText(item.fields, "PurchaseCost") ??
        inside("SalesAndPurchase", "PurchaseCost") ??
        inside("SalesOrPurchase", "Price"))
    : (fieldText(item.fields, "SalesPrice") ??
        inside("SalesAndPurchase", "SalesPrice") ??
        inside("SalesOrPurchase", "Price") ??
        fieldText(item.fields, "Price"));
}

/**
 * Completes a line: Amount from Quantity × Rate/Cost (the item's price when neither is given), or
 * from RatePercent of the amounts above it.
 */
export function completeLine(
  element: string,
  fields: XmlElement[],
  file: CompanyFile,
  above: Big,
): XmlElement[] {
  const typeKey = ledgerSchema().keyOf(element, null);
  const slots = ledgerSchema().isComplex(typeKey) ? slotsOf(ledgerSchema(), typeKey) : [];
  if (!slots.some((s) => s.name === "Amount") || fieldText(fields, "Amount") !== undefined) return fields;
  const rateName = slots.some((s) => s.name === "Rate")
    ? "Rate"
    : slots.some((s) => s.name === "Cost")
      ? "Cost"
      : undefined;
  const percent = fieldText(fields, "RatePercent");
  if (percent !== undefined) return [...fields, leaf("Amount", money(above.times(percent).div(100)))];
  if (rateName === undefined) return fields;
  let out = fields;
  let rate = fieldText(fields, rateName);
  if (rate === undefined) {
    rate = itemPrice(file, refId(fields, "ItemRef"), rateName === "Cost");
    if (rate === undefined || rate.endsWith("%")) return fields;
    out = [...out, leaf(rateName, rate)];
  }
  const quantity = fieldText(fields, "Quantity") ?? "1";
  return [...out, leaf("Amount", money(new Big(rate).times(quantity)))];
}

/**
 * An inventory adjustment line states a quantity or value adjustment (new quantity, or a difference);
 * the application stores the resulting differences.
 */
function adjustmentDifferences(element: string, fields: XmlElement[], file: CompanyFile): XmlElement[] {
  const typeKey = ledgerSchema().keyOf(element, null);
  if (
    slotNamed(typeKey, "QuantityDifference") === undefined ||
    fieldText(fields, "QuantityDifference") !== undefined
  )
    return fields;
  const adjustment = fields.find((f) => f.name.endsWith("Adjustment"));
  const inner = adjustment?.children ?? [];
  const item = refId(fields, "ItemRef");
  const onHand = stockOf(file).get(item ?? "")?.onHand ?? new Big(0);
  const newQuantity = fieldText(inner, "NewQuantity");
  const quantity =
    fieldText(inner, "QuantityDifference") ??
    (newQuantity === undefined ? "0" : new Big(newQuantity).minus(onHand).toString());
  const value = fieldText(inner, "ValueDifference") ?? "0.00";
  return [...fields, leaf("QuantityDifference", quantity), leaf("ValueDifference", money(new Big(value)))];
}

/** An item group line holds the group's items as lines of the family's first element. */
function expandGroup(
  element: string,
  fields: XmlElement[],
  file: CompanyFile,
  newId: () => string,
): XmlElement[] {
  const typeKey = ledgerSchema().keyOf(element, null);
  if (!ledgerSchema().isComplex(typeKey)) return fields;
  const nested = slotsOf(ledgerSchema(), typeKey).find(
    (s) => s.type.kind === "complex" && isLineType(ledgerSchema(), s.typeKey),
  );
  const group = file.recordById(refId(fields, "ItemGroupRef") ?? "");
  if (nested === undefined || group === undefined || fields.some((f) => f.name === nested.name))
    return fields;
  const times = new Big(fieldText(fields, "Quantity") ?? "1");
  const lines: XmlElement[] = [];
  for (const member of group.fields.filter((f) => f.name === "ItemGroupLine")) {
    const itemId = refId(member.children, "ItemRef");
    if (itemId === undefined) continue;
    const quantity = new Big(fieldText(member.children, "Quantity") ?? "1").times(times).toString();
    const body = completeLine(
      nested.name,
      [node("ItemRef", [leaf("ListID", itemId)]), leaf("Quantity", quantity)],
      file,
      new Big(0),
    );
    lines.push(node(nested.name, [leaf("TxnLineID", newId()), ...body]));
  }
  const print = fieldText(group.fields, "IsPrintItemsInGroup") ?? "false";
  return [
    ...fields.filter((f) => f.name !== "IsPrintItemsInGroup"),
    leaf("IsPrintItemsInGroup", print),
    ...lines,
  ];
}

function buildLine(
  input: InputLine,
  file: CompanyFile,
  newId: () => string,
  object: ObjectType,
  above: Big,
): LedgerLine {
  const id = newId();
  const fields = expandGroup(
    input.element,
    completeLine(input.element, adjustmentDifferences(input.element, input.fields, file), file, above),
    file,
    newId,
  );
  const line: LedgerLine = { id, fields };
  if (input.element !== object.defaultLine) line.element = input.element;
  return line;
}

/** Lines of an Add: new TxnLineIDs, completed amounts, expanded groups. */
export function newLines(
  inputs: readonly InputLine[],
  file: CompanyFile,
  newId: () => string,
  object: ObjectType,
): LedgerLine[] {
  const out: LedgerLine[] = [];
  let above = new Big(0);
  for (const input of inputs) {
    const line = buildLine(input, file, newId, object, above);
    above = above.plus(lineAmount(line));
    out.push(line);
  }
  return out;
}

/** Lines after a Mod; a TxnLineID that is not on the record → 3120. */
export function modLines(
  object: ObjectType,
  stored: readonly LedgerLine[],
  inputs: readonly InputLine[],
  cleared: readonly string[],
  file: CompanyFile,
  newId: () => string,
): LedgerLine[] | Status {
  const familyOf = (element: string | undefined): string | undefined =>
    object.lineFamilies.get(element ?? object.defaultLine ?? "");
  const touched = new Set<string>();
  for (const element of cleared) {
    const family = familyOf(element);
    if (family !== undefined) touched.add(family);
  }
  for (const input of inputs) {
    const family = familyOf(input.element);
    if (family !== undefined) touched.add(family);
  }
  const result = stored.filter((l) => !touched.has(familyOf(l.element) ?? ""));
  let above = new Big(0);
  for (const input of inputs) {
    if (input.txnLineId === undefined || input.txnLineId === "-1") {
      const line = buildLine(input, file, newId, object, above);
      above = above.plus(lineAmount(line));
      result.push(line);
      continue;
    }
    const existing = stored.find((l) => l.id === input.txnLineId);
    if (existing === undefined) return statusObjectNotFound(input.txnLineId);
    const changesPrice = input.fields.some((f) =>
      ["Quantity", "Rate", "RatePercent", "Cost"].includes(f.name),
    );
    const base =
      changesPrice && fieldText(input.fields, "Amount") === undefined
        ? existing.fields.filter((f) => f.name !== "Amount")
        : existing.fields;
    const element = existing.element ?? object.defaultLine ?? input.element;
    const merged = mergeFields(base, input.fields, ledgerSchema().keyOf(element, null));
    const line: LedgerLine = { id: existing.id, fields: completeLine(element, merged, file, above) };
    if (existing.element !== undefined) line.element = existing.element;
    above = above.plus(lineAmount(line));
    result.push(line);
  }
  return result;
}
