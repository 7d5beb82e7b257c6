import type { Selectable, Transaction } from "kysely";
import { json, type Db } from "./database.ts";
import { isTestTenant, type Tenant } from "./tenant.ts";
import type { DatabaseSchema, WebhookDeliveriesTable, WebhookEndpointsTable } from "./schema.ts";

/**
 * Webhook endpoints and their deliveries. Every endpoint query is scoped by tenant (project and key
 * mode): another project's or mode's endpoint does not exist for the caller.
 */
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
type Executor = Db | Transaction<DatabaseSchema>;

export interface NewEndpointRow extends Omit<WebhookEndpointRow, "event_types"> {
  event_types: string[];
}

function endpointValues(row: Partial<NewEndpointRow>) {
  const { event_types: eventTypes, ...rest } = row;
  return { ...rest, ...(eventTypes === undefined ? {} : { event_types: json(eventTypes) }) };
}

/**
 * Inserts an endpoint unless the project already has `limit` endpoints (both modes together). The
 * project row is locked for the count, so concurrent creates cannot overshoot the cap.
 */
export async function insertEndpointWithinLimit(
  db: Db,
  row: NewEndpointRow,
  limit: number,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom("projects").select("id").where("id", "=", row.project_id).forUpdate().execute();
    const count = await trx
      .selectFrom("webhook_endpoints")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("project_id", "=", row.project_id)
      .executeTakeFirstOrThrow();
    if (Number(count.n) >= limit) return false;
    await trx
      .insertInto("webhook_endpoints")
      .values({ ...row, event_types: json(row.event_types) })
      .execute();
    return true;
  });
}

export async function findEndpoint(
  db: Executor,
  tenant: Tenant,
  endpointId: string,
): Promise<WebhookEndpointRow | null> {
  const r = await db
    .selectFrom("webhook_endpoints")
    .selectAll()
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("id", "=", endpointId)
    .executeTakeFirst();
  return r ?? null;
}

/** Newest first, `limit + 1` rows (the extra one tells whether there is more). */
export async function listEndpoints(
  db: Db,
  tenant: Tenant,
  limit: number,
  beforeId: string | null,
): Promise<WebhookEndpointRow[]> {
  let q = db
    .selectFrom("webhook_endpoints")
    .selectAll()
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant));
  if (beforeId) q = q.where("id", "<", beforeId);
  return q
    .orderBy("id", "desc")
    .limit(limit + 1)
    .execute();
}

export type EndpointChanges = Partial<
  Omit<NewEndpointRow, "id" | "project_id" | "is_test" | "created_at" | "secret" | "previous_secret">
>;

export async function updateEndpoint(
  db: Db,
  tenant: Tenant,
  endpointId: string,
  changes: EndpointChanges,
): Promise<WebhookEndpointRow | null> {
  const r = await db
    .updateTable("webhook_endpoints")
    .set(endpointValues(changes))
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("id", "=", endpointId)
    .returningAll()
    .executeTakeFirst();
  return r ?? null;
}

/** Deletes an endpoint; its deliveries (and so its pending retries) and test events go with it. */
export async function deleteEndpoint(db: Db, tenant: Tenant, endpointId: string): Promise<boolean> {
  const r = await db
    .deleteFrom("webhook_endpoints")
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("id", "=", endpointId)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/**
 * Where an endpoint's signing secrets are stored (decision 0032): the associated data that binds a
 * sealed secret to its endpoint. One place for `secret` and `previous_secret`: a rotation moves the
 * current secret, sealed as it is, to `previous_secret`.
 */
export function signingSecretPlace(endpointId: string): string {
  return `webhook_endpoints.secret:${endpointId}`;
}

/**
 * The current secret (sealed, {@link signingSecretPlace}) becomes the previous one (valid until
 * `previousExpiresAt`).
 */
export async function rotateEndpointSecret(
  db: Db,
  tenant: Tenant,
  endpointId: string,
  secret: string,
  at: Date,
  previousExpiresAt: Date,
): Promise<WebhookEndpointRow | null> {
  const r = await db
    .updateTable("webhook_endpoints")
    .set((eb) => ({
      previous_secret: eb.ref("secret"),
      secret,
      secret_rotated_at: at,
      previous_secret_expires_at: previousExpiresAt,
      updated_at: at,
    }))
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("id", "=", endpointId)
    .returningAll()
    .executeTakeFirst();
  return r ?? null;
}

export interface DeliveryListFilters {
  status?: string | undefined;
}

/** An endpoint's deliveries, newest first, `limit + 1` rows. */
export async function listDeliveries(
  db: Db,
  projectId: string,
  endpointId: string,
  filters: DeliveryListFilters,
  limit: number,
  beforeId: string | null,
): Promise<WebhookDeliveryRow[]> {
  let q = db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("endpoint_id", "=", endpointId);
  if (filters.status) q = q.where("status", "=", filters.status as WebhookDeliveryRow["status"]);
  if (beforeId) q = q.where("id", "<", beforeId);
  return q
    .orderBy("id", "desc")
    .limit(limit + 1)
    .execute();
}

export async function findDelivery(
  db: Db,
  projectId: string,
  endpointId: string,
  deliveryId: string,
): Promise<WebhookDeliveryRow | null> {
  const r = await db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("endpoint_id", "=", endpointId)
    .where("id", "=", deliveryId)
    .executeTakeFirst();
  return r ?? null;
}

export interface NewDelivery {
  id: string;
  projectId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  at: Date;
  /** Leased at creation by the dispatcher that will attempt it at once (fan-out), or not. */
  lease?: { token: string; until: Date };
}

export async function insertDeliveries(
  db: Executor,
  deliveries: NewDelivery[],
): Promise<WebhookDeliveryRow[]> {
  if (deliveries.length === 0) return [];
  return db
    .insertInto("webhook_deliveries")
    .values(
      deliveries.map((d) => ({
        id: d.id,
        project_id: d.projectId,
        endpoint_id: d.endpointId,
        event_id: d.eventId,
        event_type: d.eventType,
        status: "pending" as const,
        next_attempt_at: d.at,
        completed_at: null,
        lease_token: d.lease?.token ?? null,
        lease_expires_at: d.lease?.until ?? null,
        created_at: d.at,
      })),
    )
    .returningAll()
    .execute();
}

/**
 * Writes a targeted event and its one delivery in one transaction (the test operation): the event
 * needs no fan-out, and the caller gets the delivery back at once.
 */
export async function insertEventWithDelivery(
  db: Db,
  event: { id: string; projectId: string; isTest: boolean; type: string; data: string; at: Date },
  delivery: NewDelivery,
): Promise<WebhookDeliveryRow> {
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto("events")
      .values({
        id: event.id,
        project_id: event.projectId,
        is_test: event.isTest,
        type: event.type,
        data: event.data,
        endpoint_id: delivery.endpointId,
        created_at: event.at,
        fanned_out_at: event.at,
      })
      .execute();
    const [row] = await insertDeliveries(trx, [delivery]);
    if (!row) throw new Error("delivery insert returned nothing");
    return row;
  });
}
