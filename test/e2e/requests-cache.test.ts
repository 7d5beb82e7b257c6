import assert from "node:assert/strict";
import { test } from "node:test";
import { settledRequestsOf } from "../../src/requests/settled-cache.ts";
import { REQUESTS_GONE_CHANNEL } from "../../src/store/requests.ts";
import { openStore } from "../../src/store/database.ts";
import { openTestStore } from "../../src/testing/harness.ts";
import { startSystem } from "../../src/testing/system.ts";
import { READ, bringOnline, passthroughPath, stopConnector } from "./helpers.ts";

/**
 * The cache of settled Requests (decision 0027) on two instances of one store: a final Request read
 * through instance A is answered from A's memory, and it is gone there as soon as its end user is
 * deleted through instance B (on PostgreSQL B has a store of its own, so A hears of it only by
 * NOTIFY).
 */
test("a settled Request read through one instance is gone there once its end user is deleted through another", async (t) => {
  const opened = await openTestStore();
  // On PostgreSQL, B has a store of its own (pool and LISTEN connection), as another process
  // would: A hears of the deletion only through NOTIFY. PGlite serves one process: both share it.
  const storeB = opened.url ? await openStore({ databaseUrl: opened.url }) : opened.store;
  const config = { RATE_LIMIT_MAX: "1000000" };
  const a = await startSystem(null, { store: opened.store, config });
  const b = await startSystem(null, { store: storeB, config });
  t.after(async () => {
    await b.close();
    await a.close();
    if (storeB !== opened.store) await storeB.close();
    await opened.store.close();
    await opened.drop();
  });
  const eu = await a.connectEndUser({ companyName: "Cache Books" });
  await bringOnline(a, eu);
  const call = await a.call("POST", passthroughPath(eu.endUserId), { body: READ });
  assert.equal(call.status, 200, await call.clone().text());
  const requestId = call.headers.get("svc-request-id") ?? "";
  await stopConnector(a, eu);

  const cache = settledRequestsOf(a.deps);
  const first = await a.call("GET", `/v1/requests/${requestId}`);
  assert.equal(first.status, 200);
  const firstBody = await first.text();
  const hits = cache.hits;
  const second = await a.call("GET", `/v1/requests/${requestId}`);
  assert.equal(second.status, 200);
  assert.equal(second.headers.get("content-type"), "application/json; charset=utf-8");
  assert.equal(await second.text(), firstBody, "the same body");
  assert.equal(cache.hits, hits + 1, "answered from memory");
  assert.equal(
    (await a.call("GET", `/v1/requests/${requestId}`, { key: a.project.keys.secretTest })).status,
    404,
    "not to the project's other mode",
  );

  const heard = new AbortController();
  const heardOnA = a.deps.store.notifier.wait(REQUESTS_GONE_CHANNEL, heard.signal);
  const guard = setTimeout(() => heard.abort(), 30_000);
  const deleted = await b.call("DELETE", `/v1/end-users/${eu.endUserId}`, { key: a.project.keys.secretLive });
  assert.equal(deleted.status, 200, await deleted.clone().text());
  await heardOnA;
  clearTimeout(guard);
  assert.equal(heard.signal.aborted, false, "A heard of the deletion made through B");
  const after = await a.call("GET", `/v1/requests/${requestId}`);
  assert.equal(after.status, 404, "the deleted Request is not served from memory");
});
