import assert from "node:assert/strict";
import { sealingFor } from "../../src/platform/sealing.ts";
import { test } from "node:test";
import { pino } from "pino";
import { buildApp } from "../../src/app.ts";
import { ActivityStamps } from "../../src/store/activity-stamps.ts";
import { loadConfig } from "../../src/config.ts";
import { FakeClock } from "../../src/platform/clock.ts";
import { newInstanceId } from "../../src/platform/ids.ts";
import { Metrics } from "../../src/platform/metrics.ts";
import { buildTestApp, openTestStore } from "../../src/testing/harness.ts";

/**
 * Liveness and readiness probes (README "Operating it"): liveness never touches the store,
 * readiness does and answers 503 SERVICE_UNAVAILABLE in the spec's error shape when the store is down.
 */
test("liveness and readiness while the store is up, and once it is down", async (t) => {
  // The test closes the store itself, so it builds the app on a store it owns.
  const { store, drop } = await openTestStore();
  const deps = {
    config: loadConfig({ LOG_LEVEL: "silent" }),
    store,
    db: store.db,
    clock: new FakeClock(),
    logger: pino({ level: "silent" }),
    instanceId: newInstanceId(),
    metrics: new Metrics(),
    activity: new ActivityStamps(),
    sealing: sealingFor({}),
  };
  const app = await buildApp(deps);
  t.after(async () => {
    await app.close();
    await drop();
  });

  const live = await app.inject({ method: "GET", url: "/livez" });
  assert.equal(live.statusCode, 200);
  assert.deepEqual(live.json(), { status: "ok" });
  const ready = await app.inject({ method: "GET", url: "/readyz" });
  assert.equal(ready.statusCode, 200, ready.body);
  assert.deepEqual(ready.json(), { status: "ok", store: deps.store.engine });

  await deps.store.close();

  const stillLive = await app.inject({ method: "GET", url: "/livez" });
  assert.equal(stillLive.statusCode, 200, "liveness does not depend on the store");
  const down = await app.inject({ method: "GET", url: "/readyz" });
  assert.equal(down.statusCode, 503, down.body);
  const body = down.json<{ error: Record<string, unknown> }>();
  assert.equal(body.error.code, "SERVICE_UNAVAILABLE");
  assert.equal(body.error.type, "INTERNAL_ERROR");
  assert.equal(body.error.retryable, true);
  assert.equal(body.error.requestId, down.headers["svc-request-id"]);
  assert.equal(down.headers["svc-should-retry"], "true");
  assert.ok(Number(down.headers["retry-after"]) > 0);
});

test("probes need no key and are not rate limited", async (t) => {
  const { app } = await buildTestApp(t, { config: { RATE_LIMIT_MAX: "2" } });
  for (let i = 0; i < 5; i++) {
    assert.equal((await app.inject({ method: "GET", url: "/livez" })).statusCode, 200);
    assert.equal((await app.inject({ method: "GET", url: "/readyz" })).statusCode, 200);
  }
});
