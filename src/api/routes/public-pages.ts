import type { FastifyInstance } from "fastify";
import type { Deps } from "../../deps.ts";
import { buildOpenApi } from "../openapi.ts";
import { docsPage } from "../docs-page.ts";
import { apiRoutes } from "./index.ts";
import { registerSetupPages } from "./setup-pages.ts";

/** Unauthenticated pages: OpenAPI, docs, the hosted setup flow. Not rate limited per project. */
export async function registerPublicPages(app: FastifyInstance, deps: Deps): Promise<void> {
  const document = buildOpenApi(apiRoutes, deps.config.publicUrl);
  app.get("/openapi.json", { config: { rateLimit: false } }, async () => document);
  app.get("/docs", { config: { rateLimit: false } }, async (_request, reply) =>
    reply.type("text/html; charset=utf-8").send(docsPage(document)),
  );
  registerSetupPages(app, deps);
}
