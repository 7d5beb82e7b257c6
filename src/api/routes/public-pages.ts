import type { FastifyInstance } from "fastify";
import type { Deps } from "../../deps.ts";
import { buildOpenApi } from "../openapi.ts";
import { DOCS_PAGE_CSP, docsPage } from "../docs-page.ts";
import { renderSupportPage } from "../support-page-html.ts";
import { apiRoutes } from "./index.ts";
import { registerConsole } from "./console.ts";
import { registerProbes } from "./probes.ts";
import { HOSTED_PAGE_CSP, registerSetupPages } from "./setup-pages.ts";

/** Unauthenticated pages: OpenAPI, docs, support, probes, the hosted setup flow, the operator console. Not rate limited per project. */
export async function registerPublicPages(app: FastifyInstance, deps: Deps): Promise<void> {
  registerProbes(app, deps);
  // Built on first use, not at start: the document and the routes' fragments it derives are some
  // 20 MB of heap that a service nobody reads the reference of never needs (decision 0024).
  let document: ReturnType<typeof buildOpenApi> | undefined;
  let page: string | undefined;
  const openApi = (): ReturnType<typeof buildOpenApi> =>
    (document ??= buildOpenApi(apiRoutes, deps.config.publicUrl));
  app.get("/openapi.json", { config: { rateLimit: false } }, async () => openApi());
  // `/docs/errors#<code>` is every error's `docsUrl` (errors/catalogue.ts): the same page, whose error
  // table rows carry those anchors.
  for (const url of ["/docs", "/docs/errors"]) {
    app.get(url, { config: { rateLimit: false } }, async (_request, reply) =>
      reply
        .type("text/html; charset=utf-8")
        .header("Content-Security-Policy", DOCS_PAGE_CSP)
        .header("X-Content-Type-Options", "nosniff")
        .send((page ??= docsPage(openApi()))),
    );
  }
  // `/support` is the `AppSupport` URL of every generated `.qwc` file (tenancy/qwc.ts): the Web
  // Connector links to it, so it must answer; it is static, for the end user.
  const support = renderSupportPage({ checkInSeconds: deps.config.CONNECTOR_CHECK_IN_SECONDS });
  app.get("/support", { config: { rateLimit: false } }, async (_request, reply) =>
    reply
      .header("X-Content-Type-Options", "nosniff")
      .header("Content-Security-Policy", HOSTED_PAGE_CSP)
      .type("text/html; charset=utf-8")
      .send(support),
  );
  registerSetupPages(app, deps);
  registerConsole(app);
}
