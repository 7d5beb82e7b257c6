/**
 * One simulated company file: its records, ID counters, company-level data extensions (the FileID
 * stamp) and the error-recovery store of saved message-set responses.
 */
import { definitionOf, objectsOfKind } from "./definitions/index.ts";
import type { FileView, LedgerRecord } from "./records.ts";
import { parseCompanyFileSnapshot, type CompanyFileSnapshot } from "./snapshot.ts";
import type { XmlElement } from "./xml-tree.ts";

/** Options of {@link CompanyFile}. */
export interface CompanyFileOptions {
  companyName: string;
  /** `sample` loads a few accounts, customers, items and invoices; default `empty`. */
  seed?: "sample" | "empty";
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

/** A company file held by the simulated application. */
export class CompanyFile implements FileView {
  readonly companyName: string;
  readonly utcOffset: string;
  /** Private data extensions on the company object. */
  readonly companyDataExts: CompanyDataExt[] = [];
  /** Error recovery: saved responses (the Rs elements) by `newMessageSetID`. */
  readonly savedMessageSets = new Map<string, readonly XmlElement[]>();
  private readonly records = new Map<string, LedgerRecord>();
  // List objects and transactions number separately; lines share the transaction counter.
  private listCounter = 0x80000001;
  private txnCounter = 1;
  private txnNumberCounter = 1;

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

  recordsOf(object: string): LedgerRecord[] {
    return [...this.records.values()].filter((r) => r.object === object);
  }

  recordById(id: string): LedgerRecord | undefined {
    return this.records.get(id);
  }

  /** All live records. */
  allRecords(): LedgerRecord[] {
    return [...this.records.values()];
  }

  /** Number of live records of one type (handy in tests). */
  count(object: string): number {
    return this.recordsOf(object).length;
  }

  insert(record: LedgerRecord): void {
    this.records.set(record.id, record);
  }

  remove(id: string): void {
    this.records.delete(id);
  }

  fullNameOf(record: LedgerRecord): string {
    const name = record.fields.find((f) => f.name === "Name")?.text ?? "";
    const parent = this.parentOf(record);
    return parent === undefined ? name : `${this.fullNameOf(parent)}:${name}`;
  }

  /** Depth below the top of the list (0 for top-level records). */
  sublevelOf(record: LedgerRecord): number {
    const parent = this.parentOf(record);
    return parent === undefined ? 0 : this.sublevelOf(parent) + 1;
  }

  /** Finds the record a reference names: by ListID when given, else by FullName (case-insensitive). */
  resolveRef(refKind: string, ref: XmlElement): LedgerRecord | undefined {
    const objects = objectsOfKind(refKind);
    const listId = ref.children.find((c) => c.name === "ListID")?.text;
    if (listId !== undefined) {
      const found = this.records.get(listId);
      return found !== undefined && objects.includes(found.object) ? found : undefined;
    }
    const fullName = ref.children.find((c) => c.name === "FullName")?.text.toLowerCase();
    if (fullName === undefined) return undefined;
    return [...this.records.values()].find(
      (r) => objects.includes(r.object) && this.fullNameOf(r).toLowerCase() === fullName,
    );
  }

  /** A live list record of the same reference kind already using `fullName`, other than `exceptId`. */
  nameTaken(refKind: string, fullName: string, exceptId: string | undefined): boolean {
    const objects = objectsOfKind(refKind);
    const wanted = fullName.toLowerCase();
    return [...this.records.values()].some(
      (r) => r.id !== exceptId && objects.includes(r.object) && this.fullNameOf(r).toLowerCase() === wanted,
    );
  }

  private parentOf(record: LedgerRecord): LedgerRecord | undefined {
    if (definitionOf(record.object)?.hierarchical !== true) return undefined;
    const parentId = record.fields
      .find((f) => f.name === "ParentRef")
      ?.children.find((c) => c.name === "ListID")?.text;
    return parentId === undefined ? undefined : this.records.get(parentId);
  }
}
