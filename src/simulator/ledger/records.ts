/**
 * Stored records and the contract that record definitions are written against. A record keeps its
 * request-side fields as elements (references reduced to their ListID); the engine adds the system
 * fields (IDs, times, EditSequence, FullName, Sublevel) and each definition adds computed ones.
 */
import type { Model } from "./content-model.ts";
import type { XmlElement } from "./xml-tree.ts";

/** One transaction line. */
export interface LedgerLine {
  readonly id: string;
  fields: XmlElement[];
}

/** One list object or transaction in a company file. */
export interface LedgerRecord {
  /** Object name from its definition, e.g. `Customer`. */
  readonly object: string;
  /** ListID or TxnID. */
  readonly id: string;
  /** Unix seconds. */
  readonly created: number;
  /** Unix seconds. */
  modified: number;
  /** Unix seconds of the last modification, kept strictly increasing per record. */
  editSequence: number;
  fields: XmlElement[];
  lines: LedgerLine[];
  /** Transactions only. */
  readonly txnNumber: number | undefined;
}

/** What definitions may read from the company file. */
export interface FileView {
  readonly utcOffset: string;
  nowSeconds(): number;
  /** Live records of one object type, in creation order. */
  recordsOf(object: string): LedgerRecord[];
  recordById(id: string): LedgerRecord | undefined;
  /** `Parent:Child` full name of a list record. */
  fullNameOf(record: LedgerRecord): string;
}

/** Definition of transaction lines (e.g. InvoiceLineAdd / InvoiceLineMod / InvoiceLineRet). */
export interface LineDefinition {
  readonly addName: string;
  readonly modName: string;
  readonly retName: string;
  /** Order of line Ret children (TxnLineID is added by the engine). */
  readonly retOrder: readonly string[];
  /** Reference fields that must name an existing record: field → reference kind. */
  readonly refs: Readonly<Record<string, string>>;
  /** Fields printed with two decimals. */
  readonly amounts: readonly string[];
  /** Derives missing values (for example Amount = Quantity × Rate). */
  readonly complete: (fields: XmlElement[]) => XmlElement[];
}

/** Declarative description of one record type. */
export interface RecordDefinition {
  /** `Customer` → CustomerAddRq, CustomerAdd, CustomerRet, CustomerQueryRq … */
  readonly object: string;
  readonly kind: "list" | "transaction";
  /** Kind named by references and in 3140 messages; several objects may share one (items). */
  readonly refKind: string;
  /** `ListDelType` / `TxnDelType` enum value. */
  readonly delType: string;
  /** Has ParentRef, FullName `Parent:Child` and Sublevel. */
  readonly hierarchical: boolean;
  readonly addModel: Model | undefined;
  readonly modModel: Model | undefined;
  readonly queryModel: Model | undefined;
  /** Order of Ret children. */
  readonly retOrder: readonly string[];
  readonly refs: Readonly<Record<string, string>>;
  readonly amounts: readonly string[];
  /** Fields accepted by the schema but ignored by the simulator: they yield status 530. */
  readonly unsupported: readonly string[];
  readonly lines: LineDefinition | undefined;
  /** Fields filled in on Add when the request leaves them out. */
  readonly defaults: (file: FileView, fields: readonly XmlElement[]) => XmlElement[];
  /** Ret-time values derived from other records (balances, totals, address blocks). */
  readonly computed: Readonly<Record<string, (record: LedgerRecord, file: FileView) => XmlElement[]>>;
  /** Type-specific query filters (AccountType, EntityFilter, PaidStatus …). */
  readonly matchesFilters: (record: LedgerRecord, request: XmlElement, file: FileView) => boolean;
}
