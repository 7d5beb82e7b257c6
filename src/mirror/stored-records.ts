import type { MirroredRecord } from "../store/mirrors.ts";

/**
 * A record as the copy keeps it: its typed JSON as the list answered it, keyed by ID and ordered by
 * its modification time (an older answer never replaces a newer one). A record the copy cannot key
 * (no ID, no readable `updatedAt`) is a change the mirror cannot apply: never a silently wrong copy.
 */
export class UnreadableRecord extends Error {
  constructor(readonly reason: { code: string; message: string }) {
    super(reason.message);
  }
}

type Json = Record<string, unknown>;

export function mirroredRecord(record: Json): MirroredRecord {
  const id = record.id;
  const updatedMs = typeof record.updatedAt === "string" ? Date.parse(record.updatedAt) : Number.NaN;
  if (typeof id !== "string" || id === "" || !Number.isFinite(updatedMs)) {
    throw new UnreadableRecord({
      code: "record_unreadable",
      message: `A record without ${typeof id === "string" && id !== "" ? "a readable `updatedAt`" : "an ID"} came back; the group is filled again.`,
    });
  }
  return { id, data: JSON.stringify(record), updatedMs };
}

/** The company file's UTC offset as its records' timestamps carry it (`-05:00`), or null. */
export function offsetOf(records: readonly Json[]): string | null {
  for (const record of records) {
    const at = record.updatedAt ?? record.createdAt;
    if (typeof at !== "string") continue;
    const match = /([+-]\d{2}:\d{2}|Z)$/.exec(at);
    if (match?.[1]) return match[1] === "Z" ? "+00:00" : match[1];
  }
  return null;
}

/** Minutes east of UTC of an offset (`-05:00` → -300). */
export function offsetMinutes(offset: string | null): number {
  const match = offset ? /^([+-])(\d{2}):(\d{2})$/.exec(offset) : null;
  if (!match) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3]);
  return match[1] === "-" ? -minutes : minutes;
}
