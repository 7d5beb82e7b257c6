import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { findEndUser } from "../store/end-users.ts";
import { listMirrors, setMirroredGroups, type MirrorRow } from "../store/mirrors.ts";
import type { Tenant } from "../store/tenant.ts";
import { mirrorableGroups } from "./groups.ts";

/**
 * `GET/PUT /v1/end-users/{id}/mirror` (issue 26 item 1): which groups of an end user's company file
 * are mirrored, and the state of each copy. Secret keys only, in their own mode: another project's
 * or mode's end user is 404 like everywhere else.
 */

export interface MirrorGroupResource {
  resource: string;
  state: MirrorRow["state"];
  records: number;
  asOf: string | null;
  lastChangeAppliedAt: string | null;
  error: { code: string; message: string } | null;
}

export interface MirrorResource {
  objectType: "mirror";
  endUserId: string;
  resources: MirrorGroupResource[];
}

/** Wakes the mirror engine when groups are added (their fill starts at once). */
export const MIRROR_CHANNEL = "mirror";

const iso = (value: Date | null): string | null => (value ? value.toISOString() : null);

/**
 * What a client sees of one group. A mirror whose connection cannot be reached (no connection yet,
 * disabled, another company file open) is `paused`: its work waits until the connection is back.
 */
export function serializeGroup(row: MirrorRow, connectionStatus: string | null): MirrorGroupResource {
  const paused =
    row.state !== "error" && (connectionStatus === null || PAUSING_STATUSES.has(connectionStatus));
  return {
    resource: row.resource,
    state: paused ? "paused" : row.state,
    records: row.records,
    asOf: iso(row.as_of),
    lastChangeAppliedAt: iso(row.last_change_applied_at),
    error: row.error,
  };
}

/** Connection statuses under which a mirror's work waits (decision 0044). */
export const PAUSING_STATUSES: ReadonlySet<string> = new Set([
  "pending_setup",
  "disabled",
  "company_file_mismatch",
]);

async function endUserOrMissing(deps: Deps, tenant: Tenant, endUserId: string): Promise<void> {
  if (!(await findEndUser(deps.db, tenant, endUserId)))
    throw new ServiceError("RESOURCE_MISSING", { param: "id", message: "No such end user." });
}

export async function getMirror(deps: Deps, tenant: Tenant, endUserId: string): Promise<MirrorResource> {
  await endUserOrMissing(deps, tenant, endUserId);
  const rows = await listMirrors(deps.db, tenant, endUserId);
  const connection = await deps.db
    .selectFrom("connections")
    .select("status")
    .where("end_user_id", "=", endUserId)
    .executeTakeFirst();
  return {
    objectType: "mirror",
    endUserId,
    resources: rows.map((row) => serializeGroup(row, connection?.status ?? null)),
  };
}

/** Checks the groups named (each mirrorable, none twice); names the offending item. */
export function checkGroups(resources: readonly string[]): string[] {
  const groups = mirrorableGroups();
  const seen = new Set<string>();
  resources.forEach((name, index) => {
    if (!groups.has(name)) {
      throw new ServiceError("INVALID_PARAMETER", {
        param: `resources[${index}]`,
        message: `\`${name.slice(0, 64)}\` is not a group that can be mirrored: name a typed group whose list filters by \`updatedAfter\` (${[...groups.keys()].slice(0, 4).join(", ")}, …).`,
      });
    }
    if (seen.has(name)) {
      throw new ServiceError("INVALID_PARAMETER", {
        param: `resources[${index}]`,
        message: `\`${name}\` is named twice.`,
      });
    }
    seen.add(name);
  });
  return [...seen].sort();
}

export async function putMirror(
  deps: Deps,
  tenant: Tenant,
  endUserId: string,
  body: { resources: readonly string[] },
): Promise<MirrorResource> {
  const resources = checkGroups(body.resources);
  await endUserOrMissing(deps, tenant, endUserId);
  await setMirroredGroups(deps.db, tenant, endUserId, resources, new Date(deps.clock.now()));
  if (resources.length > 0) await deps.store.notifier.notify(MIRROR_CHANNEL);
  return getMirror(deps, tenant, endUserId);
}
