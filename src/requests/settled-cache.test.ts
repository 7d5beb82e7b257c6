import assert from "node:assert/strict";
import { test } from "node:test";
import { loadConfig } from "../config.ts";
import { FakeClock } from "../platform/clock.ts";
import type { Store } from "../store/database.ts";
import { LocalNotifier } from "../store/notifier.ts";
import type { RequestRow } from "../store/requests.ts";
import { REQUESTS_GONE_CHANNEL } from "../store/requests.ts";
import { SettledRequests } from "./settled-cache.ts";

const DAY_MS = 24 * 3600 * 1000;
const TENANT = { projectId: "proj_1", mode: "live" as const };

function cacheWith() {
  const clock = new FakeClock();
  const notifier = new LocalNotifier();
  let delivering = true;
  Object.defineProperty(notifier, "delivering", { get: () => delivering });
  const cache = new SettledRequests({
    clock,
    config: loadConfig({ LOG_LEVEL: "silent", REQUEST_RETENTION_MS: String(7 * DAY_MS) }),
    store: { notifier } as unknown as Store,
  });
  return { clock, notifier, cache, setDelivering: (value: boolean) => (delivering = value) };
}

function row(clock: FakeClock, status: string): RequestRow {
  return {
    id: "req_1",
    project_id: TENANT.projectId,
    is_test: false,
    status,
    completed_at: status === "sent" ? null : new Date(clock.now()),
  } as unknown as RequestRow;
}

test("a final Request is kept; one that may still change is not", () => {
  const { clock, cache } = cacheWith();
  for (const status of ["sent", "outcome_unknown", "queued"]) {
    cache.set(row(clock, status), "{}", cache.generation);
    assert.equal(cache.get(TENANT, "req_1"), null, status);
  }
  for (const status of ["succeeded", "failed", "canceled"]) {
    cache.set(row(clock, status), `{"status":"${status}"}`, cache.generation);
    assert.equal(cache.get(TENANT, "req_1"), `{"status":"${status}"}`, status);
  }
  assert.equal(cache.get({ ...TENANT, mode: "test" }, "req_1"), null, "another mode's Request");
  assert.equal(cache.get({ projectId: "proj_2", mode: "live" }, "req_1"), null, "another project's");
});

test("a deletion heard empties the cache, and a read from before it is not kept", async () => {
  const { clock, notifier, cache } = cacheWith();
  cache.set(row(clock, "succeeded"), "{}", cache.generation);
  const readBefore = cache.generation;
  await notifier.notify(REQUESTS_GONE_CHANNEL);
  assert.equal(cache.get(TENANT, "req_1"), null, "emptied");
  cache.set(row(clock, "succeeded"), "{}", readBefore);
  assert.equal(cache.get(TENANT, "req_1"), null, "a read from before the deletion is not kept");
});

test("nothing is served or kept while wake-ups may be lost", () => {
  const { clock, cache, setDelivering } = cacheWith();
  cache.set(row(clock, "succeeded"), "{}", cache.generation);
  setDelivering(false);
  assert.equal(cache.get(TENANT, "req_1"), null);
  cache.clear();
  cache.set(row(clock, "succeeded"), "{}", cache.generation);
  setDelivering(true);
  assert.equal(cache.get(TENANT, "req_1"), null, "not kept while not delivering");
});

test("a Request near the end of its retention is read from the store", async () => {
  const { clock, cache } = cacheWith();
  cache.set(row(clock, "succeeded"), "{}", cache.generation);
  await clock.advance(6 * DAY_MS);
  assert.equal(cache.get(TENANT, "req_1"), "{}");
  await clock.advance(DAY_MS - 3600 * 1000);
  assert.equal(cache.get(TENANT, "req_1"), null, "the sweep of another clock may delete it now");
});
