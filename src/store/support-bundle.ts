import type { Db } from "./database.ts";
import type { ConnectorSessionRow } from "./connector-sessions.ts";
import type { RequestRow } from "./requests.ts";
import type { StatusChangeRow } from "./connection-history.ts";
import type { WebhookDeliveryRow } from "./webhooks.ts";
import { isTestTenant, type Tenant } from "./tenant.ts";

/**
 * The rows of one end user's support bundle (requests/support-bundle.ts), every query scoped by the
 * tenant (project and mode) and the end user or its connection: nothing of another end user.
 */
export interface BundleWindow {
  since: Date;
  until: Date;
}

/**
 * The end user's Requests that lived in the window (created before its end, and created, settled
 * or still open inside it), oldest first, at most `limit`.
 */
export async function bundleRequests(
  db: Db,
  tenant: Tenant,
  endUserId: string,
  window: BundleWindow,
  limit: number,
): Promise<RequestRow[]> {
  return db
    .selectFrom("requests")
    .selectAll()
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("end_user_id", "=", endUserId)
    .where("created_at", "<=", window.until)
    .where((eb) =>
      eb.or([
        eb("created_at", ">=", window.since),
        eb("completed_at", ">=", window.since),
        eb("completed_at", "is", null),
      ]),
    )
    .orderBy("seq", "desc")
    .limit(limit)
    .execute()
    .then((rows) => rows.reverse());
}

/** The connection's status changes inside the window, oldest first. */
export async function bundleStatusChanges(
  db: Db,
  connectionId: string,
  window: BundleWindow,
): Promise<StatusChangeRow[]> {
  return db
    .selectFrom("connection_status_changes")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .where("changed_at", ">=", window.since)
    .where("changed_at", "<=", window.until)
    .orderBy("changed_at", "asc")
    .orderBy("id", "asc")
    .execute();
}

/** The connection's connector sessions open at some point of the window, oldest first. */
export async function bundleSessions(
  db: Db,
  connectionId: string,
  window: BundleWindow,
  limit: number,
): Promise<ConnectorSessionRow[]> {
  return db
    .selectFrom("connector_sessions")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .where("created_at", "<=", window.until)
    .where((eb) => eb.or([eb("closed_at", "is", null), eb("closed_at", ">=", window.since)]))
    .orderBy("created_at", "desc")
    .limit(limit)
    .execute()
    .then((rows) => rows.reverse());
}

/** A delivery with the event it carries (the event's JSON text, read to tie it to the end user). */
export interface BundleDeliveryRow {
  delivery: WebhookDeliveryRow;
  eventData: string;
}

/**
 * The tenant's webhook deliveries created in the window whose event's data holds the end user's ID
 * (request and connection events carry `endUserId`), with that data, oldest first. The caller
 * reads the data and keeps those whose `endUserId` is the end user's.
 */
export async function bundleDeliveries(
  db: Db,
  tenant: Tenant,
  endUserId: string,
  window: BundleWindow,
  limit: number,
): Promise<BundleDeliveryRow[]> {
  const rows = await db
    .selectFrom("webhook_deliveries as d")
    .innerJoin("events as e", "e.id", "d.event_id")
    .selectAll("d")
    .select("e.data as event_data")
    .where("d.project_id", "=", tenant.projectId)
    .where("e.project_id", "=", tenant.projectId)
    .where("e.is_test", "=", isTestTenant(tenant))
    .where("e.data", "like", `%${endUserId.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)
    .where("d.created_at", ">=", window.since)
    .where("d.created_at", "<=", window.until)
    .orderBy("d.created_at", "asc")
    .orderBy("d.id", "asc")
    .limit(limit)
    .execute();
  return rows.map(({ event_data, ...delivery }) => ({ delivery, eventData: event_data }));
}

/** The project and mode of an end user (the operator's CLI names only the end user), or null. */
export async function endUserTenant(db: Db, endUserId: string): Promise<Tenant | null> {
  const row = await db
    .selectFrom("end_users")
    .select(["project_id", "is_test"])
    .where("id", "=", endUserId)
    .executeTakeFirst();
  return row ? { projectId: row.project_id, mode: row.is_test ? "test" : "live" } : null;
}
