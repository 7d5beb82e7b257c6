/**
 * One simulated company file: its records, ID counters, company-level data extensions (the FileID
 * stamp) and the error-recovery store of saved message-set responses.
 */
import { definitionOf, objectsOfKind } from "./definitions/index.ts";
import type { FileView, LedgerRecord } from "./records.ts";
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
