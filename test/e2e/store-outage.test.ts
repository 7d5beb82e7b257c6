import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { SOAP_CONTENT_TYPE, soapAction, soapRequest } from "../../src/connector/soap.ts";
import { usageOf } from "../../src/store/usage.ts";
import { usagePeriod } from "../../src/tenancy/billing.ts";
import { moveConnection } from "../../src/connections/status.ts";
import { startSystem, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  eventually,
  json,
  passthroughPath,
  READ,
  type RequestResource,
  type ErrorBody,
} from "./helpers.ts";

/**
 * The store does not answer (decision 0019): every API call answers 503 SERVICE_UNAVAILABLE with
 * `Retry-After` and `Svc-Should-Retry: true` in the spec's error shape, never 500; nothing is left
 * half-done (no Request queued, no Idempotency-Key held), so the retry the error allows works once
 * the store is back; a Request stored before the store went away is never reported as "retry".
 *
 * The store is made to fail under the running service through the statement gate (every statement
 * of both engines passes it; what it throws is what the engine would throw), and on PostgreSQL also
 * for real: the test's database refuses connections and its backends are terminated, and a
 * statement outlives `statement_timeout`.
 */
const onPostgres = process.env.DATABASE_URL !== undefined;

/** What the engine itself throws when it is gone. */
function engineGone(): Error {
  return onPostgres
    ? Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" })
    : new Error("PGlite is closed");
}

/** A switchable outage: `fail` decides per statement; null lets everything through. */
class Outage {
  fail: ((sql: string) => boolean) | null = null;
  readonly gate = (sql: string): void => {
    if (this.fail?.(sql)) throw engineGone();
  };
  all(): void {
    this.fail = () => true;
  }
  /**
   * The store dies right after the first statement matching `pattern` is committed: every statement
   * after that commit (or after the statement itself, outside a transaction) fails.
   */
  afterCommitOf(pattern: RegExp): void {
    let armed = false;
    let dead = false;
    let inTransaction = false;
    this.fail = (sql) => {
      if (dead) return true;
      if (sql === "begin") inTransaction = true;
      if (armed) {
        // The transaction holding it goes on, and its commit goes through; then the store is gone.
        if (sql === "commit") dead = true;
        return false;
      }
      if (pattern.test(sql)) {
        armed = true;
        dead = !inTransaction;
      }
      return false;
    };
  }
  end(): void {
    this.fail = null;
  }
}

async function assertUnavailable(response: Response, what: string): Promise<ErrorBody["error"]> {
  const text = await response.clone().text();
  assert.equal(response.status, 503, `${what}: ${text}`);
  const { error } = await json<ErrorBody>(response);
  assert.equal(error.code, "SERVICE_UNAVAILABLE", what);
  assert.equal(error.type, "INTERNAL_ERROR", what);
  assert.equal(error.httpStatusCode, 503, what);
  assert.equal(error.retryable, true, what);
  assert.equal(error.outcome, "not_applied", what);
  assert.equal(response.headers.get("svc-should-retry"), "true", what);
  assert.ok(Number(response.headers.get("retry-after")) > 0, `${what}: Retry-After`);
  assert.equal(error.requestId, response.headers.get("svc-request-id"), what);
  return error;
}

async function requestCount(sys: System): Promise<number> {
  const row = await sys.deps.db
    .selectFrom("requests")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The project's live application Requests counted this month (billing, decision 0019). */
async function liveUsage(sys: System): Promise<number> {
  const project = { projectId: sys.project.project.id, mode: "live" as const };
  return usageOf(sys.deps.db, project, usagePeriod(sys.clock.now()).period);
}

/** An end user whose connection counts as online (seen just now) with no connector running. */
async function onlineEndUser(sys: System, companyName: string): Promise<string> {
  const eu = await sys.connectEndUser({ companyName });
  await moveConnection(sys.deps, eu.connectionId, "online", { last_seen_at: new Date(sys.clock.now()) });
  return eu.endUserId;
}

test("every API call answers 503 SERVICE_UNAVAILABLE while the store does not answer", async (t) => {
  const outage = new Outage();
  // Keys are looked up in the store on every call, so authentication meets the outage too.
  const sys = await startSystem(t, {
    config: { ...E2E_CONFIG.config, API_KEY_CACHE_MS: "0" },
    gate: outage.gate,
  });
  const endUserId = await onlineEndUser(sys, "Outage Co");
  const before = await requestCount(sys);

  outage.all();
  const calls: Array<[string, () => Promise<Response>]> = [
    ["platform list", () => sys.call("GET", "/v1/end-users")],
    ["platform read", () => sys.call("GET", `/v1/end-users/${endUserId}`)],
    [
      "platform write with a key",
      () =>
        sys.call("POST", "/v1/end-users", {
          body: { companyName: "During", sourceId: "during-1" },
          headers: { "idempotency-key": "eu-during-outage" },
        }),
    ],
    ["request list", () => sys.call("GET", "/v1/requests")],
    ["passthrough, sync", () => sys.call("POST", passthroughPath(endUserId), { body: READ })],
    [
      "passthrough, async with a key",
      () =>
        sys.call("POST", passthroughPath(endUserId), {
          body: READ,
          headers: { prefer: "respond-async", "idempotency-key": "read-during-outage" },
        }),
    ],
    ["typed list", () => sys.call("GET", "/v1/ledger-desktop/customers?limit=1", { endUserId })],
    ["health check", () => sys.call("GET", "/v1/ledger-desktop/health-check", { endUserId })],
  ];
  for (const [what, call] of calls) await assertUnavailable(await call(), what);
  // The connector endpoint answers in SOAP: a fault the Web Connector shows, then it tries later.
  const soap = await fetch(`${sys.url}/connector`, {
    method: "POST",
    headers: { "content-type": SOAP_CONTENT_TYPE, soapaction: soapAction("authenticate") },
    body: soapRequest({ method: "authenticate", strUserName: "someone", strPassword: "secret" }),
  });
  assert.equal(soap.status, 500);
  assert.match(await soap.text(), /temporarily unavailable/);

  outage.end();
  assert.equal(await requestCount(sys), before, "nothing was queued or recorded during the outage");
  const created = await sys.call("POST", "/v1/end-users", {
    body: { companyName: "During", sourceId: "during-1" },
    headers: { "idempotency-key": "eu-during-outage" },
  });
  assert.equal(created.status, 201, await created.clone().text());
  const queued = await sys.call("POST", passthroughPath(endUserId), {
    body: READ,
    headers: { prefer: "respond-async", "idempotency-key": "read-during-outage" },
  });
  assert.equal(
    queued.status,
    202,
    `the same key works once the store is back: ${await queued.clone().text()}`,
  );
  assert.equal(queued.headers.get("idempotent-replayed"), null);
});

test("a store that fails in the middle of a call leaves nothing half-done", async (t) => {
  const outage = new Outage();
  const sys = await startSystem(t, { config: E2E_CONFIG.config, gate: outage.gate });
  const endUserId = await onlineEndUser(sys, "Halfway Co");

  await t.test("the Request insert fails after the key was claimed: both roll back", async () => {
    outage.fail = (sql) => /^insert into "requests"/.test(sql);
    const before = await requestCount(sys);
    const usageBefore = await liveUsage(sys);
    const refused = await sys.call("POST", passthroughPath(endUserId), {
      body: READ,
      headers: { prefer: "respond-async", "idempotency-key": "halfway-1" },
    });
    await assertUnavailable(refused, "insert failed");
    outage.end();
    assert.equal(await requestCount(sys), before);
    assert.equal(await liveUsage(sys), usageBefore, "nothing was charged either");
    const retried = await sys.call("POST", passthroughPath(endUserId), {
      body: READ,
      headers: { prefer: "respond-async", "idempotency-key": "halfway-1" },
    });
    assert.equal(retried.status, 202, await retried.clone().text());
    const request = await json<RequestResource>(retried);
    assert.equal(request.previousRequestId, null, "a first attempt, not a replay of anything");
  });

  await t.test("a platform write fails and its key cannot be released: the retry takes it over", async () => {
    // The end user's insert fails, and so does the release of the key that follows it.
    // (The claim's own delete of an expired key names `expires_at`; the release does not.)
    outage.fail = (sql) =>
      /^insert into "end_users"/.test(sql) ||
      (/^delete from "idempotency_keys"/.test(sql) && !sql.includes("expires_at"));
    const body = { companyName: "Halfway Two", sourceId: "halfway-2" };
    const headers = { "idempotency-key": "halfway-2" };
    await assertUnavailable(await sys.call("POST", "/v1/end-users", { body, headers }), "end user insert");
    outage.end();
    const retried = await sys.call("POST", "/v1/end-users", { body, headers });
    assert.equal(retried.status, 201, `not "still in progress": ${await retried.clone().text()}`);
    const again = await sys.call("POST", "/v1/end-users", { body, headers });
    assert.equal(again.status, 201);
    assert.equal(again.headers.get("idempotent-replayed"), "true", "the key now replays the answer");
  });

  await t.test("the store dies right after an async Request is stored: it is still accepted", async () => {
    // The Request's insert (with no quota it carries the usage charge: `with "charged" as (…) insert`).
    outage.afterCommitOf(/^(with "charged" as \(.*\) )?insert into "requests"/s);
    const accepted = await sys.call("POST", passthroughPath(endUserId), {
      body: READ,
      headers: { prefer: "respond-async" },
    });
    outage.end();
    assert.equal(accepted.status, 202, `stored means accepted: ${await accepted.clone().text()}`);
    const request = await json<RequestResource>(accepted);
    assert.equal(request.status, "queued");
    assert.equal(request.queuePosition, null, "the lookups the store could not answer are left out");
    const stored = await json<RequestResource>(await sys.call("GET", `/v1/requests/${request.id}`));
    assert.equal(stored.status, "queued");
  });

  await t.test("the store dies while a sync caller waits: told to poll, never to resend", async () => {
    const waiting = sys.call("POST", passthroughPath(endUserId), {
      body: READ,
      headers: { "svc-timeout-seconds": "5" },
    });
    // The Request is stored and its caller waits; then the store goes away and the deadline passes.
    const stored = async (): Promise<boolean> =>
      (
        await sys.deps.db
          .selectFrom("requests")
          .select("id")
          .where("mode", "=", "sync")
          .where("status", "=", "queued")
          .execute()
      ).length > 0;
    await eventually("the sync Request is stored", stored);
    outage.all();
    // Stored is not yet waiting: the caller arms its deadline on the clock a moment after the insert,
    // so the clock moves on until the caller has answered (one step past the deadline is enough once
    // it is armed; a step taken before is simply repeated).
    let answered = false;
    void waiting.finally(() => {
      answered = true;
    });
    for (let i = 0; i < 200 && !answered; i++) {
      await sys.fakeClock?.advance(6000);
      await new Promise((r) => setTimeout(r, 25));
    }
    const response = await waiting;
    outage.end();
    const text = await response.clone().text();
    assert.equal(response.status, 504, text);
    const { error } = await json<ErrorBody>(response);
    assert.equal(error.code, "LEDGER_REQUEST_TIMEOUT");
    assert.equal(error.outcome, "pending");
    assert.equal(error.retryable, false);
    const id = String(error.details.requestId);
    const request = await json<RequestResource>(await sys.call("GET", `/v1/requests/${id}`));
    assert.equal(request.status, "queued", "the Request is still there, not lost and not failed");
  });
});

test(
  "PostgreSQL: connections refused, backends terminated, a statement timeout",
  { skip: onPostgres ? false : "needs DATABASE_URL (a PostgreSQL server)" },
  async (t) => {
    // The service's own statement timeout, short enough for a test (its default is 30 s).
    const sys = await startSystem(t, {
      config: { ...E2E_CONFIG.config, API_KEY_CACHE_MS: "0", STORE_STATEMENT_TIMEOUT_MS: "1000" },
    });
    const database = (
      await sys.deps.db
        .selectNoFrom((eb) => eb.fn<string>("current_database").as("name"))
        .executeTakeFirstOrThrow()
    ).name;
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    t.after(async () => {
      await admin.query(`alter database ${database} allow_connections true`).catch(() => undefined);
      await admin.end();
    });
    const endUserId = await onlineEndUser(sys, "Real Outage Co");
    const before = await requestCount(sys);

    await t.test("the database refuses connections and its backends are terminated", async () => {
      await admin.query(`alter database ${database} allow_connections false`);
      await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
        [database],
      );
      await assertUnavailable(await sys.call("GET", "/v1/end-users"), "platform list");
      await assertUnavailable(
        await sys.call("POST", passthroughPath(endUserId), {
          body: READ,
          headers: { prefer: "respond-async", "idempotency-key": "pg-outage-1" },
        }),
        "async passthrough",
      );
      await admin.query(`alter database ${database} allow_connections true`);
      const back = await sys.call("POST", passthroughPath(endUserId), {
        body: READ,
        headers: { prefer: "respond-async", "idempotency-key": "pg-outage-1" },
      });
      assert.equal(back.status, 202, await back.clone().text());
      assert.equal(await requestCount(sys), before + 1, "only the call after the outage was stored");
    });

    await t.test("a statement that outlives STORE_STATEMENT_TIMEOUT_MS", async () => {
      const locker = new pg.Client({ connectionString: dbUrl(database) });
      await locker.connect();
      try {
        await locker.query("begin");
        await locker.query("lock table end_users in access exclusive mode");
        await assertUnavailable(await sys.call("GET", "/v1/end-users"), "statement timeout");
      } finally {
        await locker.query("rollback").catch(() => undefined);
        await locker.end();
      }
      const after = await sys.call("GET", "/v1/end-users");
      assert.equal(after.status, 200, await after.clone().text());
    });
  },
);

function dbUrl(database: string): string {
  const url = new URL(process.env.DATABASE_URL ?? "");
  url.pathname = `/${database}`;
  return url.toString();
}
