import assert from "node:assert/strict";
import { test } from "node:test";
import { loadConfig } from "../config.ts";
import { FakeClock } from "../platform/clock.ts";
import { LocalNotifier } from "../store/notifier.ts";
import type { Store } from "../store/database.ts";
import { API_KEYS_CHANNEL, ApiKeyCache } from "./api-key-cache.ts";

const KEY = {
  id: "key_1",
  projectId: "proj_1",
  kind: "secret" as const,
  mode: "live" as const,
  readOnly: false,
  hint: "abcd",
  createdAt: new Date(0),
  revokedAt: null,
  hash: "digest-1",
  standing: { monthlyRequestQuota: null, paymentFailedAt: null, disabledAt: null, disabledReason: null },
};

function cacheWith(config: Record<string, string> = {}) {
  const clock = new FakeClock();
  const notifier = new LocalNotifier();
  const cache = new ApiKeyCache({
    clock,
    config: loadConfig({ LOG_LEVEL: "silent", ...config }),
    store: { notifier } as unknown as Store,
  });
  return { clock, notifier, cache };
}

test("a key is kept for API_KEY_CACHE_MS on the service clock", async () => {
  const { clock, cache } = cacheWith({ API_KEY_CACHE_MS: "2000" });
  cache.set(KEY, cache.generation);
  assert.equal(cache.get(KEY.hash), KEY);
  await clock.advance(1999);
  assert.equal(cache.get(KEY.hash), KEY);
  await clock.advance(1);
  assert.equal(cache.get(KEY.hash), null);
});

test("a revocation heard empties the cache, and a lookup read before it is not kept", async () => {
  const { notifier, cache } = cacheWith();
  cache.set(KEY, cache.generation);
  const readBefore = cache.generation;
  await notifier.notify(API_KEYS_CHANNEL);
  assert.equal(cache.get(KEY.hash), null, "emptied");
  // A lookup that read the store before the revocation committed ends after it: not kept.
  cache.set(KEY, readBefore);
  assert.equal(cache.get(KEY.hash), null, "a stale read is not cached");
  cache.set(KEY, cache.generation);
  assert.equal(cache.get(KEY.hash), KEY);
  cache.close();
  assert.equal(notifier.waiterCount, 0, "closing stops listening");
});

test("API_KEY_CACHE_MS=0 keeps nothing", () => {
  const { cache } = cacheWith({ API_KEY_CACHE_MS: "0" });
  cache.set(KEY, cache.generation);
  assert.equal(cache.get(KEY.hash), null);
});
