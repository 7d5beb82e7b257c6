/**
 * Stored records. A record keeps its fields as elements named as in its `…Ret` type (references
 * reduced to their ListID); the engine adds the system fields (IDs, times, EditSequence, FullName,
 * Sublevel) and the computed ones when it renders a Ret.
 */
import type { XmlElement } from "../../ledger/xml/tree.ts";

/** One transaction line. */
export interface LedgerLine {
  /** TxnLineID. */
  readonly id: string;
  fields: XmlElement[];
  /**
   * The line's Ret element (`InvoiceLineGroupRet`, `ExpenseLineRet`…); absent means the record
   * type's first line element, so the common case stores nothing extra.
   */
  element?: string;
}

/** One list object or transaction in a company file. */
export interface LedgerRecord {
  /** Object type name, e.g. `Customer`. */
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

/** Text of the first field named `name`. */
export function fieldText(fields: readonly XmlElement[], name: string): string | undefined {
  return fields.find((f) => f.name === name)?.text;
}

/** ListID stored in reference field `name`. */
export function refId(fields: readonly XmlElement[], name: string): string | undefined {
  return fields.find((f) => f.name === name)?.children.find((c) => c.name === "ListID")?.text;
}
