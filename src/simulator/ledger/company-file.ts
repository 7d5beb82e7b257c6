/**
 * One simulated company file: its records, ID counters, company-level data extensions (the FileID
 * stamp) and the error-recovery store of saved message-set responses. Records are indexed by object
 * type so that queries and iterators cost what they return, not what the file holds.
 */
import type { XmlElement } from "../../ledger/xml/tree.ts";
import type { DemoCompanySize } from "./demo-company/demo-company.ts";
import { objectType } from "./objects.ts";
import type { LedgerRecord } from "./records.ts";
import { refTarget } from "./refs.ts";
import { parseCompanyFileSnapshot, type CompanyFileSnapshot } from "./snapshot.ts";

/** Options of {@link CompanyFile}. */
export interface CompanyFileOptions {
  companyName: string;
  /**
   * `sample` loads a few accounts, customers, vendors, items and invoices (what many tests count on);
   * `demo` a small business's year of activity across nearly every list (`demo-company/`); default
   * `empty`.
   */
  seed?: "sample" | "demo" | "empty";
  /** Size of the `demo` company; `small` by default. */
  demoSize?: DemoCompanySize;
  /** Seed of the `demo` company's generator; the same seed gives the same company. */
  demoSeed?: number;
  /** Fixed UTC offset printed in timestamps; default `-05:00`. */
  utcOffset?: string;
}

/** A company-level private data extension (e.g. `FileID` owned by a connector registration). */
export interface CompanyDataExt {
  readonly ownerId: string;
  readonly name: string;
  readonly value: string;
}

/** Something that tells time in milliseconds since the epoch. */
export interface LedgerClock {
  now(): number;
}

/**
 * Records by ID that also keeps them grouped by object type and counts changes, whatever writes to
 * it (the engine, or a restore that refills the map).
 */
class RecordMap extends Map<string, LedgerRecord> {
  readonly byObject = new Map<string, Map<string, LedgerRecord>>();
  version = 0;

  /**
   * Stores `record`. A change of a record keeps its place in its object group, so a group lists
   * in creation order whatever was modified since (transactions answer in that order); only a
   * record whose object type changed moves to the end of its new group.
   */
  override set(id: string, record: LedgerRecord): this {
    const previous = super.get(id);
    if (previous !== undefined && previous.object !== record.object)
      this.byObject.get(previous.object)?.delete(id);
    let group = this.byObject.get(record.object);
    if (group === undefined) {
      group = new Map();
      this.byObject.set(record.object, group);
    }
    group.set(id, record);
    this.version++;
    return super.set(id, record);
  }

  override delete(id: string): boolean {
    const previous = super.get(id);
    if (previous !== undefined) this.byObject.get(previous.object)?.delete(id);
    this.version++;
    return super.delete(id);
  }

  override clear(): void {
    this.byObject.clear();
    this.version++;
    super.clear();
  }
}

/** A company file held by the simulated application. */
export class CompanyFile {
  readonly companyName: string;
  readonly utcOffset: string;
  /** Private data extensions on the company object. */
  readonly companyDataExts: CompanyDataExt[] = [];
  /** Error recovery: saved responses (the Rs elements) by `newMessageSetID`. */
  readonly savedMessageSets = new Map<string, readonly XmlElement[]>();
  private readonly records = new RecordMap();
  // List objects and transactions number separately; lines share the transaction counter.
  private listCounter = 0x80000001;
  private txnCounter = 1;
  private txnNumberCounter = 1;
  private readonly caches = new Map<string, { version: number; value: unknown }>();

  constructor(
    readonly path: string,
    options: CompanyFileOptions,
    private readonly clock: LedgerClock,
  ) {
    this.companyName = options.companyName;
    this.utcOffset = options.utcOffset ?? "-05:00";
  }

  /**
   * The whole file as plain JSON data (records, ID counters, saved message sets, data extensions):
   * what a store keeps so that the file survives a restart. {@link CompanyFile.restore} is its inverse.
   */
  snapshot(): CompanyFileSnapshot {
    return {
      format: 1,
      path: this.path,
      companyName: this.companyName,
      utcOffset: this.utcOffset,
      counters: {
        list: this.listCounter,
        transaction: this.txnCounter,
        transactionNumber: this.txnNumberCounter,
      },
      records: [...this.records.values()].map((r) => ({ ...r, txnNumber: r.txnNumber ?? null })),
      savedMessageSets: [...this.savedMessageSets.entries()].map(([id, responses]) => ({
        id,
        responses: [...responses],
      })),
      companyDataExts: this.companyDataExts.map((d) => ({ ...d })),
    };
  }

  /** A new file from {@link CompanyFile.snapshot} data; throws on data that is not a snapshot. */
  static restore(data: unknown, clock: LedgerClock): CompanyFile {
    const snapshot = parseCompanyFileSnapshot(data);
    const file = new CompanyFile(
      snapshot.path,
      { companyName: snapshot.companyName, utcOffset: snapshot.utcOffset },
      clock,
    );
    file.load(snapshot);
    return file;
  }

  /**
   * Puts this file back to the state of an earlier {@link CompanyFile.snapshot} of itself, in place
   * (open sessions keep working on it): how a change that could not be saved is undone.
   */
  revertTo(data: unknown): void {
    const snapshot = parseCompanyFileSnapshot(data);
    if (snapshot.path !== this.path)
      throw new Error(`snapshot of ${snapshot.path} cannot revert ${this.path}`);
    this.load(snapshot);
  }

  private load(snapshot: CompanyFileSnapshot): void {
    this.listCounter = snapshot.counters.list;
    this.txnCounter = snapshot.counters.transaction;
    this.txnNumberCounter = snapshot.counters.transactionNumber;
    this.records.clear();
    for (const r of snapshot.records) this.records.set(r.id, { ...r, txnNumber: r.txnNumber ?? undefined });
    this.savedMessageSets.clear();
    for (const set of snapshot.savedMessageSets) this.savedMessageSets.set(set.id, set.responses);
    this.companyDataExts.splice(0, this.companyDataExts.length, ...snapshot.companyDataExts);
  }

  /** Current time in whole unix seconds. */
  nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  /** A new ListID (`kind` list) or TxnID/TxnLineID (`kind` transaction). */
  newId(kind: "list" | "transaction", createdSeconds: number): string {
    const counter = kind === "list" ? this.listCounter++ : this.txnCounter++;
    return `${counter.toString(16).toUpperCase()}-${createdSeconds}`;
  }

  /** Next transaction number. */
  newTxnNumber(): number {
    return this.txnNumberCounter++;
  }

  /** Live records of one object type, in creation order. */
  recordsOf(object: string): LedgerRecord[] {
    return [...(this.records.byObject.get(object)?.values() ?? [])];
  }

  recordById(id: string): LedgerRecord | undefined {
    return this.records.get(id);
  }

  /** All records. */
  allRecords(): LedgerRecord[] {
    return [...this.records.values()];
  }

  /** Number of records of one type (handy in tests). */
  count(object: string): number {
    return this.records.byObject.get(object)?.size ?? 0;
  }

  insert(record: LedgerRecord): void {
    this.records.set(record.id, record);
  }

  /** Marks a record changed in place (caches of derived values are dropped). */
  touch(record: LedgerRecord): void {
    this.records.set(record.id, record);
  }

  remove(id: string): void {
    this.records.delete(id);
  }

  /**
   * The end user edits record `id` in the application's window: its text field `name` becomes
   * `text` as typed or pasted. Unlike a request, the window keeps control characters, and the
   * application later writes them into its answers as they are (raw, which XML does not allow).
   */
  editInWindow(id: string, name: string, text: string): void {
    const record = this.records.get(id);
    if (!record) throw new Error(`no record ${id}`);
    const edited: XmlElement = { name, attrs: [], children: [], text };
    const at = record.fields.findIndex((field) => field.name === name);
    if (at < 0) throw new Error(`record ${id} has no field ${name}`);
    record.fields[at] = edited;
    record.modified = this.nowSeconds();
    record.editSequence = Math.max(record.editSequence + 1, record.modified);
    this.touch(record);
  }

  /**
   * A value derived from the whole file (balances, applied amounts…), computed once per change of
   * the file: an iterator walking a large file pays for it once, not once per record.
   */
  derived<T>(key: string, compute: () => T): T {
    const cached = this.caches.get(key);
    if (cached !== undefined && cached.version === this.records.version) return cached.value as T;
    const value = compute();
    this.caches.set(key, { version: this.records.version, value });
    return value;
  }

  fullNameOf(record: LedgerRecord): string {
    // Leads have no Name: their FullName is what the caller gave.
    const name =
      (record.fields.find((f) => f.name === "Name") ?? record.fields.find((f) => f.name === "FullName"))
        ?.text ?? "";
    const parent = this.parentOf(record);
    return parent === undefined ? name : `${this.fullNameOf(parent)}:${name}`;
  }

  /** Depth below the top of the list (0 for top-level records). */
  sublevelOf(record: LedgerRecord): number {
    const parent = this.parentOf(record);
    return parent === undefined ? 0 : this.sublevelOf(parent) + 1;
  }

  /**
   * Finds the record a reference element of `owner` names: by ListID when given, else by FullName
   * (case-insensitive), among the object types the reference may name.
   */
  resolveRef(owner: string, ref: XmlElement): LedgerRecord | undefined {
    const { objects } = refTarget(ref.name, owner);
    const fits = (r: LedgerRecord): boolean =>
      objects.length === 0 ? objectType(r.object)?.kind === "list" : objects.includes(r.object);
    const listId = ref.children.find((c) => c.name === "ListID")?.text;
    if (listId !== undefined) {
      const found = this.records.get(listId);
      return found !== undefined && fits(found) ? found : undefined;
    }
    const fullName = ref.children.find((c) => c.name === "FullName")?.text.toLowerCase();
    if (fullName === undefined) return undefined;
    const pool = objects.length === 0 ? this.allRecords() : objects.flatMap((o) => this.recordsOf(o));
    return pool.find((r) => fits(r) && this.fullNameOf(r).toLowerCase() === fullName);
  }

  private parentOf(record: LedgerRecord): LedgerRecord | undefined {
    const parentId = record.fields
      .find((f) => f.name === "ParentRef")
      ?.children.find((c) => c.name === "ListID")?.text;
    return parentId === undefined ? undefined : this.records.get(parentId);
  }
}
