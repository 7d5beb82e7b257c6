import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import type { Db } from "../store/database.ts";
import {
  findProject,
  updateProjectStanding,
  type ProjectRow,
  type ProjectStanding,
} from "../store/projects.ts";
import type { Tenant } from "../store/tenant.ts";
import { chargeUsage, usageOf, type UnlimitedCharge } from "../store/usage.ts";
import { API_KEYS_CHANNEL } from "./api-key-cache.ts";

/**
 * Billing and the operator's standing of a project (decision 0019; spec Authentication 7: "Billing
 * problems return BILLING_REQUIRED or PAYMENT_FAILED", "Other permission checks return 403
 * PERMISSION_DENIED"; batch rule 7: "Billing counts the batch like the same requests sent singly").
 *
 * - Usage is counted per project, mode and calendar month (UTC) in application Requests admitted
 *   (queued): a typed call, a list page, a health check is 1; a batch is its members; a passthrough
 *   document is its request messages. Refused calls, idempotent replays and the service's own
 *   Requests (the change feed's polls) are not counted.
 * - The operator sets a monthly quota per project (`ledger-bridge projects set-quota`). It applies to
 *   the live mode: a live call that would take the month's count past it is refused at admission
 *   with 402 BILLING_REQUIRED and nothing is queued. Test mode is counted, never refused.
 * - The operator marks a project's payment failed (`ledger-bridge projects set-billing --payment
 *   failed`): live application operations are refused with 402 PAYMENT_FAILED until it is cleared.
 * - The operator disables a project (`ledger-bridge projects disable`): every call of its keys is
 *   refused with 403 PERMISSION_DENIED (api/plugins/auth.ts) until it is enabled again.
 *
 * Every change wakes the key caches of every instance, which keep the standing with the key.
 */

export interface UsagePeriod {
  /** `YYYY-MM`, UTC. */
  period: string;
  startsAt: Date;
  resetsAt: Date;
}

/** The calendar month (UTC) `nowMs` falls in. */
export function usagePeriod(nowMs: number): UsagePeriod {
  const now = new Date(nowMs);
  const startsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { period: startsAt.toISOString().slice(0, 7), startsAt, resetsAt };
}

/** The standing admission works with: the key lookup's, or the store's for a principal without one. */
export async function standingOf(
  deps: Deps,
  tenant: Tenant & { standing?: ProjectStanding | undefined },
): Promise<ProjectStanding | null> {
  return tenant.standing ?? (await findProject(deps.db, tenant.projectId));
}

/** 402 PAYMENT_FAILED for a live call of a project whose payment the operator marked failed. */
export function paymentRefusal(tenant: Tenant, standing: ProjectStanding | null): ServiceError | null {
  if (tenant.mode !== "live" || !standing?.paymentFailedAt) return null;
  return new ServiceError("PAYMENT_FAILED", {
    message: `The project's last payment failed (marked by the service's operator on ${standing.paymentFailedAt.toISOString()}); live application operations are refused until it is settled.`,
    details: { since: standing.paymentFailedAt.toISOString() },
  });
}

/**
 * Counts `units` Requests for the tenant's month, or refuses them (402 BILLING_REQUIRED) when a live
 * quota would be passed; `db` is the transaction that stores the Request, so a refused or failed
 * admission counts nothing.
 */
export async function chargeOrRefuse(
  db: Parameters<typeof chargeUsage>[0],
  tenant: Tenant,
  standing: ProjectStanding | null,
  units: number,
  nowMs: number,
): Promise<ServiceError | null> {
  const { period, resetsAt } = usagePeriod(nowMs);
  const quota = quotaOf(tenant, standing);
  const charge = await chargeUsage(db, tenant, period, units, quota);
  if (charge.charged || quota === null) return null;
  return new ServiceError("BILLING_REQUIRED", {
    message: `The project's monthly quota of ${quota} application requests is used up (${charge.used} counted in ${period}; this call needs ${units}). It resets at ${resetsAt.toISOString()}.`,
    details: { quota, used: charge.used, requested: units, period, resetsAt: resetsAt.toISOString() },
  });
}

/** The quota a call of the tenant is counted against: live mode only; null for none. */
function quotaOf(tenant: Tenant, standing: ProjectStanding | null): number | null {
  return tenant.mode === "live" ? (standing?.monthlyRequestQuota ?? null) : null;
}

/**
 * The charge of a call that no quota limits (test mode, or a live project without one), which can
 * be counted by the Request's own insert; null when a quota applies (`chargeOrRefuse` then).
 */
export function unlimitedCharge(
  tenant: Tenant,
  standing: ProjectStanding | null,
  units: number,
  nowMs: number,
): UnlimitedCharge | null {
  return quotaOf(tenant, standing) === null ? { tenant, period: usagePeriod(nowMs).period, units } : null;
}

/** A project's usage as the operator sees it (`ledger-bridge projects usage`). */
export interface UsageReport {
  projectId: string;
  period: string;
  resetsAt: string;
  monthlyRequestQuota: number | null;
  live: { requests: number; remaining: number | null };
  test: { requests: number };
  paymentFailedAt: string | null;
  disabledAt: string | null;
  disabledReason: string | null;
}

export async function usageReport(db: Db, project: ProjectRow, nowMs: number): Promise<UsageReport> {
  const { period, resetsAt } = usagePeriod(nowMs);
  const live = await usageOf(db, { projectId: project.id, mode: "live" }, period);
  const test = await usageOf(db, { projectId: project.id, mode: "test" }, period);
  const quota = project.monthlyRequestQuota;
  return {
    projectId: project.id,
    period,
    resetsAt: resetsAt.toISOString(),
    monthlyRequestQuota: quota,
    live: { requests: live, remaining: quota === null ? null : Math.max(0, quota - live) },
    test: { requests: test },
    paymentFailedAt: project.paymentFailedAt?.toISOString() ?? null,
    disabledAt: project.disabledAt?.toISOString() ?? null,
    disabledReason: project.disabledReason,
  };
}

/**
 * Changes a project's standing and wakes every instance's key cache, so the change holds from the
 * next call on; null when there is no such project.
 */
export async function changeStanding(
  deps: Deps,
  projectId: string,
  changes: Partial<ProjectStanding>,
): Promise<ProjectRow | null> {
  const project = await updateProjectStanding(deps.db, projectId, changes);
  if (project) await deps.store.notifier.notify(API_KEYS_CHANNEL);
  return project;
}

/** 403 PERMISSION_DENIED for any call of a disabled project's keys. */
export function disabledProjectError(standing: ProjectStanding | undefined): ServiceError | null {
  if (!standing?.disabledAt) return null;
  const reason = standing.disabledReason ? `: ${standing.disabledReason}` : "";
  return new ServiceError("PERMISSION_DENIED", {
    message: `The project was disabled by the service's operator on ${standing.disabledAt.toISOString()}${reason}.`,
    details: { reason: "project_disabled", disabledAt: standing.disabledAt.toISOString() },
  });
}
