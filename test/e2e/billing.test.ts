import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { adminOperations } from "../../src/admin/operations.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  bringOnline,
  json,
  passthroughPath,
  READ,
  type RequestResource,
  type ErrorBody,
} from "./helpers.ts";

/**
 * Billing and the operator's standing of a project, through HTTP, SOAP and the simulated application
 * (decision 0019; spec Authentication 7, batch rule 7): an operator-set monthly quota counted in
 * application Requests (a batch as its members, a passthrough document as its messages), enforced
 * at admission with 402 BILLING_REQUIRED and nothing queued; 402 PAYMENT_FAILED for a project whose
 * payment the operator marked failed; 403 PERMISSION_DENIED for every call of a disabled project.
 */
let sys: System;
let eu: ConnectedEndUser;
let testEu: ConnectedEndUser;
const ops = () => adminOperations(sys.deps);

/** Request documents the simulated application processed. */
function processed(): number {
  return [eu, testEu].reduce(
    (n, u) => n + u.connector.events.filter((e) => e.type === "request_processed").length,
    0,
  );
}

async function customersList(user: ConnectedEndUser, headers: Record<string, string> = {}) {
  return sys.call("GET", "/v1/ledger-desktop/customers?limit=1", {
    key: user.key,
    endUserId: user.endUserId,
    headers,
  });
}

async function batchOf(size: number, user: ConnectedEndUser = eu) {
  const requests = Array.from({ length: size }, () => ({
    operationId: "ledger.customers.list",
    query: { limit: 1 },
  }));
  return sys.call("POST", "/v1/ledger-desktop/batch", {
    key: user.key,
    endUserId: user.endUserId,
    body: { requests },
  });
}

/** Asserts a refusal at admission: the status and code, the Request `failed`, never queued or sent. */
async function assertRefused(
  response: Response,
  status: number,
  code: string,
  type: string,
): Promise<ErrorBody["error"]> {
  const text = await response.clone().text();
  assert.equal(response.status, status, text);
  const { error } = await json<ErrorBody>(response);
  assert.equal(error.code, code, text);
  assert.equal(error.type, type, text);
  assert.equal(error.httpStatusCode, status, text);
  assert.equal(error.retryable, false, text);
  assert.equal(error.outcome === "not_applied" || error.outcome === "not_applicable", true, text);
  if (status === 402) {
    const recorded = await json<RequestResource>(await sys.call("GET", `/v1/requests/${error.requestId}`));
    assert.equal(recorded.status, "failed");
    assert.equal(recorded.sentAt, null);
    assert.deepEqual(
      recorded.timeline.map((e) => e.status),
      ["failed"],
      "created failed: never queued",
    );
  }
  return error;
}

before(async () => {
  sys = await startSystem(null, { ...E2E_CONFIG });
  eu = await sys.connectEndUser({ companyName: "Billing Co" });
  testEu = await sys.connectEndUser({ companyName: "Billing Test Co", test: true });
  await bringOnline(sys, eu);
  await bringOnline(sys, testEu);
});
after(() => sys.close());

describe("billing", () => {
  test("a monthly quota counts Requests, a batch as its members, and refuses past it with nothing queued", async () => {
    const projectId = sys.project.project.id;
    const start = (await ops().usage(projectId)).live.requests;
    await ops().setQuota({ projectId, monthlyRequests: start + 6 });

    assert.equal((await customersList(eu)).status, 200);
    const keyed = { "idempotency-key": "billing-replay-1" };
    assert.equal((await customersList(eu, keyed)).status, 200);
    const replay = await customersList(eu, keyed);
    assert.equal(replay.status, 200, "an idempotent replay answers again");
    assert.equal((await ops().usage(projectId)).live.requests, start + 2, "and is not counted again");

    const three = await batchOf(3);
    assert.equal(three.status, 200, await three.clone().text());
    const afterBatch = await ops().usage(projectId);
    assert.equal(afterBatch.live.requests, start + 5, "the batch counted as its 3 members");
    assert.equal(afterBatch.live.remaining, 1);

    const seen = processed();
    const tooMany = await assertRefused(await batchOf(2), 402, "BILLING_REQUIRED", "BILLING_ERROR");
    assert.deepEqual(
      {
        quota: tooMany.details.quota,
        used: tooMany.details.used,
        requested: tooMany.details.requested,
      },
      { quota: start + 6, used: start + 5, requested: 2 },
    );
    assert.match(String(tooMany.details.resetsAt), /^\d{4}-\d{2}-01T00:00:00\.000Z$/);

    // A two-message passthrough document is two requests as well.
    const twoMessages = `${READ}${READ}`;
    await assertRefused(
      await sys.call("POST", passthroughPath(eu.endUserId), { body: twoMessages }),
      402,
      "BILLING_REQUIRED",
      "BILLING_ERROR",
    );
    assert.equal((await customersList(eu)).status, 200, "the last unit of the quota");
    await assertRefused(await customersList(eu), 402, "BILLING_REQUIRED", "BILLING_ERROR");
    await assertRefused(
      await customersList(eu, { prefer: "respond-async" }),
      402,
      "BILLING_REQUIRED",
      "BILLING_ERROR",
    );
    assert.equal(processed(), seen + 1, "only the admitted call reached the application");

    // Test mode is counted, never refused.
    const testBefore = (await ops().usage(projectId)).test.requests;
    assert.equal((await batchOf(2, testEu)).status, 200);
    const report = await ops().usage(projectId);
    assert.equal(report.test.requests, testBefore + 2);
    assert.equal(report.live.requests, start + 6);
    assert.equal(report.live.remaining, 0);

    // Raised by the operator: admitted again at once.
    await ops().setQuota({ projectId, monthlyRequests: null });
    assert.equal((await customersList(eu)).status, 200);
    const unlimited = await ops().usage(projectId);
    assert.equal(unlimited.monthlyRequestQuota, null);
    assert.equal(unlimited.live.requests, start + 7, "counted with no quota too");
  });

  test("the quota resets with the calendar month", async () => {
    const projectId = sys.project.project.id;
    const used = (await ops().usage(projectId)).live.requests;
    await ops().setQuota({ projectId, monthlyRequests: used });
    await assertRefused(await customersList(eu), 402, "BILLING_REQUIRED", "BILLING_ERROR");
    const { resetsAt } = await ops().usage(projectId);
    await sys.fakeClock?.advance(new Date(resetsAt).getTime() - sys.clock.now());
    const fresh = await ops().usage(projectId);
    assert.equal(fresh.live.requests, 0, `a new month: ${fresh.period}`);
    // A month passed for the service: the connectors check in again ("Update Selected").
    for (const user of [eu, testEu]) {
      await user.connector.stop();
      await bringOnline(sys, user);
    }
    const next = await customersList(eu);
    assert.equal(next.status, 200, await next.clone().text());
    assert.equal((await ops().usage(projectId)).live.requests, 1);
    await ops().setQuota({ projectId, monthlyRequests: null });
  });

  test("a failed payment refuses live application operations with 402 PAYMENT_FAILED", async () => {
    const projectId = sys.project.project.id;
    await ops().setPayment({ projectId, payment: "failed" });
    const seen = processed();
    const refused = await assertRefused(await customersList(eu), 402, "PAYMENT_FAILED", "BILLING_ERROR");
    assert.ok(typeof refused.details.since === "string");
    await assertRefused(
      await sys.call("POST", "/v1/ledger-desktop/batch", {
        endUserId: eu.endUserId,
        body: { requests: [{ operationId: "ledger.customers.list", query: { limit: 1 } }] },
        headers: { prefer: "respond-async" },
      }),
      402,
      "PAYMENT_FAILED",
      "BILLING_ERROR",
    );
    assert.equal(processed(), seen, "nothing reached the application");
    assert.equal((await customersList(testEu)).status, 200, "test keys keep working");
    assert.equal((await sys.call("GET", "/v1/end-users")).status, 200, "platform calls too");
    await ops().setPayment({ projectId, payment: "ok" });
    assert.equal((await customersList(eu)).status, 200, "settled: admitted again at once");
  });

  test("a disabled project's keys get 403 PERMISSION_DENIED on every call", async () => {
    const projectId = sys.project.project.id;
    await ops().setDisabled({ projectId, disabled: true, reason: "Terms of service review" });
    const seen = processed();
    for (const response of [
      await sys.call("GET", "/v1/end-users"),
      await customersList(eu),
      await customersList(testEu),
      await sys.call("POST", "/v1/end-users", { body: { companyName: "Nope", sourceId: "nope" } }),
    ]) {
      const error = await assertRefused(response, 403, "PERMISSION_DENIED", "PERMISSION_ERROR");
      assert.match(error.message, /Terms of service review/);
      assert.equal(error.details.reason, "project_disabled");
    }
    assert.equal(processed(), seen);
    const listed = (await ops().listProjects()).find((p) => p.id === projectId);
    assert.equal(listed?.disabledReason, "Terms of service review");
    await ops().setDisabled({ projectId, disabled: false });
    assert.equal((await sys.call("GET", "/v1/end-users")).status, 200, "enabled again at once");
  });
});
