import { createHash } from "node:crypto";
import { catalogue } from "../errors/catalogue.ts";

/** The page's one stylesheet, inline and allowed by its digest: the page runs no script at all. */
const STYLE = `body{font-family:system-ui,sans-serif;max-width:980px;margin:2rem auto;padding:0 1rem;color:#1d2330}
code,pre{font-family:ui-monospace,monospace}pre{background:#f4f6f8;padding:.75rem;overflow:auto}.op{border-top:1px solid #e3e6ea;padding:.5rem 0}
table{border-collapse:collapse;width:100%}td{border-top:1px solid #e3e6ea;padding:.4rem;vertical-align:top;font-size:.9rem}`;

/** The reference page's Content Security Policy: no script, no fetch, its own style only, never framed. */
export const DOCS_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** A self-contained reference page rendered from the OpenAPI document and the error catalogue. */
const escape = (value: string): string =>
  value.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );

export function docsPage(document: Record<string, unknown>): string {
  const paths = document.paths as Record<
    string,
    Record<string, { operationId: string; summary: string; requestBody?: unknown; parameters?: unknown[] }>
  >;
  const operations = Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(
      ([method, op]) => `<section class="op"><h3><code>${method.toUpperCase()} ${escape(path)}</code></h3>
<p>${escape(op.summary)} <small>(<code>${escape(op.operationId)}</code>)</small></p>
${op.requestBody ? `<details><summary>Request body schema</summary><pre>${escape(JSON.stringify(op.requestBody, null, 2))}</pre></details>` : ""}
${op.parameters && op.parameters.length ? `<details><summary>Parameters</summary><pre>${escape(JSON.stringify(op.parameters, null, 2))}</pre></details>` : ""}
</section>`,
    ),
  );
  const errors = Object.entries(catalogue).map(
    ([code, entry]) =>
      `<tr id="${code.toLowerCase().replaceAll("_", "-")}"><td><code>${code}</code></td><td>${entry.httpStatus ?? "—"}</td><td>${entry.type}</td><td>${entry.retry}</td><td>${escape(entry.message)}<ul>${entry.fixes
        .map((f) => `<li><b>${f.actor}</b>: ${escape(f.action)}</li>`)
        .join("")}</ul></td></tr>`,
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>ledger-bridge API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${STYLE}</style></head>
<body><h1>ledger-bridge API reference</h1><p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).
Authenticate with <code>Authorization: Bearer sk_...</code>.</p>
<h2>Operations</h2>${operations.join("\n")}
<h2 id="errors">Errors</h2><table><thead><tr><td>Code</td><td>HTTP</td><td>Type</td><td>Retry rule</td><td>Meaning and fixes</td></tr></thead><tbody>${errors.join("\n")}</tbody></table>
</body></html>`;
}
