import type { Db } from "../store/database.ts";
import { recordsChangedSince, type MirrorKey, type MirrorRow } from "../store/mirrors.ts";

/**
 * An instance's in-memory copy of a mirrored group, parsed once: a read answered from the mirror
 * reads the mirror's row (its version) and only what changed since the version held here, so a
 * page costs filtering and writing JSON, not reading and parsing the group again. Copies are kept
 * per store (tests run several in one process), the most recently used first, a bounded number.
 */
type Json = Record<string, unknown>;

export class Copy {
  version = 0;
  readonly byId = new Map<string, Json>();
  /**
   * Each record's JSON as stored (what `JSON.stringify` gave when it was written), in UTF-8: a page
   * is its records' bytes concatenated, with no string to join and encode (a page of 150 invoices
   * is ~400 KB; joining it as text took ~3 ms and encoding it ~1 ms more).
   */
  private readonly bytes = new WeakMap<Json, Buffer>();
  /** The bytes of a record shown without its linked transactions, taken once. */
  private readonly unlinkedBytes = new WeakMap<Json, Buffer>();

  constructor(readonly generation: number) {}

  /**
   * The JSON of a record of this copy in UTF-8, shown with or without its linked transactions
   * (`field`: `[]` in their place, as a live list that did not ask for them); undefined for any
   * other object.
   */
  bytesOf(record: Json, withoutField: string | null): Buffer | undefined {
    const stored = this.bytes.get(record);
    if (stored === undefined || withoutField === null) return stored;
    const value = record[withoutField];
    if (!Array.isArray(value) || value.length === 0) return stored;
    let unlinked = this.unlinkedBytes.get(record);
    if (unlinked === undefined) {
      unlinked = Buffer.from(JSON.stringify({ ...record, [withoutField]: [] }));
      this.unlinkedBytes.set(record, unlinked);
    }
    return unlinked;
  }

  apply(changes: ReadonlyArray<{ id: string; data: string | null; generation: number }>): void {
    for (const change of changes) {
      if (change.data === null || change.generation !== this.generation) this.byId.delete(change.id);
      else {
        const record = JSON.parse(change.data) as Json;
        this.bytes.set(record, Buffer.from(change.data));
        this.byId.set(change.id, record);
      }
    }
  }
}

const COPIES_KEPT = 64;
const copiesByStore = new WeakMap<Db, Map<string, Copy>>();

/** The copy of `row`'s group as of the row's version (read from the store when it moved). */
export async function copyOf(db: Db, row: MirrorRow): Promise<Copy> {
  let copies = copiesByStore.get(db);
  if (!copies) {
    copies = new Map();
    copiesByStore.set(db, copies);
  }
  const name = `${row.end_user_id}/${row.resource}`;
  const version = Number(row.version);
  let copy = copies.get(name);
  if (copy?.generation !== row.generation) copy = new Copy(row.generation);
  if (copy.version < version) {
    const key: MirrorKey = { end_user_id: row.end_user_id, resource: row.resource };
    copy.apply(await recordsChangedSince(db, key, copy.version));
    copy.version = version;
  }
  copies.delete(name);
  copies.set(name, copy);
  while (copies.size > COPIES_KEPT) copies.delete(copies.keys().next().value as string);
  return copy;
}
