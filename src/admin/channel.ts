import { chmodSync, rmSync } from "node:fs";
import Fastify, { type FastifyInstance } from "fastify";
import { z } from "zod";
import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { adminOperations } from "./operations.ts";
import { probeAdminChannel } from "./client.ts";

/**
 * The admin channel: the running service answers the operator CLI over a Unix socket in its data
 * directory (`<DATA_DIR>/admin.sock`, mode 0600), so that CLI commands act on the service's own
 * store (the embedded store can only be opened by one process) and take effect at once.
 *
 * The socket's file permissions are its authentication: only the service's user (and root) can
 * connect. It never listens on the network. Requests and answers are JSON over HTTP/1.1.
 */
export interface AdminStatus {
  role: "service";
  pid: number;
  engine: "pglite" | "postgres";
  simulator: boolean;
}

const projectBody = z.strictObject({
  name: z.string().min(1).max(200),
  organization: z.string().min(1).max(200).optional(),
});
const quotaBody = z.strictObject({ monthlyRequests: z.number().int().min(0).max(1e12).nullable() });
const paymentBody = z.strictObject({ payment: z.enum(["failed", "ok"]) });
const disabledBody = z.strictObject({
  disabled: z.boolean(),
  reason: z.string().min(1).max(500).optional(),
});
const keyBody = z.strictObject({
  kind: z.enum(["secret", "publishable"]),
  mode: z.enum(["live", "test"]),
  readOnly: z.boolean(),
});

const mirrorBody = z.strictObject({ resources: z.array(z.string().max(200)).max(200) });

const bundleQuery = z.strictObject({
  projectId: z.string().max(100).optional(),
  since: z.string().max(40).optional(),
  until: z.string().max(40).optional(),
});

const simulateBody = z.strictObject({
  xmlVersion: z.string().min(1).max(10).optional(),
  country: z.string().min(1).max(10).optional(),
});

/** Builds the channel's HTTP handlers (without listening). */
export function buildAdminChannel(deps: Deps): FastifyInstance {
  const app = Fastify({ logger: false });
  const ops = adminOperations(deps);
  type Params = { projectId: string; keyId: string; endUserId: string };

  app.setErrorHandler((error, _request, reply) => {
    const status =
      error instanceof ServiceError
        ? (error.httpStatus ?? 400)
        : error instanceof z.ZodError
          ? 400
          : ((error as { statusCode?: number }).statusCode ?? 500);
    const message =
      error instanceof z.ZodError
        ? error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")
        : error instanceof Error
          ? error.message
          : String(error);
    if (status >= 500) deps.logger.error({ err: error }, "admin channel error");
    return reply.code(status).send({ error: { message } });
  });

  app.get("/status", async (): Promise<AdminStatus> => ({
    role: "service",
    pid: process.pid,
    engine: deps.store.engine,
    simulator: deps.simulatedConnectors !== undefined,
  }));
  app.get("/projects", async () => ops.listProjects());
  app.post("/projects", async (request, reply) =>
    reply.code(201).send(await ops.createProject(projectBody.parse(request.body))),
  );
  app.get<{ Params: Params }>("/projects/:projectId/keys", async (request) =>
    ops.listKeys(request.params.projectId),
  );
  app.post<{ Params: Params }>("/projects/:projectId/keys", async (request, reply) =>
    reply
      .code(201)
      .send(await ops.createKey({ projectId: request.params.projectId, ...keyBody.parse(request.body) })),
  );
  app.post<{ Params: Params }>("/projects/:projectId/keys/:keyId/revoke", async (request) => ({
    revoked: await ops.revokeKey(request.params.projectId, request.params.keyId),
  }));
  app.put<{ Params: Params }>("/projects/:projectId/quota", async (request) =>
    ops.setQuota({ projectId: request.params.projectId, ...quotaBody.parse(request.body) }),
  );
  app.put<{ Params: Params }>("/projects/:projectId/payment", async (request) =>
    ops.setPayment({ projectId: request.params.projectId, ...paymentBody.parse(request.body) }),
  );
  app.put<{ Params: Params }>("/projects/:projectId/disabled", async (request) =>
    ops.setDisabled({ projectId: request.params.projectId, ...disabledBody.parse(request.body) }),
  );
  app.get<{ Params: Params }>("/projects/:projectId/usage", async (request) =>
    ops.usage(request.params.projectId),
  );
  app.post("/secrets/reseal", async () => ops.resealSecrets());
  app.post<{ Params: Params }>(
    "/projects/:projectId/end-users/:endUserId/simulated-connector",
    async (request) => {
      const application = simulateBody.parse(request.body ?? {});
      return ops.simulateEndUser({
        projectId: request.params.projectId,
        endUserId: request.params.endUserId,
        ...(Object.keys(application).length > 0 ? { application } : {}),
      });
    },
  );
  app.get<{ Params: Params }>("/projects/:projectId/end-users/:endUserId/mirror", async (request) =>
    ops.getMirror({ projectId: request.params.projectId, endUserId: request.params.endUserId }),
  );
  app.put<{ Params: Params }>("/projects/:projectId/end-users/:endUserId/mirror", async (request) =>
    ops.setMirror({
      projectId: request.params.projectId,
      endUserId: request.params.endUserId,
      ...mirrorBody.parse(request.body),
    }),
  );
  app.get<{ Params: Params }>("/end-users/:endUserId/support-bundle", async (request) =>
    ops.supportBundle({ endUserId: request.params.endUserId, ...bundleQuery.parse(request.query) }),
  );
  return app;
}

export interface AdminChannel {
  socketPath: string;
  close(): Promise<void>;
}

/**
 * Listens on `socketPath`. The caller must own the data directory (the embedded store's lock), or
 * accept that another live service already answers there: then this one runs without the channel
 * (PostgreSQL instances sharing one DATA_DIR) and null is returned.
 */
export async function startAdminChannel(deps: Deps, socketPath: string): Promise<AdminChannel | null> {
  if (await probeAdminChannel(socketPath)) return null;
  // A socket file left by a process that is gone: nobody answers on it.
  rmSync(socketPath, { force: true });
  const app = buildAdminChannel(deps);
  await app.listen({ path: socketPath });
  chmodSync(socketPath, 0o600);
  return {
    socketPath,
    close: async () => {
      await app.close();
      rmSync(socketPath, { force: true });
    },
  };
}
