import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import type { Field, Shape } from "../ledger/resources/shape.ts";
import { refTargetObjects } from "./ref-targets.ts";

/**
 * What the mirror reads of a record as the typed API returns it: its label (full name or
 * reference number), its creation order, its stored object type and shape, and the references of
 * its top level and lines. The application's answer order is defined here.
 */

/** A record as the typed API returns it. */
export type Json = Record<string, unknown>;

/** A text field of a record ("" when absent or not text). */
export function text(record: Json, field: string): string {
  const value = record[field];
  return typeof value === "string" ? value : "";
}

/** The label name filters compare: the full name of a list object, the reference number of a transaction. */
export function labelOf(resource: ResourceDefinition, record: Json): string {
  if (resource.entry.kind === "transaction") return text(record, "refNumber");
  const fullName = record.fullName;
  return typeof fullName === "string" ? fullName : text(record, "name");
}

/** Creation order of a transaction: the counter before the `-` of its ID. */
export function creationCounter(record: Json): number {
  const id = text(record, "id");
  const counter = Number.parseInt(id.split("-")[0] ?? "", 16);
  return Number.isNaN(counter) ? Number.MAX_SAFE_INTEGER : counter;
}

/** UTF-16 code unit order, as the application sorts lower-cased names. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sorts records into the application's answer order (returns a new array). */
export function inAnswerOrder(resource: ResourceDefinition, records: readonly Json[]): Json[] {
  if (resource.entry.kind === "transaction") {
    return [...records].sort((a, b) => creationCounter(a) - creationCounter(b));
  }
  const keyed = records.map((record) => [labelOf(resource, record).toLowerCase(), record] as const);
  keyed.sort((a, b) => compareCodeUnits(a[0], b[0]) || creationCounter(a[1]) - creationCounter(b[1]));
  return keyed.map(([, record]) => record);
}

/** The stored object (`ItemService`) and output shape of a record, from its `objectType`. */
export function recordKind(resource: ResourceDefinition, record: Json): { object: string; shape: Shape } {
  for (const [ret, entry] of resource.records) {
    if (entry.objectType === record.objectType || resource.records.size === 1)
      return { object: ret.replace(/Ret$/, ""), shape: entry.shape };
  }
  return { object: resource.entry.object, shape: resource.output };
}

/** Whether a field is a family of lines (its items carry a line ID). */
export function isLineFamily(field: Field): boolean {
  return field.form === "object" && (field.shape?.fields.some((f) => f.slot.name === "TxnLineID") ?? false);
}

/** IDs of the references of `fields` (top level of `holder`) that may name one of `kinds`. */
function refIds(
  holder: Json,
  fields: readonly Field[],
  owner: string,
  kinds: readonly string[],
  out: string[],
): void {
  for (const field of fields) {
    if (field.form !== "ref" || field.slot.name === "ParentRef") continue;
    if (!refTargetObjects(field.slot.name, owner).some((o) => kinds.includes(o))) continue;
    const values = field.array ? holder[field.json] : [holder[field.json]];
    if (!Array.isArray(values)) continue;
    for (const value of values) {
      const id = (value as { id?: unknown } | null)?.id;
      if (typeof id === "string") out.push(id);
    }
  }
}

/**
 * IDs the record's references name where they may name one of `kinds`: top level, and the top
 * level of each line when `lines`; never `parent`.
 */
export function referencedIds(
  resource: ResourceDefinition,
  record: Json,
  kinds: readonly string[],
  lines: boolean,
): string[] {
  const { object, shape } = recordKind(resource, record);
  const out: string[] = [];
  refIds(record, shape.fields, object, kinds, out);
  if (!lines) return out;
  for (const family of shape.fields.filter(isLineFamily)) {
    const value = record[family.json];
    const items = Array.isArray(value) ? value : value === null || value === undefined ? [] : [value];
    for (const line of items as Json[]) refIds(line, family.shape?.fields ?? [], object, kinds, out);
  }
  return out;
}
