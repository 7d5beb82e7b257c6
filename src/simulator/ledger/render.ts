/**
 * Renders stored records as `…Ret` elements in the definition's element order: system fields from
 * the engine, computed fields from the definition, references with their current FullName.
 */
import type { CompanyFile } from "./company-file.ts";
import type { LedgerLine, LedgerRecord, RecordDefinition } from "./records.ts";
import { formatDateTime } from "./time.ts";
import { leaf, node, type XmlElement } from "./xml-tree.ts";

/** Rendering options of one Ret. */
export interface RenderOptions {
  /** Transactions: include `…LineRet` elements (queries default to false, Add/Mod to true). */
  readonly includeLines: boolean;
  /** `IncludeRetElement` values; empty = everything. */
  readonly includeRetElements: readonly string[];
}

/** A stored reference rendered with ListID + current FullName. */
export function renderRef(stored: XmlElement, file: CompanyFile): XmlElement {
  const listId = stored.children.find((c) => c.name === "ListID")?.text;
  const target = listId === undefined ? undefined : file.recordById(listId);
  if (listId === undefined || target === undefined) return stored;
  return node(stored.name, [leaf("ListID", listId), leaf("FullName", file.fullNameOf(target))]);
}

function storedField(field: XmlElement, file: CompanyFile): XmlElement {
  return field.name.endsWith("Ref") ? renderRef(field, file) : field;
}

function systemField(
  name: string,
  def: RecordDefinition,
  record: LedgerRecord,
  file: CompanyFile,
): XmlElement[] | undefined {
  switch (name) {
    case "ListID":
    case "TxnID":
      return [leaf(name, record.id)];
    case "TimeCreated":
      return [leaf(name, formatDateTime(record.created, file.utcOffset))];
    case "TimeModified":
      return [leaf(name, formatDateTime(record.modified, file.utcOffset))];
    case "EditSequence":
      return [leaf(name, String(record.editSequence))];
    case "TxnNumber":
      return record.txnNumber === undefined ? [] : [leaf(name, String(record.txnNumber))];
    case "FullName":
      return def.kind === "list" ? [leaf(name, file.fullNameOf(record))] : undefined;
    case "Sublevel":
      return def.hierarchical ? [leaf(name, String(file.sublevelOf(record)))] : undefined;
    default:
      return undefined;
  }
}

function renderLine(def: RecordDefinition, line: LedgerLine, file: CompanyFile): XmlElement | undefined {
  const lines = def.lines;
  if (lines === undefined) return undefined;
  const children: XmlElement[] = [leaf("TxnLineID", line.id)];
  for (const name of lines.retOrder) {
    for (const f of line.fields) if (f.name === name) children.push(storedField(f, file));
  }
  return node(lines.retName, children);
}

/** The `<{Object}Ret>` of `record`. */
export function renderRet(
  def: RecordDefinition,
  record: LedgerRecord,
  file: CompanyFile,
  options: RenderOptions,
): XmlElement {
  const children: XmlElement[] = [];
  const wanted = options.includeRetElements;
  for (const name of def.retOrder) {
    if (wanted.length > 0 && !wanted.includes(name)) continue;
    if (def.lines !== undefined && name === def.lines.retName) {
      if (!options.includeLines) continue;
      for (const line of record.lines) {
        const rendered = renderLine(def, line, file);
        if (rendered !== undefined) children.push(rendered);
      }
      continue;
    }
    const system = systemField(name, def, record, file);
    if (system !== undefined) {
      children.push(...system);
      continue;
    }
    const computed = def.computed[name];
    if (computed !== undefined) {
      children.push(...computed(record, file));
      continue;
    }
    for (const f of record.fields) if (f.name === name) children.push(storedField(f, file));
  }
  return node(`${def.object}Ret`, children);
}
