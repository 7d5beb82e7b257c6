import type { Selectable } from "kysely";
import type { Db } from "./database.ts";
import type { RequestRow } from "./requests.ts";
import type { ServiceInstancesTable } from "./schema.ts";

/**
 * SQL of service instances and their leases (requests/instances.ts, migration 0008). Every change
 * is a compare-and-set, so several instances may run these at once: a dead instance is recovered by
 * exactly one of them.
 */
export type ServiceInstanceRow = Selectable<ServiceInstancesTable>;

export async function insertInstance(db: Db, row: ServiceInstanceRow): Promise<void> {
  await db.insertInto("service_instances").values(row).execute();
}

/**
 * Extends the instance's lease to `expiresAt`. False when the lease had been recovered meanwhile
 * (the instance stalled past its lease and a neighbour closed its sessions): then the lease is
 * taken back all the same, so that the sessions it holds from now on are recovered if it dies.
 */
export async function renewLease(db: Db, instanceId: string, expiresAt: Date): Promise<boolean> {
  const renewed = await db
    .updateTable("service_instances")
    .set({ lease_expires_at: expiresAt })
    .where("id", "=", instanceId)
    .where("recovered_at", "is", null)
    .where("released_at", "is", null)
    .returning("id")
    .executeTakeFirst();
  if (renewed) return true;
  await db
    .updateTable("service_instances")
    .set({ lease_expires_at: expiresAt, recovered_at: null, released_at: null })
    .where("id", "=", instanceId)
    .execute();
  return false;
}

/** A graceful stop: the lease ends now, so the instance's sessions may be recovered at once. */
export async function releaseLease(db: Db, instanceId: string, at: Date): Promise<void> {
  await db
    .updateTable("service_instances")
    .set({ released_at: at, lease_expires_at: at })
    .where("id", "=", instanceId)
    .execute();
}

/**
 * Claims the recovery of every other instance whose lease ended at or before `now` and that nobody
 * recovered yet; returns their IDs. One statement: two instances claiming at once share nothing.
 */
export async function claimDeadInstances(db: Db, selfId: string, now: Date): Promise<string[]> {
  const rows = await db
    .updateTable("service_instances")
    .set({ recovered_at: now })
    .where("recovered_at", "is", null)
    .where("lease_expires_at", "<=", now)
    .where("id", "<>", selfId)
    .returning("id")
    .execute();
  return rows.map((r) => r.id);
}

/** Instance rows recovered before `before` are forgotten (their sessions were closed long ago). */
export async function deleteRecoveredInstances(db: Db, before: Date): Promise<number> {
  const result = await db
    .deleteFrom("service_instances")
    .where("recovered_at", "<", before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Which sessions a recovery takes: those of dead instances, and (`legacy`) those opened before leases. */
export interface SessionOwners {
  instanceIds: readonly string[];
  legacy: boolean;
}

/**
 * Closes the open connector sessions of the given owners (the calls they held died with their
 * instance); returns the connections whose sessions were closed.
 */
export async function closeSessionsOf(
  db: Db,
  owners: SessionOwners,
  at: Date,
  lastError: string,
): Promise<string[]> {
  if (owners.instanceIds.length === 0 && !owners.legacy) return [];
  const closed = await db
    .updateTable("connector_sessions")
    // The connector session machine's `close` (connector/session/phases.ts), for every such session at once.
    .set({ phase: "closed", closed_at: at, last_error: lastError })
    .where("state", "=", "open")
    .where((eb) =>
      eb.or([
        ...(owners.instanceIds.length > 0 ? [eb("instance_id", "in", [...owners.instanceIds])] : []),
        ...(owners.legacy ? [eb("instance_id", "is", null)] : []),
      ]),
    )
    .returning("connection_id")
    .execute();
  return closed.map((row) => row.connection_id);
}

/**
 * Requests still `sent` on a session of the given owners, whether closed just now or before (an
 * instance that died between closing a session and interrupting its request).
 */
export async function sentOnSessionsOf(db: Db, owners: SessionOwners): Promise<RequestRow[]> {
  if (owners.instanceIds.length === 0 && !owners.legacy) return [];
  return db
    .selectFrom("requests")
    .selectAll()
    .where("status", "=", "sent")
    .where("ticket_hash", "in", (eb) =>
      eb
        .selectFrom("connector_sessions")
        .select("ticket_hash")
        .where((w) =>
          w.or([
            ...(owners.instanceIds.length > 0 ? [w("instance_id", "in", [...owners.instanceIds])] : []),
            ...(owners.legacy ? [w("instance_id", "is", null)] : []),
          ]),
        ),
    )
    .orderBy("seq")
    .execute();
}
