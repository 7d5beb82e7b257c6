/**
 * The persisted form of a simulated company file (see `CompanyFile.snapshot`/`restore`): plain JSON
 * that a store keeps between runs. It is parsed on the way back in, like any data from outside.
 */
import { z } from "zod";
import type { LedgerRecord } from "./records.ts";
import type { XmlElement } from "../../ledger/xml/tree.ts";

const xmlElement: z.ZodType<XmlElement> = z.lazy(() =>
  z.object({
    name: z.string().min(1),
    attrs: z.array(z.tuple([z.string(), z.string()]).readonly()).readonly(),
    children: z.array(xmlElement).readonly(),
    text: z.string(),
  }),
);

const record = z.object({
  object: z.string().min(1),
  id: z.string().min(1),
  created: z.number().int(),
  modified: z.number().int(),
  editSequence: z.number().int(),
  fields: z.array(xmlElement),
  lines: z.array(
    // `element` names the line's Ret element when it is not the record type's first line kind.
    z.object({ id: z.string().min(1), fields: z.array(xmlElement), element: z.string().min(1).optional() }),
  ),
  txnNumber: z.number().int().nullable(),
});

const counter = z.number().int().nonnegative();

const schema = z.object({
  format: z.literal(1),
  path: z.string().min(1),
  companyName: z.string(),
  utcOffset: z.string().regex(/^[+-]\d\d:\d\d$/),
  counters: z.object({ list: counter, transaction: counter, transactionNumber: counter }),
  records: z.array(record),
  savedMessageSets: z.array(z.object({ id: z.string().min(1), responses: z.array(xmlElement) })),
  companyDataExts: z.array(z.object({ ownerId: z.string(), name: z.string(), value: z.string() })),
});

/** A stored record: as {@link LedgerRecord}, with `null` for "no transaction number" (JSON has no undefined). */
export type SnapshotRecord = Omit<LedgerRecord, "txnNumber"> & { readonly txnNumber: number | null };

/** Version 1 of the persisted company file. */
export interface CompanyFileSnapshot {
  readonly format: 1;
  readonly path: string;
  readonly companyName: string;
  readonly utcOffset: string;
  /** Next ListID, next TxnID/TxnLineID and next transaction number. */
  readonly counters: {
    readonly list: number;
    readonly transaction: number;
    readonly transactionNumber: number;
  };
  readonly records: readonly SnapshotRecord[];
  /** Error recovery store: the saved Rs elements by `newMessageSetID`. */
  readonly savedMessageSets: readonly { readonly id: string; readonly responses: readonly XmlElement[] }[];
  readonly companyDataExts: readonly {
    readonly ownerId: string;
    readonly name: string;
    readonly value: string;
  }[];
}

/** Parses stored snapshot data; throws with the first problem when it is not a version 1 snapshot. */
export function parseCompanyFileSnapshot(data: unknown): CompanyFileSnapshot {
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `Not a company file snapshot: ${issue ? `${issue.path.join(".")}: ${issue.message}` : "invalid"}`,
    );
  }
  // JSON has no undefined: a line without `element` must not carry the key at all.
  const records = parsed.data.records.map((record) => ({
    ...record,
    lines: record.lines.map(({ element, ...line }) => (element === undefined ? line : { ...line, element })),
  }));
  return { ...parsed.data, records };
}
