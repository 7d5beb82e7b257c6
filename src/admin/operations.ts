import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { findProject, listApiKeys, listProjects } from "../store/projects.ts";
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
}

const iso = (d: Date): string => d.toISOString();

/** The operations on `deps` (in the service, or on a store the CLI opened). */
export function adminOperations(deps: Deps): AdminOperations {
  const requireProject = async (projectId: string): Promise<void> => {
    if (!(await findProject(deps.db, projectId)))
      throw new ServiceError("RESOURCE_MISSING", {
        param: "project",
        message: `No such project: ${projectId}.`,
      });
  };
  return {
    async createProject(input) {
      const created = await createProject(deps, {
        name: input.name,
        ...(input.organization ? { organization: input.organization } : {}),
      });
      const { project } = created;
      return { project: { ...project, createdAt: iso(project.createdAt) }, keys: created.keys };
    },
    async listProjects() {
      return (await listProjects(deps.db)).map((p) => ({ ...p, createdAt: iso(p.createdAt) }));
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
  };
}
