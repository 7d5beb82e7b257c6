import { sql, type Transaction } from "kysely";
import type { Db } from "./database.ts";
import type { DatabaseSchema } from "./schema.ts";
import { isTestTenant, type Tenant } from "./tenant.ts";

type Executor = Db | Transaction<DatabaseSchema>;

/**
 * Usage of application Requests per project, mode and calendar month (decision 0019). A charge is
 * one statement: the month's count grows by `units` only if it stays within `quota` (null: no
 * quota), so two instances admitting at once can never overshoot it together.
 */
export type Charge = { charged: true; used: number } | { charged: false; used: number };

export async function chargeUsage(
  db: Executor,
  tenant: Tenant,
  period: string,
  units: number,
  quota: number | null,
): Promise<Charge> {
  if (quota !== null && units > quota) return { charged: false, used: await usageOf(db, tenant, period) };
  const charged = await chargeStatement(db, { tenant, period, units }, quota).executeTakeFirst();
  if (charged) return { charged: true, used: Number(charged.requests) };
  return { charged: false, used: await usageOf(db, tenant, period) };
}

/** A charge that no quota limits: it always counts (`store/requests.ts` carries it on the Request's insert). */
export interface UnlimitedCharge {
  tenant: Tenant;
  period: string;
  units: number;
}

/**
 * The charge's one statement, returning the month's new count; with a quota, no row when it would
 * be passed. `db` may be a query creator inside a `with` clause.
 */
export function chargeStatement(
  db: Pick<Executor, "insertInto">,
  { tenant, period, units }: UnlimitedCharge,
  quota: number | null,
) {
  return db
    .insertInto("project_usage")
    .values({ project_id: tenant.projectId, is_test: isTestTenant(tenant), period, requests: units })
    .onConflict((oc) =>
      oc
        .columns(["project_id", "is_test", "period"])
        .doUpdateSet({ requests: sql`project_usage.requests + excluded.requests` })
        .where(
          quota === null
            ? sql<boolean>`true`
            : sql<boolean>`project_usage.requests + excluded.requests <= ${quota}`,
        ),
    )
    .returning("requests");
}

/** Requests counted for the tenant in `period` (0 when none). */
export async function usageOf(db: Executor, tenant: Tenant, period: string): Promise<number> {
  const row = await db
    .selectFrom("project_usage")
    .select("requests")
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("period", "=", period)
    .executeTakeFirst();
  return row ? Number(row.requests) : 0;
}
