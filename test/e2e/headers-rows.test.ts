import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  READ,
  advanceUntil,
  bringOnline,
  countRequests,
  json,
  newestRequestIs,
  passthroughPath,
  stopConnector,
  type ErrorBody,
} from "./helpers.ts";

/**
 * The spec's headers on application operations, row by row (spec: Limits "Sync wait" and "Queue
 * TTL"; `Prefer: respond-async`), through HTTP with the service's clock driven by the test: every
 * refusal is 400 INVALID_PARAMETER naming the header and stores nothing; the defaults are measured
 * on the Request the wait produced. Also pins decisions 0038 (a passthrough's `Svc-End-User-Id`)
 * and 0040 (a queue TTL on a sync call).
 */

const TYPED_READ = "/v1/ledger-desktop/customers?limit=1";

interface Stored {
  createdAt: string;
  completedAt: string | null;
  durationMs: number | null;
  status: string;
  queueTtlExpiresAt: string | null;
  error: { code: string } | null;
}

async function assertRefused(sys: System, response: Response, param: string): Promise<void> {
  const text = await response.clone().text();
  assert.equal(response.status, 400, text);
  const { error } = await json<ErrorBody>(response);
  assert.equal(error.code, "INVALID_PARAMETER", text);
  assert.equal(error.type, "INVALID_REQUEST_ERROR", text);
  assert.equal(error.param, param, text);
  assert.equal(error.outcome, "not_applied", text);
  assert.match(error.requestId, /^call_/, "refused before any Request exists");
}

/** Sends `send()` and asserts it was refused naming `param`, with no Request stored. */
async function refusedWithNothingStored(sys: System, param: string, send: () => Promise<Response>) {
  const before = await countRequests(sys);
  await assertRefused(sys, await send(), param);
  assert.equal(await countRequests(sys), before, "a refused call stores no Request");
}

async function online(t: Parameters<typeof startSystem>[0]): Promise<{ sys: System; eu: ConnectedEndUser }> {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Headers Co" });
  await bringOnline(sys, eu);
  return { sys, eu };
}

test("Svc-Timeout-Seconds 0, 301 or not an integer → 400 INVALID_PARAMETER naming it; 1 and 300 are accepted", async (t) => {
  const { sys, eu } = await online(t);
  for (const value of ["0", "301", "1.5", "abc", "-1", "1e2", "", "90 s"]) {
    for (const send of [
      () =>
        sys.call("GET", TYPED_READ, { endUserId: eu.endUserId, headers: { "svc-timeout-seconds": value } }),
      () =>
        sys.call("POST", passthroughPath(eu.endUserId), {
          body: READ,
          headers: { "svc-timeout-seconds": value },
        }),
    ]) {
      await refusedWithNothingStored(sys, "Svc-Timeout-Seconds", send);
    }
  }
  for (const value of ["1", "300"]) {
    const res = await sys.call("GET", TYPED_READ, {
      endUserId: eu.endUserId,
      headers: { "svc-timeout-seconds": value },
    });
    assert.equal(res.status, 200, `${value}: ${await res.text()}`);
  }
});

/** A sync call to a connector that never checks in; resolves with its Request once it timed out. */
async function timedOutWithoutHeader(sys: System, path: string, init: Parameters<System["call"]>[2]) {
  const pending = sys.call(path.includes("passthrough") ? "POST" : "GET", path, init);
  await newestRequestIs(sys, "queued");
  const res = await advanceUntil(sys, pending, 1000, 200);
  const text = await res.clone().text();
  assert.equal(res.status, 504, text);
  const { error } = await json<ErrorBody>(res);
  assert.equal(error.code, "REQUEST_TIMEOUT_NOT_SENT", text);
  const stored = await json<Stored>(await sys.call("GET", `/v1/requests/${error.requestId}`));
  assert.equal(stored.status, "canceled");
  assert.ok(stored.durationMs !== null);
  return stored;
}

test("without Svc-Timeout-Seconds a sync call waits 90 s, the health check 60 s, then 504 REQUEST_TIMEOUT_NOT_SENT", async (t) => {
  const { sys, eu } = await online(t);
  await stopConnector(sys, eu);
  // The clock moves in steps of 1 s, so the wait ends within the step after its deadline.
  const call = await timedOutWithoutHeader(sys, passthroughPath(eu.endUserId), { body: READ });
  assert.ok(
    call.durationMs !== null && call.durationMs >= 90_000 && call.durationMs < 91_000,
    String(call.durationMs),
  );
  const health = await timedOutWithoutHeader(sys, "/v1/ledger-desktop/health-check", {
    endUserId: eu.endUserId,
  });
  assert.ok(
    health.durationMs !== null && health.durationMs >= 60_000 && health.durationMs < 61_000,
    String(health.durationMs),
  );
  // A header overrides the default, for the health check too.
  const short = await timedOutWithoutHeader(sys, "/v1/ledger-desktop/health-check", {
    endUserId: eu.endUserId,
    headers: { "svc-timeout-seconds": "7" },
  });
  assert.ok(
    short.durationMs !== null && short.durationMs >= 7_000 && short.durationMs < 8_000,
    String(short.durationMs),
  );
});

test("Prefer other than respond-async → 400 INVALID_PARAMETER naming Prefer; nothing is stored", async (t) => {
  const { sys, eu } = await online(t);
  for (const value of [
    "respond-sync",
    "return=minimal",
    "wait=10",
    "handling=strict",
    "",
    "respond-async-later",
  ]) {
    await refusedWithNothingStored(sys, "Prefer", () =>
      sys.call("POST", passthroughPath(eu.endUserId), { body: READ, headers: { prefer: value } }),
    );
    await refusedWithNothingStored(sys, "Prefer", () =>
      sys.call("GET", TYPED_READ, { endUserId: eu.endUserId, headers: { prefer: value } }),
    );
  }
  const accepted = await sys.call("GET", TYPED_READ, {
    endUserId: eu.endUserId,
    headers: { prefer: "respond-async" },
  });
  assert.equal(accepted.status, 202, await accepted.text());
});

test("Svc-Queue-Ttl-Seconds 9 and 86401 → 400 naming it; 10 and 86400 are kept; the default is 3600", async (t) => {
  const { sys, eu } = await online(t);
  await stopConnector(sys, eu); // nothing is sent, so every TTL stays on the Request as admitted
  const async = (ttl?: string) =>
    sys.call("POST", passthroughPath(eu.endUserId), {
      body: READ,
      headers: { prefer: "respond-async", ...(ttl === undefined ? {} : { "svc-queue-ttl-seconds": ttl }) },
    });
  for (const value of ["9", "86401", "0", "3600.5", "ten"]) {
    await refusedWithNothingStored(sys, "Svc-Queue-Ttl-Seconds", () => async(value));
  }
  for (const [value, seconds] of [
    ["10", 10],
    ["86400", 86_400],
    [undefined, 3600],
  ] as const) {
    const res = await async(value);
    assert.equal(res.status, 202, await res.clone().text());
    const request = await json<Stored>(res);
    assert.ok(request.queueTtlExpiresAt !== null, "an async Request has a queue TTL");
    assert.equal(
      Date.parse(request.queueTtlExpiresAt) - Date.parse(request.createdAt),
      seconds * 1000,
      `TTL ${String(value)}`,
    );
  }
});

test("decision 0040: Svc-Queue-Ttl-Seconds on a sync call → 400 INVALID_PARAMETER naming it, even in range; nothing is stored", async (t) => {
  const { sys, eu } = await online(t);
  for (const value of ["10", "600", "86400"]) {
    await refusedWithNothingStored(sys, "Svc-Queue-Ttl-Seconds", () =>
      sys.call("POST", passthroughPath(eu.endUserId), {
        body: READ,
        headers: { "svc-queue-ttl-seconds": value },
      }),
    );
    await refusedWithNothingStored(sys, "Svc-Queue-Ttl-Seconds", () =>
      sys.call("GET", TYPED_READ, { endUserId: eu.endUserId, headers: { "svc-queue-ttl-seconds": value } }),
    );
  }
});

test("decision 0038: a passthrough whose Svc-End-User-Id names another end user than the path → 400 naming the header; the same one is accepted", async (t) => {
  const { sys, eu } = await online(t);
  const other = await sys.connectEndUser({ companyName: "Other Co" });
  await refusedWithNothingStored(sys, "Svc-End-User-Id", () =>
    sys.call("POST", passthroughPath(eu.endUserId), { body: READ, endUserId: other.endUserId }),
  );
  // Not even an end user ID: still two different names for the call's end user.
  await refusedWithNothingStored(sys, "Svc-End-User-Id", () =>
    sys.call("POST", passthroughPath(eu.endUserId), { body: READ, headers: { "svc-end-user-id": "nobody" } }),
  );
  const same = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ, endUserId: eu.endUserId });
  assert.equal(same.status, 200, await same.text());
  const without = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
  assert.equal(without.status, 200, await without.text());
});
