/**
 * Whose objects a store call may see: one project, in one mode. Live and test keys of a project see
 * disjoint sets of end users, requests and idempotency keys (decision 0005), exactly as two projects
 * do. A `Principal` (the caller's key) is a Tenant.
 */
export interface Tenant {
  projectId: string;
  mode: "live" | "test";
}

/** The stored flag of a tenant's mode (`is_test` columns, as on connections and auth sessions). */
export const isTestTenant = (tenant: Tenant): boolean => tenant.mode === "test";
