import { sql } from "kysely";
import type { Db } from "./database.ts";

/**
 * What the metrics gauges show about stored state (platform/metrics.ts), read at scrape time so
 * that every instance reports the same truth: unfinished requests by status, open connector
 * sessions (all, and those held by one instance), connections by status. Three grouped counts over
 * partial indexes' worth of rows; finished requests are never counted.
 */
export interface StoredState {
  requestsByStatus: Record<string, number>;
  sessionsOpen: number;
  sessionsOpenHere: number;
  connectionsByStatus: Record<string, number>;
}

export async function sampleStoredState(db: Db, instanceId: string): Promise<StoredState> {
  const [requests, sessions, connections] = await Promise.all([
    db
      .selectFrom("requests")
      .select(["status", sql<string>`count(*)`.as("n")])
      .where("status", "in", ["queued", "waiting_for_connection", "sent", "outcome_unknown"])
      .groupBy("status")
      .execute(),
    db
      .selectFrom("connector_sessions")
      .select([
        sql<string>`count(*)`.as("all"),
        sql<string>`count(*) filter (where instance_id = ${instanceId})`.as("here"),
      ])
      .where("state", "=", "open")
      .executeTakeFirstOrThrow(),
    db
      .selectFrom("connections")
      .select(["status", sql<string>`count(*)`.as("n")])
      .groupBy("status")
      .execute(),
  ]);
  return {
    requestsByStatus: Object.fromEntries(requests.map((r) => [r.status, Number(r.n)])),
    sessionsOpen: Number(sessions.all),
    sessionsOpenHere: Number(sessions.here),
    connectionsByStatus: Object.fromEntries(connections.map((r) => [r.status, Number(r.n)])),
  };
}
