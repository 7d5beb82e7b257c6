import { readFileSync } from "node:fs";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Deps } from "../../deps.ts";
import { findEndUser } from "../../store/end-users.ts";
import { findProject } from "../../store/projects.ts";
import { ServiceError } from "../../errors/service-error.ts";
import { FailureThrottle } from "../../platform/failure-throttle.ts";
import { sendError } from "../errors.ts";
import { cancelSetup, loadSetup, qwcForSetup, type SetupState } from "../../tenancy/auth-sessions.ts";
import {
  HOSTED_PAGE_ASSETS,
  renderProblemPage,
  renderSetupPage,
  type ProblemPageView,
  type SetupUrls,
} from "../setup-page-html.ts";

/**
 * The hosted setup flow behind `authFlowUrl` (spec: Auth session, Authentication 6; architecture §5):
 *
 *   GET  /setup/:id          the step-by-step page (HTML; 404 invalid, 410 expired/superseded)
 *   GET  /setup/:id/qwc      the `.qwc` file, only while the session is waiting
 *   GET  /setup/:id/status   JSON for the page's polling; completes the session on the first check-in
 *   POST /setup/:id/cancel   cancels; JSON, or 303 for a plain form post
 *   POST /setup/:id/simulate simulator mode only (SIMULATOR=on; absent otherwise): attaches a
 *                            simulated Web Connector and company file instead of the end user's;
 *                            JSON, or 303 back to the page for a plain form post
 *   GET  /setup/assets/…     the pages' stylesheet and the setup page's script (static files)
 *
 * All take `?clientSecret=` (the credential; checked in constant time by the tenancy layer), never an
 * API key, and are not rate limited. The query string is never logged: the routes log at `warn` and
 * a redacted access line is written instead. A body is at most 1 KiB (none is read), and an address
 * whose links were wrong `FAILED_ATTEMPTS_PER_ADDRESS` times in a window is turned away with 429
 * until the window ends (decision 0031): guessing links costs a store read a try.
 */
export const SETUP_POLL_MS = 1500;

/** The largest body a setup route takes (a form post's is empty). */
export const SETUP_BODY_LIMIT_BYTES = 1024;
/**
 * The hosted pages' Content Security Policy (decision 0033): scripts and styles from the service's
 * own files only — no `'unsafe-inline'`, so markup injected into a page could not run a script even
 * if escaping failed — and fetches to the service only. Framing stays open (`frame-ancestors *`):
 * apps embed the setup link in an iframe. `form-action` is left out on purpose: the no-JavaScript
 * Cancel form is answered with a 303 to the app's redirect URL, which a `form-action` list would
 * block.
 */
export const HOSTED_PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors *",
].join("; ");

/** The files behind {@link HOSTED_PAGE_ASSETS}, copied into `dist/` by the build beside this module's. */
const ASSET_FILES = [
  {
    url: HOSTED_PAGE_ASSETS.stylesheet,
    body: readFileSync(new URL("../setup/pages.css", import.meta.url)),
    type: "text/css; charset=utf-8",
  },
  {
    url: HOSTED_PAGE_ASSETS.setupScript,
    body: readFileSync(new URL("../setup/setup.js", import.meta.url)),
    type: "text/javascript; charset=utf-8",
  },
] as const;

const FALLBACK_APP_NAME = "the app that sent you this link";

interface SetupRoute {
  Params: { id: string };
  Querystring: { clientSecret?: string | string[] };
}

type SetupRequest = FastifyRequest<SetupRoute>;

export function registerSetupPages(app: FastifyInstance, deps: Deps): void {
  const guesses = new FailureThrottle(
    deps.clock,
    deps.config.FAILED_ATTEMPTS_PER_ADDRESS,
    deps.config.FAILED_ATTEMPTS_WINDOW_MS,
  );
  /** The setup's state; a link whose ID or secret is wrong counts against the caller's address. */
  const counted = <S extends SetupState>(request: FastifyRequest, state: S): S => {
    if (state.state === "invalid") {
      guesses.failed(request.ip);
      deps.metrics.failedAttempts.inc({ reason: "setup_link" });
    }
    return state;
  };
  for (const asset of ASSET_FILES) {
    app.get(asset.url, { config: { rateLimit: false } }, async (_request, reply) =>
      reply
        .header("X-Content-Type-Options", "nosniff")
        .header("Cache-Control", "no-store")
        .type(asset.type)
        .send(asset.body),
    );
  }
  void app.register(async (scope) => {
    scope.addHook("onRequest", async (request, reply) => {
      const waitMs = guesses.blockedForMs(request.ip);
      if (waitMs === 0) return;
      deps.metrics.failedAttempts.inc({ reason: "throttled" });
      void reply.header("Connection", "close");
      return sendError(
        deps,
        request,
        reply,
        new ServiceError("RATE_LIMITED", {
          message: "Too many setup links that were not valid came from this address; try again later.",
          retryAfterSeconds: Math.ceil(waitMs / 1000),
          details: { retryAfterSeconds: Math.ceil(waitMs / 1000) },
        }),
      );
    });
    // A no-JavaScript "Cancel setup" is a plain form post; its (empty) body is ignored.
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: 1024 },
      (_request, _body, done) => done(null, {}),
    );
    scope.addHook("onSend", async (_request, reply, payload) => {
      void reply.header("Cache-Control", "no-store");
      void reply.header("Referrer-Policy", "no-referrer");
      void reply.header("X-Content-Type-Options", "nosniff");
      void reply.header("X-Robots-Tag", "noindex, nofollow");
      return payload;
    });
    scope.addHook("onResponse", async (request, reply) => {
      // The page polls the status route every 1.5 s: those lines are debug-level.
      const level = request.routeOptions.url === "/setup/:id/status" ? "debug" : "info";
      deps.logger[level](
        {
          reqId: request.id,
          method: request.method,
          route: request.routeOptions.url,
          statusCode: reply.statusCode,
          responseTime: Math.round(reply.elapsedTime),
        },
        "setup page request",
      );
    });

    const options = {
      config: { rateLimit: false },
      logLevel: "warn",
      bodyLimit: SETUP_BODY_LIMIT_BYTES,
    } as const;

    scope.get<SetupRoute>("/setup/:id", options, async (request, reply) => {
      const secret = clientSecretOf(request);
      const state = counted(request, await loadSetup(deps, request.params.id, secret));
      if (state.state === "invalid" || state.state === "expired" || state.state === "superseded") {
        return sendProblem(reply, state.state, await appNameOf(deps, state));
      }
      const appName = await appNameOf(deps, state);
      const companyLabel = await companyLabelOf(deps, state);
      const urls = setupUrls(request.params.id, secret);
      const html = renderSetupPage(
        {
          state:
            state.state === "waiting" ? "waiting" : state.state === "completed" ? "completed" : "canceled",
          appName,
          companyLabel,
          companyName: state.state === "completed" ? state.companyName : null,
          password: state.state === "waiting" ? state.password : null,
          connectionStatus: state.state === "waiting" ? state.connectionStatus : null,
          redirectTo: state.state === "completed" || state.state === "canceled" ? state.redirectTo : null,
          qwcFileName: qwcFileName(companyLabel).ascii,
          urls,
          simulator: deps.simulatedConnectors !== undefined,
        },
        request.params.id,
        SETUP_POLL_MS,
      );
      return sendHtml(reply, 200, html);
    });

    scope.get<SetupRoute>("/setup/:id/qwc", options, async (request, reply) => {
      const state = counted(request, await loadSetup(deps, request.params.id, clientSecretOf(request)));
      if (state.state !== "waiting") {
        if (state.state === "completed" || state.state === "canceled") {
          return sendHtml(
            reply,
            410,
            renderProblemPage({
              title: "Setup finished",
              heading: state.state === "completed" ? "This setup is already complete" : "Setup canceled",
              message: "The connection file is only available while setup is in progress.",
              hint: `Ask ${await appNameOf(deps, state)} for a new link if you need to set up again.`,
            }),
          );
        }
        return sendProblem(reply, state.state, await appNameOf(deps, state));
      }
      const label = await companyLabelOf(deps, state);
      const name = qwcFileName(label);
      return reply
        .code(200)
        .type("application/xml; charset=utf-8")
        .header(
          "Content-Disposition",
          `attachment; filename="${name.ascii}"; filename*=UTF-8''${encodeRfc5987(name.unicode)}`,
        )
        .send(qwcForSetup(deps, state.connection, label));
    });

    scope.get<SetupRoute>("/setup/:id/status", options, async (request, reply) => {
      const state = counted(request, await loadSetup(deps, request.params.id, clientSecretOf(request)));
      return reply.code(jsonStatusCode(state)).send({
        state: state.state,
        connectionStatus: state.state === "waiting" ? state.connectionStatus : null,
        companyName:
          state.state === "completed" ? (state.companyName ?? (await companyLabelOf(deps, state))) : null,
        redirectTo: state.state === "completed" || state.state === "canceled" ? state.redirectTo : null,
      });
    });

    scope.post<SetupRoute>("/setup/:id/cancel", options, async (request, reply) => {
      const secret = clientSecretOf(request);
      const state = counted(request, await cancelSetup(deps, request.params.id, secret));
      const redirectTo = state.state === "completed" || state.state === "canceled" ? state.redirectTo : null;
      if (isFormPost(request)) {
        if (state.state === "invalid") {
          return sendProblem(reply, "invalid", FALLBACK_APP_NAME);
        }
        return reply
          .code(303)
          .header("Location", redirectTo ?? setupUrls(request.params.id, secret).page)
          .send();
      }
      return reply.code(jsonStatusCode(state)).send({ state: state.state, redirectTo });
    });

    registerSimulateRoute(scope, deps, options, counted);
  });
}

/**
 * Simulator mode: the page offers "Use a simulated company file". The service attaches its own
 * simulated connector (with the password this link holds) and the first check-in completes the
 * session as a real one would; the page's polling then redirects as usual.
 */
function registerSimulateRoute(
  scope: FastifyInstance,
  deps: Deps,
  options: { logLevel: "warn"; bodyLimit: number },
  counted: <S extends SetupState>(request: FastifyRequest, state: S) => S,
): void {
  const simulated = deps.simulatedConnectors;
  if (!simulated) return;
  scope.post<SetupRoute>(
    "/setup/:id/simulate",
    { ...options, config: { rateLimit: false } },
    async (request, reply) => {
      const secret = clientSecretOf(request);
      const state = counted(request, await loadSetup(deps, request.params.id, secret));
      if (state.state === "waiting") {
        await simulated.attach({
          connection: state.connection,
          password: state.password,
          companyName: await companyLabelOf(deps, state),
        });
      }
      const after = state.state === "waiting" ? await loadSetup(deps, request.params.id, secret) : state;
      if (isFormPost(request)) {
        if (after.state === "invalid") return sendProblem(reply, "invalid", FALLBACK_APP_NAME);
        return reply.code(303).header("Location", setupUrls(request.params.id, secret).page).send();
      }
      return reply.code(jsonStatusCode(after)).send({
        state: after.state,
        connectionStatus: after.state === "waiting" ? after.connectionStatus : null,
        redirectTo: after.state === "completed" || after.state === "canceled" ? after.redirectTo : null,
      });
    },
  );
}

function clientSecretOf(request: SetupRequest): string {
  const value = request.query.clientSecret;
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === "string" ? first : "";
}

function isFormPost(request: FastifyRequest): boolean {
  return (request.headers["content-type"] ?? "")
    .toLowerCase()
    .startsWith("application/x-www-form-urlencoded");
}

function setupUrls(id: string, clientSecret: string): SetupUrls {
  const base = `/setup/${encodeURIComponent(id)}`;
  const query = `?clientSecret=${encodeURIComponent(clientSecret)}`;
  return {
    page: `${base}${query}`,
    qwc: `${base}/qwc${query}`,
    status: `${base}/status${query}`,
    cancel: `${base}/cancel${query}`,
    simulate: `${base}/simulate${query}`,
  };
}

function jsonStatusCode(state: SetupState): number {
  if (state.state === "invalid") return 404;
  if (state.state === "expired" || state.state === "superseded") return 410;
  return 200;
}

async function appNameOf(deps: Deps, state: SetupState): Promise<string> {
  if (state.state === "invalid") return FALLBACK_APP_NAME;
  const project = await findProject(deps.db, state.session.project_id);
  const name = project?.name.trim();
  return name ? name : FALLBACK_APP_NAME;
}

async function companyLabelOf(deps: Deps, state: Exclude<SetupState, { state: "invalid" }>): Promise<string> {
  const endUser = await findEndUser(
    deps.db,
    { projectId: state.session.project_id, mode: state.session.is_test ? "test" : "live" },
    state.session.end_user_id,
  );
  const name = endUser?.companyName.trim();
  return name ? name : "your company";
}

function sendProblem(
  reply: FastifyReply,
  state: "invalid" | "expired" | "superseded",
  appName: string,
): FastifyReply {
  const views: Record<typeof state, ProblemPageView> = {
    invalid: {
      title: "Setup link not valid",
      heading: "This setup link is not valid",
      message: "Check that you opened the whole link.",
      hint: `Ask ${appName} for a new link.`,
    },
    expired: {
      title: "Setup link expired",
      heading: "This setup link has expired",
      message: `Ask ${appName} for a new link.`,
      hint: "Setup links work for a limited time. A new link starts a fresh setup.",
    },
    superseded: {
      title: "Newer setup link created",
      heading: "A newer setup link was created",
      message: "This link was replaced by a newer one, and its password no longer works.",
      hint: `Use the newest link from ${appName}, or ask for a new one.`,
    },
  };
  return sendHtml(reply, state === "invalid" ? 404 : 410, renderProblemPage(views[state]));
}

function sendHtml(reply: FastifyReply, code: number, html: string): FastifyReply {
  return reply
    .code(code)
    .type("text/html; charset=utf-8")
    .header("Content-Security-Policy", HOSTED_PAGE_CSP)
    .send(html);
}

/**
 * A file name that is safe on Windows and in a header: ASCII letters, digits, space and `._()-`, no
 * reserved device names, at most 60 characters before `.qwc`. `unicode` keeps non-ASCII letters for
 * `filename*`.
 */
export function qwcFileName(label: string): { ascii: string; unicode: string } {
  const tidy = (value: string): string => {
    const base = value
      .replace(/\s+/g, " ")
      .replace(/^[\s.-]+|[\s.-]+$/g, "")
      .slice(0, 60)
      .trim();
    if (!base || /^(con|prn|aux|nul|com\d|lpt\d)$/i.test(base)) return "ledger-bridge";
    return base;
  };
  const ascii = tidy(
    label
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .replace(/[^A-Za-z0-9 ._()-]+/g, "-")
      .replace(/-{2,}/g, "-"),
  );
  // eslint-disable-next-line no-control-regex
  const unicode = tidy(label.normalize("NFC").replace(/[\u0000-\u001f\u007f<>:"/\\|?*]+/g, "-"));
  return { ascii: `${ascii}.qwc`, unicode: `${unicode}.qwc` };
}

function encodeRfc5987(value: string): string {
  return encodeURIComponent(value).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}
