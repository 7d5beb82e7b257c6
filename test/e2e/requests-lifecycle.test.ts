import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  READ,
  newestRequestIs,
  stopConnector,
  advanceUntil,
  bringOnline,
  customerAdd,
  eventually,
  json,
  passthroughPath,
  type RequestResource,
} from "./helpers.ts";
import { checkEveryAnswer } from "./openapi-contract.ts";

test("Request lifecycle through HTTP + SOAP + simulator", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  checkEveryAnswer(sys);
  const eu = await sys.connectEndUser({ companyName: "Lifecycle Co" });
  await bringOnline(sys, eu);
  const file = sys.ledger.companyFile(eu.companyFilePath);

  await t.test("async read: 202 + Location + Request, then waitSeconds returns it succeeded", async () => {
    const res = await sys.call("POST", passthroughPath(eu.endUserId), {
      body: READ,
      headers: { prefer: "respond-async" },
    });
    assert.equal(res.status, 202);
    const accepted = await json<RequestResource & { mode: string }>(res);
    assert.equal(accepted.mode, "async");
    assert.match(accepted.id, /^req_[0-9a-hjkmnp-tv-z]{26}$/);
    assert.equal(res.headers.get("location"), `${sys.url}/v1/requests/${accepted.id}`);
    assert.equal(res.headers.get("svc-request-id"), accepted.id);
    const done = await json<RequestResource>(
      await sys.call("GET", `/v1/requests/${accepted.id}?waitSeconds=30`),
    );
    assert.equal(done.status, "succeeded");
    assert.equal(done.outcome, "not_applicable");
    assert.match(done.result?.xml ?? "", /<CustomerQueryRs [^>]*statusCode="0"/);
    assert.deepEqual(
      done.timeline.map((e) => e.status),
      ["queued", "sent", "succeeded"],
    );
  });

  await t.test("sync write is applied once and reports outcome applied", async () => {
    const before = file.count("Customer");
    const res = await sys.call("POST", passthroughPath(eu.endUserId), { body: customerAdd("Sync Writer") });
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(await res.text(), /<CustomerAddRs [^>]*statusCode="0"/);
    assert.equal(file.count("Customer"), before + 1);
    const list = await json<{ data: RequestResource[] }>(await sys.call("GET", `/v1/requests?limit=1`));
    assert.equal(list.data[0]?.outcome, "applied");
    assert.equal(
      (list.data[0] as unknown as { result?: unknown }).result,
      undefined,
      "list returns summaries",
    );
  });

  await t.test("idempotent write: same key replays, other body → 422, one record", async () => {
    const before = file.count("Customer");
    const headers = { "idempotency-key": "order-42" };
    const first = await sys.call("POST", passthroughPath(eu.endUserId), {
      body: customerAdd("Idem Co"),
      headers,
    });
    assert.equal(first.status, 200);
    const firstText = await first.text();
    const again = await sys.call("POST", passthroughPath(eu.endUserId), {
      body: customerAdd("Idem Co"),
      headers,
    });
    assert.equal(again.status, 200);
    assert.equal(await again.text(), firstText, "replay returns the finished response");
    const other = await sys.call("POST", passthroughPath(eu.endUserId), {
      body: customerAdd("Other Co"),
      headers,
    });
    assert.equal(other.status, 422);
    assert.equal(
      (await json<{ error: { code: string; param: string } }>(other)).error.code,
      "IDEMPOTENCY_KEY_REUSED",
    );
    assert.equal(file.count("Customer"), before + 1);
  });

  await t.test("concurrent identical calls with one key create one Request and one record", async () => {
    const before = file.count("Customer");
    const headers = { "idempotency-key": "burst-1" };
    const calls = await Promise.all(
      Array.from({ length: 5 }, () =>
        sys.call("POST", passthroughPath(eu.endUserId), { body: customerAdd("Burst Co"), headers }),
      ),
    );
    for (const res of calls) assert.equal(res.status, 200, await res.clone().text());
    assert.equal(file.count("Customer"), before + 1);
    const list = await json<{ data: { operationId: string; idempotencyKeyPresent: boolean }[] }>(
      await sys.call("GET", "/v1/requests?limit=100"),
    );
    assert.equal(list.data.filter((r) => r.idempotencyKeyPresent).length, 2, "order-42 and burst-1 only");
  });

  await t.test(
    "the application refusing the message set fails the request (sent → failed), nothing applied",
    async () => {
      sys.ledger.setFault({ kind: "modal_dialog" });
      const res = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
      sys.ledger.setFault(null);
      assert.equal(res.status, 503);
      const body = await json<{ error: { code: string; integrationCode: string } }>(res);
      assert.equal(body.error.code, "LEDGER_MODAL_DIALOG_OPEN");
      assert.equal(res.headers.get("retry-after") !== null, true);
      // A failure instead of an answer ends the session (the connector shows why); the end user's
      // next update opens a new one.
      await eventually("the session ended", async () => eu.connector.events.at(-1)?.type === "session_ended");
      void eu.connector.checkInNow();
    },
  );

  await t.test("health check makes a real round trip", async () => {
    const res = await sys.call("GET", "/v1/ledger-desktop/health-check", { endUserId: eu.endUserId });
    assert.equal(res.status, 200);
    const body = await json<{
      status: string;
      duration: number;
      durationMs: number;
      ledger: { companyName: string; xmlVersion: string; product: string };
    }>(res);
    assert.equal(body.status, "ok");
    // Both names carry the round trip's milliseconds (issue 25, item 6: the market's clients read `duration`).
    assert.ok(Number.isInteger(body.durationMs) && body.durationMs >= 0, JSON.stringify(body));
    assert.equal(body.duration, body.durationMs);
    assert.equal(body.ledger.companyName, "Lifecycle Co");
    assert.equal(body.ledger.xmlVersion, "16.0");
  });

  await t.test(
    "sync timeout after send: 504 LEDGER_REQUEST_TIMEOUT, request keeps running and succeeds",
    async () => {
      sys.ledger.setFault({ kind: "not_responding" });
      const pending = sys.call("POST", passthroughPath(eu.endUserId), {
        body: READ,
        headers: { "svc-timeout-seconds": "2" },
      });
      await newestRequestIs(sys, "sent");
      const res = await advanceUntil(sys, pending);
      assert.equal(res.status, 504);
      const body = await json<{
        error: { code: string; details: { requestId: string }; retryable: boolean };
      }>(res);
      assert.equal(body.error.code, "LEDGER_REQUEST_TIMEOUT");
      const id = body.error.details.requestId;
      assert.equal((await json<RequestResource>(await sys.call("GET", `/v1/requests/${id}`))).status, "sent");
      const cancel = await sys.call("POST", `/v1/requests/${id}/cancel`);
      assert.equal(cancel.status, 409);
      assert.equal((await json<{ error: { code: string } }>(cancel)).error.code, "REQUEST_NOT_CANCELABLE");
      sys.ledger.setFault(null);
      const done = await eventually("request finished", async () => {
        const r = await json<RequestResource>(await sys.call("GET", `/v1/requests/${id}`));
        return r.status === "succeeded" ? r : null;
      });
      assert.equal(done.status, "succeeded");
    },
  );
});

test("Requests waiting for a connector that is not in session", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  checkEveryAnswer(sys);
  const eu = await sys.connectEndUser({ companyName: "Queue Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);

  await t.test(
    "sync timeout before send: 504 REQUEST_TIMEOUT_NOT_SENT and the request is canceled",
    async () => {
      const pending = sys.call("POST", passthroughPath(eu.endUserId), {
        body: READ,
        headers: { "svc-timeout-seconds": "5" },
      });
      await newestRequestIs(sys, "queued");
      const res = await advanceUntil(sys, pending);
      assert.equal(res.status, 504);
      const body = await json<{ error: { code: string; requestId: string; retryable: boolean } }>(res);
      assert.equal(body.error.code, "REQUEST_TIMEOUT_NOT_SENT");
      assert.equal(res.headers.get("svc-should-retry"), "true");
      const request = await json<
        RequestResource & { diagnosis: { probableCauses: { code: string }[] } | null }
      >(await sys.call("GET", `/v1/requests/${body.error.requestId}`));
      assert.equal(request.status, "canceled");
      assert.equal(request.sentAt, null);
      assert.equal(request.error?.code, "REQUEST_TIMEOUT_NOT_SENT");
      assert.ok(request.diagnosis, "a timed-out request carries a diagnosis");
    },
  );

  await t.test("async request: queued with waitingReason and queuePosition, cancel → canceled", async () => {
    const a = await json<RequestResource>(
      await sys.call("POST", passthroughPath(eu.endUserId), {
        body: READ,
        headers: { prefer: "respond-async" },
      }),
    );
    const b = await json<RequestResource>(
      await sys.call("POST", passthroughPath(eu.endUserId), {
        body: READ,
        headers: { prefer: "respond-async" },
      }),
    );
    assert.equal(a.status, "queued");
    assert.equal(a.queuePosition, 1);
    assert.equal(b.queuePosition, 2);
    assert.equal(a.waitingReason, "awaiting_check_in");
    assert.equal(b.waitingReason, "behind_other_requests");
    const canceled = await json<RequestResource>(await sys.call("POST", `/v1/requests/${a.id}/cancel`));
    assert.equal(canceled.status, "canceled");
    assert.equal(canceled.error?.code, "REQUEST_CANCELED");
    const bAfter = await json<RequestResource>(await sys.call("GET", `/v1/requests/${b.id}`));
    assert.equal(bAfter.queuePosition, 1);
    await sys.call("POST", `/v1/requests/${b.id}/cancel`);
  });

  await t.test("queue TTL elapses → canceled with REQUEST_EXPIRED, never sent", async () => {
    const res = await sys.call("POST", passthroughPath(eu.endUserId), {
      body: READ,
      headers: { prefer: "respond-async", "svc-queue-ttl-seconds": "10" },
    });
    const accepted = await json<RequestResource & { queueTtlExpiresAt: string }>(res);
    assert.ok(accepted.queueTtlExpiresAt);
    await sys.fakeClock?.advance(11_000);
    const expired = await json<RequestResource>(await sys.call("GET", `/v1/requests/${accepted.id}`));
    assert.equal(expired.status, "canceled");
    assert.equal(expired.error?.code, "REQUEST_EXPIRED");
    assert.equal(expired.sentAt, null);
  });

  await t.test(
    "offline connector: sync fails fast, async waits for the connection and runs after check-in",
    async () => {
      const before = await json<RequestResource>(
        await sys.call("POST", passthroughPath(eu.endUserId), {
          body: READ,
          headers: { prefer: "respond-async" },
        }),
      );
      assert.equal(before.status, "queued");
      await sys.fakeClock?.advance(sys.deps.config.CONNECTION_OFFLINE_AFTER_MS + 1000);
      // Queued before the connector went away: now it waits for the connection (connector_lost).
      const parked = await json<RequestResource>(await sys.call("GET", `/v1/requests/${before.id}`));
      assert.equal(parked.status, "waiting_for_connection");
      const sync = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
      assert.equal(sync.status, 503);
      assert.equal(
        (await json<{ error: { code: string } }>(sync)).error.code,
        "INTEGRATION_CONNECTION_NOT_ACTIVE",
      );
      const accepted = await json<RequestResource>(
        await sys.call("POST", passthroughPath(eu.endUserId), {
          body: READ,
          headers: { prefer: "respond-async" },
        }),
      );
      assert.equal(accepted.status, "waiting_for_connection");
      assert.equal(accepted.waitingReason, "connector_offline");
      eu.connector.start();
      const done = await json<RequestResource>(
        await sys.call("GET", `/v1/requests/${accepted.id}?waitSeconds=30`),
      );
      assert.equal(done.status, "succeeded");
      assert.deepEqual(
        done.timeline.map((e) => e.status),
        ["waiting_for_connection", "queued", "sent", "succeeded"],
      );
      const first = await json<RequestResource>(
        await sys.call("GET", `/v1/requests/${before.id}?waitSeconds=30`),
      );
      assert.deepEqual(
        first.timeline.map((e) => e.status),
        ["queued", "waiting_for_connection", "queued", "sent", "succeeded"],
      );
    },
  );

  await t.test(
    "an idempotent retry after a request that never reached the application links previousRequestId",
    async () => {
      await stopConnector(sys, eu);
      const headers = { "idempotency-key": "retry-after-cancel", prefer: "respond-async" };
      const first = await json<RequestResource>(
        await sys.call("POST", passthroughPath(eu.endUserId), { body: customerAdd("Retry Co"), headers }),
      );
      await sys.call("POST", `/v1/requests/${first.id}/cancel`);
      const second = await json<RequestResource>(
        await sys.call("POST", passthroughPath(eu.endUserId), { body: customerAdd("Retry Co"), headers }),
      );
      assert.notEqual(second.id, first.id);
      assert.equal(second.previousRequestId, first.id);
      const attached = await json<RequestResource>(
        await sys.call("POST", passthroughPath(eu.endUserId), { body: customerAdd("Retry Co"), headers }),
      );
      assert.equal(attached.id, second.id, "the same key attaches to the running request");
    },
  );
});

test("A new end user without a connection is rejected with a recorded request", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  checkEveryAnswer(sys);
  const created = await json<{ id: string }>(
    await sys.call("POST", "/v1/end-users", { body: { companyName: "No Conn", sourceId: "nc" } }),
  );
  const res = await sys.call("GET", "/v1/ledger-desktop/health-check", { endUserId: created.id });
  assert.equal(res.status, 422);
  const body = await json<{ error: { code: string; requestId: string } }>(res);
  assert.equal(body.error.code, "INTEGRATION_CONNECTION_NOT_SET_UP");
  const request = await json<RequestResource>(await sys.call("GET", `/v1/requests/${body.error.requestId}`));
  assert.equal(request.status, "failed");
  assert.equal(request.connectionId, null);
});
