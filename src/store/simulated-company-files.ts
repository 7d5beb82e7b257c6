import type { Db } from "./database.ts";
import { json } from "./database.ts";

/**
 * Simulated company files (simulator mode, migration 0005): one per connection whose Web Connector
 * the service simulates. The snapshot is opaque here; the simulator parses it.
 */
export interface SimulatedCompanyFileRow {
  connectionId: string;
  projectId: string;
  companyName: string;
  snapshot: unknown;
  attached: boolean;
  /**
   * The simulated application that holds the file (migration 0014): its message version and
   * regional edition; null for the default.
   */
  application: SimulatedApplicationEdition | null;
}

/** The message version and regional edition of a simulated application (decision 0016). */
export interface SimulatedApplicationEdition {
  xmlVersion: string;
  country: string;
}

/**
 * Inserts the file of a newly attached connection, or marks an existing one attached again (its data
 * kept; its application changed only when one is given).
 */
export async function attachSimulatedCompanyFile(
  db: Db,
  row: Omit<SimulatedCompanyFileRow, "attached">,
  now: Date,
): Promise<SimulatedCompanyFileRow> {
  const application = row.application === null ? null : json(row.application);
  const saved = await db
    .insertInto("simulated_company_files")
    .values({
      connection_id: row.connectionId,
      project_id: row.projectId,
      company_name: row.companyName,
      snapshot: json(row.snapshot),
      attached: true,
      application,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc
        .column("connection_id")
        .doUpdateSet(
          application === null
            ? { attached: true, updated_at: now }
            : { attached: true, application, updated_at: now },
        ),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRow(saved);
}

/** The stored file of a connection, attached or not. */
export async function findSimulatedCompanyFile(
  db: Db,
  connectionId: string,
): Promise<SimulatedCompanyFileRow | null> {
  const row = await db
    .selectFrom("simulated_company_files")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .executeTakeFirst();
  return row ? toRow(row) : null;
}

/** Every attached file, oldest first: what a service in simulator mode starts. */
export async function listAttachedSimulatedCompanyFiles(db: Db): Promise<SimulatedCompanyFileRow[]> {
  const rows = await db
    .selectFrom("simulated_company_files")
    .selectAll()
    .where("attached", "=", true)
    .orderBy("created_at")
    .execute();
  return rows.map(toRow);
}

/** Stores a new snapshot; false when the file is gone (its end user was deleted). */
export async function saveSimulatedCompanyFile(
  db: Db,
  connectionId: string,
  snapshot: unknown,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable("simulated_company_files")
    .set({ snapshot: json(snapshot), updated_at: now })
    .where("connection_id", "=", connectionId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The connection was set up with another connector: its simulated one is no longer started. */
export async function detachSimulatedCompanyFile(db: Db, connectionId: string, now: Date): Promise<void> {
  await db
    .updateTable("simulated_company_files")
    .set({ attached: false, updated_at: now })
    .where("connection_id", "=", connectionId)
    .execute();
}

function toRow(r: {
  connection_id: string;
  project_id: string;
  company_name: string;
  snapshot: unknown;
  attached: boolean;
  application: SimulatedApplicationEdition | null;
}): SimulatedCompanyFileRow {
  return {
    connectionId: r.connection_id,
    projectId: r.project_id,
    companyName: r.company_name,
    snapshot: r.snapshot,
    attached: r.attached,
    application: r.application,
  };
}
