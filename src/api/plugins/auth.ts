import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Deps } from "../../deps.ts";
import { ServiceError } from "../../errors/service-error.ts";
import { authenticateSecretKey, type Principal } from "../../tenancy/api-keys.ts";
import { findProject } from "../../store/projects.ts";
import { ApiKeyCache } from "../../tenancy/api-key-cache.ts";
import { disabledProjectError } from "../../tenancy/billing.ts";
import { fromUnexpected } from "../errors.ts";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal | null;
    authError: ServiceError | null;
  }
  interface FastifyContextConfig {
    /** Route needs a secret key. */
    auth?: boolean;
    /** Route writes (read-only keys are refused). */
    write?: boolean;
    /** `Svc-*` headers the route takes beyond those every route knows (`svc-max-staleness-seconds`). */
    svcHeaders?: readonly string[];
  }
}

/**
 * Resolves the Bearer key in `onRequest` so the rate limiter can count per project, and raises the
 * authentication error in `preParsing`, after the limiter has set its headers (every response
 * carries `RateLimit-*`, 401s included).
 */
export function registerAuth(app: FastifyInstance, deps: Deps): void {
  app.decorateRequest("principal", null);
  app.decorateRequest("authError", null);
  const keys = new ApiKeyCache(deps);
  app.addHook("onClose", async () => keys.close());
  const organizations = new Map<string, string>();
  const organizationOf = async (projectId: string): Promise<string | null> => {
    const cached = organizations.get(projectId);
    if (cached) return cached;
    const project = await findProject(deps.db, projectId);
    if (project) organizations.set(projectId, project.organization);
    return project?.organization ?? null;
  };

  app.addHook("onRequest", async (request: FastifyRequest) => {
    if (!request.routeOptions.config.auth) return;
    const header = request.headers.authorization;
    if (!header) {
      request.authError = new ServiceError("API_KEY_MISSING", { param: "Authorization" });
      return;
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) {
      request.authError = new ServiceError("API_KEY_INVALID", {
        param: "Authorization",
        message: "The Authorization header must be `Bearer <secret key>`.",
      });
      return;
    }
    try {
      request.principal = await authenticateSecretKey(deps, match[1], organizationOf, keys);
      // A project the operator disabled: its keys are valid, and refused (decision 0019).
      request.authError = disabledProjectError(request.principal.standing);
    } catch (error) {
      // The store not answering is 503 SERVICE_UNAVAILABLE, anything else unexpected a 500.
      request.authError = fromUnexpected(error);
      if (request.authError.code === "API_KEY_INVALID") {
        request.authError = new ServiceError("API_KEY_INVALID", { param: "Authorization" });
      }
    }
  });

  app.addHook("preParsing", async (request: FastifyRequest) => {
    if (request.authError) throw request.authError;
    if (request.routeOptions.config.write && request.principal?.readOnly) {
      throw new ServiceError("API_KEY_READ_ONLY");
    }
  });
}
