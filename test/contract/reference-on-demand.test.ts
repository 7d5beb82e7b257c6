import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { OPENAPI_PATH } from "../../scripts/gen-openapi.ts";
import { buildTestApp } from "../../src/testing/harness.ts";

/**
 * The OpenAPI document and the reference page are built on first use, not at start (decision 0024):
 * whichever is asked for first, both answer as a document built at start did.
 */
test("/docs asked for before /openapi.json: both served, the document as committed, the page kept", async (t) => {
  const h = await buildTestApp(t);
  const page = await h.app.inject({ method: "GET", url: "/docs/errors" });
  assert.equal(page.statusCode, 200, page.body.slice(0, 500));
  assert.match(page.body, /^<!doctype html>/i);
  const document = await h.app.inject({ method: "GET", url: "/openapi.json" });
  assert.equal(document.statusCode, 200);
  const committed = JSON.parse(readFileSync(OPENAPI_PATH, "utf8")) as { paths: unknown };
  assert.deepEqual(document.json<{ paths: unknown }>().paths, committed.paths);
  const again = await h.app.inject({ method: "GET", url: "/docs" });
  assert.equal(again.body, page.body);
});
