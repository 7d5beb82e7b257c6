import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem } from "../../src/testing/system.ts";
import { json } from "./helpers.ts";

/**
 * The `AppSupport` URL of the `.qwc` file an end user downloads must answer: the Web Connector links
 * to it from the application's row. Fetched over loopback exactly as written in the file.
 */
test("the .qwc file's AppSupport URL serves the plain HTML support page", async (t) => {
  const sys = await startSystem(t);
  const endUser = await json<{ id: string }>(
    await sys.call("POST", "/v1/end-users", { body: { companyName: "Support Co", sourceId: "support" } }),
  );
  const session = await json<{ id: string; clientSecret: string }>(
    await sys.call("POST", "/v1/auth-sessions", {
      body: { publishableKey: sys.project.keys.publishableLive, endUserId: endUser.id },
    }),
  );
  const qwcResponse = await fetch(
    `${sys.url}/setup/${session.id}/qwc?clientSecret=${encodeURIComponent(session.clientSecret)}`,
  );
  assert.equal(qwcResponse.status, 200);
  const qwc = await qwcResponse.text();
  const appSupport = /<AppSupport>([^<]+)<\/AppSupport>/.exec(qwc)?.[1];
  assert.ok(appSupport, `the .qwc file has an AppSupport URL: ${qwc}`);
  assert.equal(appSupport, `${sys.url}/support`);

  // No API key, no session: anyone the Web Connector shows the link to can open it.
  const page = await fetch(appSupport);
  const html = await page.text();
  assert.equal(page.status, 200, html);
  assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(page.headers.get("x-content-type-options"), "nosniff");
  // The hosted pages' CSP: no inline script or style anywhere (decision 0033).
  assert.match(page.headers.get("content-security-policy") ?? "", /script-src 'self'; style-src 'self'/);
  assert.doesNotMatch(page.headers.get("content-security-policy") ?? "", /unsafe-inline/);
  assert.doesNotMatch(html, /<style|style="/, "no inline style");
  assert.match(html, /^<!doctype html>/);
  assert.match(html, /<title>[^<]+<\/title>/);
  for (const topic of ["what-it-does", "check", "help"]) {
    assert.match(html, new RegExp(`<section class="step" id="${topic}">`), `section ${topic}`);
  }
  assert.match(html, /Web Connector/);
  assert.match(html, /the accounting application/);
  assert.match(html, /every minute/, "the check-in interval of the .qwc file (60 s by default)");
  assert.doesNotMatch(html, /<script/i, "a plain page: no script");
  assert.doesNotMatch(html, /https?:\/\//, "no external links or assets");
});

test("GET /support answers without an API key and is not rate limited", async (t) => {
  const sys = await startSystem(t, { config: { RATE_LIMIT_MAX: "1" } });
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${sys.url}/support`);
    assert.equal(res.status, 200, await res.text());
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  }
  const head = await fetch(`${sys.url}/support`, { method: "HEAD" });
  assert.equal(head.status, 200);
});
