import type { Deps } from "../deps.ts";
import { typedOperation } from "../ledger/operations.ts";
import {
  advanceWritesThrough,
  pollSoon,
  writeRecords,
  writesSince,
  type CompletedWrite,
  type MirroredRecord,
  type MirrorRow,
} from "../store/mirrors.ts";
import { dependsOnOtherRecords, mirrorableGroups } from "./groups.ts";
import { mirroredRecord, UnreadableRecord } from "./stored-records.ts";
import { MIRROR_CHANNEL } from "./settings.ts";

/**
 * Read-your-writes (issue 26 item 2): a write answered before a read is in the copy the read is
 * answered from. The writes of the end user completed since the mirror's `writes_through` are
 * applied from their own answers, in completion order: a create or an update answers the whole
 * record; a delete, its ID. A write whose effect on this group its answer does not show (a void,
 * a merge, a batch, passthrough, or any write when the group holds values computed from other
 * records, such as balances) stops the catch-up: the read goes live and the mirror polls at once;
 * once that poll is in, `writes_through` has passed the write.
 */
type Effect = { kind: "none" } | { kind: "record"; record: MirroredRecord } | { kind: "unknown" };

function effectOn(mirror: MirrorRow, write: CompletedWrite): Effect {
  const operation = typedOperation(write.operation_id);
  const group = operation?.resource?.entry.path;
  if (!operation || !group) return { kind: "unknown" };
  const resource = operation.resource;
  if (group !== mirror.resource) {
    const mirrored = mirrorableGroups().get(mirror.resource);
    return mirrored && dependsOnOtherRecords(mirrored) ? { kind: "unknown" } : { kind: "none" };
  }
  if (!resource) return { kind: "unknown" };
  const result = write.result as Record<string, unknown> | null;
  if (!result) return { kind: "unknown" };
  if (operation.action === "create" || operation.action === "update" || operation.action === "upsert") {
    // An upsert's answer holds the record it created or updated (decision 0046).
    const record = operation.action === "upsert" ? (result.data as Record<string, unknown> | null) : result;
    if (!record) return { kind: "unknown" };
    try {
      return { kind: "record", record: mirroredRecord(record) };
    } catch (error) {
      if (error instanceof UnreadableRecord) return { kind: "unknown" };
      throw error;
    }
  }
  if (operation.action === "delete" && typeof result.id === "string")
    return { kind: "record", record: { id: result.id, data: null, updatedMs: Number.MAX_SAFE_INTEGER } };
  return { kind: "unknown" };
}

/** Applies the writes completed since the mirror's `writes_through`; false when one cannot be applied. */
export async function catchUpWrites(deps: Deps, mirror: MirrorRow): Promise<boolean> {
  let through = { at: mirror.writes_through, id: mirror.writes_through_id };
  const writes = await writesSince(deps.db, mirror.end_user_id, through);
  const records: MirroredRecord[] = [];
  let complete = true;
  for (const write of writes) {
    const effect = effectOn(mirror, write);
    if (effect.kind === "unknown") {
      complete = false;
      break;
    }
    if (effect.kind === "record") records.push(effect.record);
    through = { at: write.completed_at, id: write.id };
  }
  await deps.db.transaction().execute(async (trx) => {
    if (records.length > 0) await writeRecords(trx, mirror, mirror.generation, records);
    await advanceWritesThrough(trx, mirror, through);
    if (!complete) await pollSoon(trx, mirror, new Date(deps.clock.now()));
  });
  if (!complete) await deps.store.notifier.notify(MIRROR_CHANNEL);
  return complete;
}
