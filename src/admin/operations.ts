import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { getMirror, putMirror, type MirrorResource } from "../mirror/settings.ts";
import { supportBundle, type SupportBundle } from "../support/bundle.ts";
import { endUserTenant as storedEndUserTenant } from "../store/support-bundle.ts";
import { findEndUser } from "../store/end-users.ts";
import { findProject, listApiKeys, listProjects, type ProjectRow } from "../store/projects.ts";
import { resealStoredSecrets, type ResealReport } from "../store/sealed-values.ts";
import type { Tenant } from "../store/tenant.ts";
import { changeStanding, usageReport, type UsageReport } from "../tenancy/billing.ts";
import { createApiKey, createProject, revokeKey, type KeyKind, type KeyMode } from "../tenancy/api-keys.ts";
import {
  prepareSimulatedConnection,
  type AttachedSimulatedConnector,
  type SimulatedApplicationChoice,
} from "../tenancy/simulated-connections.ts";

/**
 * What an operator can do (the CLI's commands), as one interface with two implementations: in the
 * running service (reached over the admin channel, see `channel.ts`) and directly on the store when
 * no service runs. Results are plain JSON values (dates as ISO strings), the same either way.
 */
export interface ProjectSummary {
  id: string;
  name: string;
  organization: string;
  createdAt: string;
  /** Live application Requests per calendar month (UTC); null: no quota (decision 0019). */
  monthlyRequestQuota: number | null;
  /** Live application operations are refused with PAYMENT_FAILED since then. */
  paymentFailedAt: string | null;
  /** Every call of the project's keys is refused with PERMISSION_DENIED since then. */
  disabledAt: string | null;
  disabledReason: string | null;
}

export interface KeySummary {
  id: string;
  projectId: string;
  kind: KeyKind;
  mode: KeyMode;
  readOnly: boolean;
  /** Last four characters, to tell keys apart. */
  hint: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface CreatedProjectResult {
  project: ProjectSummary;
  /** Shown once. */
  keys: { secretLive: string; secretTest: string; publishableLive: string; publishableTest: string };
}

export interface CreatedKeyResult {
  id: string;
  /** Shown once. */
  key: string;
  kind: KeyKind;
  mode: KeyMode;
  readOnly: boolean;
}

export interface AdminOperations {
  createProject(input: { name: string; organization?: string | undefined }): Promise<CreatedProjectResult>;
  listProjects(): Promise<ProjectSummary[]>;
  createKey(input: {
    projectId: string;
    kind: KeyKind;
    mode: KeyMode;
    readOnly: boolean;
  }): Promise<CreatedKeyResult>;
  listKeys(projectId: string): Promise<KeySummary[]>;
  /** False when there is no such active key. */
  revokeKey(projectId: string, keyId: string): Promise<boolean>;
  /**
   * Attaches a simulated connector and company file to an end user (service in simulator mode only),
   * optionally with the simulated application's message version and regional edition.
   */
  simulateEndUser(input: {
    projectId: string;
    endUserId: string;
    application?: SimulatedApplicationChoice;
  }): Promise<AttachedSimulatedConnector>;
  /** Sets (or, with null, removes) the project's monthly quota of live application Requests. */
  setQuota(input: { projectId: string; monthlyRequests: number | null }): Promise<ProjectSummary>;
  /** Marks the project's payment failed, or settled again. */
  setPayment(input: { projectId: string; payment: "failed" | "ok" }): Promise<ProjectSummary>;
  /** Disables the project (every call of its keys: 403 PERMISSION_DENIED), or enables it again. */
  setDisabled(input: {
    projectId: string;
    disabled: boolean;
    reason?: string | undefined;
  }): Promise<ProjectSummary>;
  /** The project's usage this month, with its quota and standing. */
  usage(projectId: string): Promise<UsageReport>;
  /**
   * Seals every stored secret again under the current `SECRETS_KEY` (decision 0032: the rotation's
   * step after the restart with the new key, and the first sealing of values stored in clear).
   */
  resealSecrets(): Promise<ResealReport>;
  /** The end user's mirror (issue 26): its groups and the state of each copy, as `GET …/mirror`. */
  getMirror(input: { projectId: string; endUserId: string }): Promise<MirrorResource>;
  /** Sets the end user's mirrored groups (`[]`: off, the copy deleted), as `PUT …/mirror`. */
  setMirror(input: { projectId: string; endUserId: string; resources: string[] }): Promise<MirrorResource>;
  /**
   * The end user's support bundle (issue 28), as `GET …/support-bundle` in the end user's own mode;
   * `projectId` optional (an end user's ID names its project).
   */
  supportBundle(input: {
    endUserId: string;
    projectId?: string | undefined;
    since?: string | undefined;
    until?: string | undefined;
  }): Promise<SupportBundle>;
}

const iso = (d: Date): string => d.toISOString();

function summary(p: ProjectRow): ProjectSummary {
  return {
    id: p.id,
    name: p.name,
    organization: p.organization,
    createdAt: iso(p.createdAt),
    monthlyRequestQuota: p.monthlyRequestQuota,
    paymentFailedAt: p.paymentFailedAt ? iso(p.paymentFailedAt) : null,
    disabledAt: p.disabledAt ? iso(p.disabledAt) : null,
    disabledReason: p.disabledReason,
  };
}

/** The operations on `deps` (in the service, or on a store the CLI opened). */
export function adminOperations(deps: Deps): AdminOperations {
  const missingProject = (projectId: string): ServiceError =>
    new ServiceError("RESOURCE_MISSING", { param: "project", message: `No such project: ${projectId}.` });
  const requireProject = async (projectId: string): Promise<ProjectRow> => {
    const project = await findProject(deps.db, projectId);
    if (!project) throw missingProject(projectId);
    return project;
  };
  /** The operator works across modes: the end user's own mode is the tenant (as `end-users simulate`). */
  const endUserTenant = async (projectId: string, endUserId: string): Promise<Tenant> => {
    const project = await requireProject(projectId);
    for (const mode of ["live", "test"] as const) {
      const tenant = { projectId: project.id, mode };
      if (await findEndUser(deps.db, tenant, endUserId)) return tenant;
    }
    throw new ServiceError("RESOURCE_MISSING", {
      param: "endUserId",
      message: `No such end user in project ${projectId}: ${endUserId}.`,
    });
  };
  const change = async (projectId: string, changes: Parameters<typeof changeStanding>[2]) => {
    const project = await changeStanding(deps, projectId, changes);
    if (!project) throw missingProject(projectId);
    return summary(project);
  };
  return {
    async createProject(input) {
      const created = await createProject(deps, {
        name: input.name,
        ...(input.organization ? { organization: input.organization } : {}),
      });
      return { project: summary(created.project), keys: created.keys };
    },
    async listProjects() {
      return (await listProjects(deps.db)).map(summary);
    },
    async createKey(input) {
      await requireProject(input.projectId);
      const created = await createApiKey(deps, input.projectId, input);
      const { key } = created;
      return { id: key.id, key: created.secret, kind: key.kind, mode: key.mode, readOnly: key.readOnly };
    },
    async listKeys(projectId) {
      await requireProject(projectId);
      return (await listApiKeys(deps.db, projectId)).map((k) => ({
        ...k,
        createdAt: iso(k.createdAt),
        revokedAt: k.revokedAt ? iso(k.revokedAt) : null,
      }));
    },
    async revokeKey(projectId, keyId) {
      await requireProject(projectId);
      return revokeKey(deps, projectId, keyId);
    },
    async simulateEndUser(input) {
      const host = deps.simulatedConnectors;
      if (!host) {
        throw new Error(
          "Simulated connectors run inside the service in simulator mode: start it with `npm start` (SIMULATOR=on) and run this command again.",
        );
      }
      return host.attach(await prepareSimulatedConnection(deps, input));
    },
    async setQuota(input) {
      return change(input.projectId, { monthlyRequestQuota: input.monthlyRequests });
    },
    async setPayment(input) {
      const at = input.payment === "failed" ? new Date(deps.clock.now()) : null;
      return change(input.projectId, { paymentFailedAt: at });
    },
    async setDisabled(input) {
      return input.disabled
        ? change(input.projectId, {
            disabledAt: new Date(deps.clock.now()),
            disabledReason: input.reason ?? null,
          })
        : change(input.projectId, { disabledAt: null, disabledReason: null });
    },
    async usage(projectId) {
      return usageReport(deps.db, await requireProject(projectId), deps.clock.now());
    },
    async resealSecrets() {
      if (!deps.sealing.protects) {
        throw new ServiceError("INVALID_PARAMETER", {
          message:
            "SECRETS_KEY is not set: there is no key to seal with. Set it (openssl rand -base64 32), restart the service, and run this again.",
        });
      }
      return resealStoredSecrets(deps.db, deps.sealing, new Date(deps.clock.now()));
    },
    async getMirror(input) {
      return getMirror(deps, await endUserTenant(input.projectId, input.endUserId), input.endUserId);
    },
    async setMirror(input) {
      const tenant = await endUserTenant(input.projectId, input.endUserId);
      return putMirror(deps, tenant, input.endUserId, { resources: input.resources });
    },
    async supportBundle(input) {
      const tenant =
        input.projectId === undefined
          ? await storedEndUserTenant(deps.db, input.endUserId)
          : await endUserTenant(input.projectId, input.endUserId);
      if (!tenant)
        throw new ServiceError("RESOURCE_MISSING", {
          param: "endUserId",
          message: `No such end user: ${input.endUserId}.`,
        });
      return supportBundle(deps, tenant, input.endUserId, { since: input.since, until: input.until });
    },
  };
}
