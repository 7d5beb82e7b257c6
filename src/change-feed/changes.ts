/**
 * What one poll found, turned into the changes to report (issue 9 item 5): records returned by the
 * per-group list queries (modified since the window start, which overlaps the previous poll) and the
 * deleted lists' entries. A change is reported once per record ID and revision; a deletion once
 * per record ID.
 */

/** A record as a list query returned it (the fields every typed record has). */
export interface ListedRecord {
  id: string;
  objectType: string;
  revisionNumber: string | null;
  /** ISO date-time with offset (the application's `TimeCreated`). */
  createdAt: string | null;
}

/** A deleted-list entry, already matched to the watched group it belonged to. */
export interface DeletedRecord {
  id: string;
  objectType: string;
}

export type ChangeKind = "created" | "updated" | "deleted";

export interface Change {
  id: string;
  objectType: string;
  /** Null for deletions. */
  revisionNumber: string | null;
  changeKind: ChangeKind;
}

/** The revision key kept for a deletion (records' revision numbers are digits). */
export const DELETED_REVISION = "deleted";

export interface Classification {
  changes: Change[];
  /** What to remember as reported. */
  seen: Array<{ objectId: string; revision: string }>;
}

/**
 * Classifies one poll's findings against what was reported before (`seen`: record ID → revisions).
 * A record is `created` when none of its revisions was reported and it was created at or after
 * `windowStartMs` (the poll's `updatedAfter`); otherwise `updated`. A record listed twice in one
 * poll (it moved while the queries ran) is reported once per revision.
 */
export function classify(
  listed: readonly ListedRecord[],
  deleted: readonly DeletedRecord[],
  seen: ReadonlyMap<string, ReadonlySet<string>>,
  windowStartMs: number,
): Classification {
  const changes: Change[] = [];
  const remembered: Array<{ objectId: string; revision: string }> = [];
  const reported = new Set<string>();
  const reportedIds = new Set<string>();
  const known = (id: string, revision: string): boolean =>
    reported.has(`${id}\u0000${revision}`) || (seen.get(id)?.has(revision) ?? false);
  const remember = (id: string, revision: string): void => {
    reported.add(`${id}\u0000${revision}`);
    reportedIds.add(id);
    remembered.push({ objectId: id, revision });
  };
  const deletedIds = new Set(deleted.map((d) => d.id));
  for (const record of listed) {
    // Deleted while the queries ran: the deletion is what is true now.
    if (deletedIds.has(record.id)) continue;
    const revision = record.revisionNumber ?? "";
    if (known(record.id, revision)) continue;
    const everReported = (seen.get(record.id)?.size ?? 0) > 0 || reportedIds.has(record.id);
    const createdMs = record.createdAt === null ? Number.NaN : Date.parse(record.createdAt);
    const created = !everReported && Number.isFinite(createdMs) && createdMs >= windowStartMs;
    changes.push({
      id: record.id,
      objectType: record.objectType,
      revisionNumber: record.revisionNumber,
      changeKind: created ? "created" : "updated",
    });
    remember(record.id, revision);
  }
  for (const record of deleted) {
    if (known(record.id, DELETED_REVISION)) continue;
    changes.push({
      id: record.id,
      objectType: record.objectType,
      revisionNumber: null,
      changeKind: "deleted",
    });
    remember(record.id, DELETED_REVISION);
  }
  return { changes, seen: remembered };
}

/** Splits changes into event-sized chunks. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
