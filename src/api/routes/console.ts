import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";

/**
 * The operator console (decision 0026): three static files written by us, served at `/console`. The
 * page signs in with a project's secret key held in the tab's memory and reads everything through
 * the public `/v1` API with `Authorization: Bearer`, so it has no session, no cookie, no CSRF surface
 * and no private route: its isolation is the API's. The build copies the files beside the compiled
 * routes (scripts/build.mjs copies every non-TypeScript file under `src/`).
 */
const ASSETS = {
  "/console": { file: "index.html", type: "text/html; charset=utf-8" },
  "/console/console.js": { file: "console.js", type: "text/javascript; charset=utf-8" },
  "/console/console.css": { file: "console.css", type: "text/css; charset=utf-8" },
} as const;

/** Only our own files, no inline script or style, never framed, nothing sent anywhere but here. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export function registerConsole(app: FastifyInstance): void {
  // `/console/` as typed by hand: the page lives at `/console` (its files are under `/console/`).
  app.get("/console/", { config: { rateLimit: false } }, async (_request, reply) =>
    reply.redirect("/console", 301),
  );
  for (const [url, asset] of Object.entries(ASSETS)) {
    const body = readFileSync(new URL(`../console/${asset.file}`, import.meta.url));
    app.get(url, { config: { rateLimit: false } }, async (_request, reply) =>
      reply
        .header("Content-Security-Policy", CONSOLE_CSP)
        .header("X-Frame-Options", "DENY")
        .header("X-Content-Type-Options", "nosniff")
        .header("Referrer-Policy", "no-referrer")
        .header("Cross-Origin-Opener-Policy", "same-origin")
        .header("Cache-Control", "no-store")
        .type(asset.type)
        .send(body),
    );
  }
}
