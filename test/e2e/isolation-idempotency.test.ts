import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  bringOnline,
  customerAdd,
  json,
  passthroughPath,
  type RequestResource,
} from "./helpers.ts";

/**
 * Through HTTP and the real SOAP protocol (issue 6): a write that reached the application and
 * failed is replayed for its Idempotency-Key, never run again; and a key of the other mode never
 * reaches a company file, whatever it names.
 */
test("a key whose write reached the application and failed replays the failure; it is never run again", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Replay Co" });
  await bringOnline(sys, eu);
  const file = sys.ledger.companyFile(eu.companyFilePath);
  const before = file.count("Customer");
  const send = (): Promise<Response> =>
    sys.call("POST", passthroughPath(eu.endUserId), {
      body: { xml: customerAdd("Twice Ltd") },
      headers: { "idempotency-key": "replay-after-failure" },
    });
  // A dialog is open in the application when the write arrives: it is handed over, and refused.
  sys.ledger.setFault({ kind: "modal_dialog" });
  const first = await send();
  const firstBody = await first.text();
  const firstId = first.headers.get("svc-request-id");
  assert.match(String(firstId), /^req_/, firstBody);
  const stored = await json<RequestResource>(await sys.call("GET", `/v1/requests/${firstId}`));
  assert.equal(stored.status, "failed", JSON.stringify(stored));
  assert.ok(stored.sentAt, "the write reached the application");

  // The dialog is closed; the same key must not run the write again.
  sys.ledger.setFault(null);
  const again = await send();
  assert.equal(again.headers.get("svc-request-id"), firstId, "the replay is the original Request");
  assert.equal(again.status, first.status);
  assert.equal(await again.text(), firstBody);
  const list = await json<{ data: { id: string }[] }>(
    await sys.call("GET", `/v1/requests?endUserId=${eu.endUserId}`),
  );
  assert.deepEqual(
    list.data.map((r) => r.id),
    [firstId],
    "no second Request was made",
  );
  assert.equal(file.count("Customer"), before, "the write was never applied");
});

test("a test key cannot reach a live company file, nor a live key a test one (404, nothing sent)", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const live = await sys.connectEndUser({ companyName: "Live Co" });
  const testUser = await sys.connectEndUser({ companyName: "Test Co", test: true });
  await bringOnline(sys, live);
  await bringOnline(sys, testUser);
  const liveFile = sys.ledger.companyFile(live.companyFilePath);
  const testFile = sys.ledger.companyFile(testUser.companyFilePath);
  const liveCount = liveFile.count("Customer");
  const testCount = testFile.count("Customer");
  const crossings = [
    { key: sys.project.keys.secretTest, endUserId: live.endUserId },
    { key: sys.project.keys.secretLive, endUserId: testUser.endUserId },
  ];
  for (const { key, endUserId } of crossings) {
    const write = await sys.call("POST", passthroughPath(endUserId), {
      key,
      body: { xml: customerAdd("Crossed") },
    });
    assert.equal(write.status, 404, await write.text());
    const health = await sys.call("GET", "/v1/ledger-desktop/health-check", { key, endUserId });
    const error = await json<{ error: { code: string; param: string } }>(health);
    assert.equal(health.status, 404);
    assert.deepEqual([error.error.code, error.error.param], ["RESOURCE_MISSING", "Svc-End-User-Id"]);
    const listed = await json<{ data: unknown[] }>(
      await sys.call("GET", `/v1/requests?endUserId=${endUserId}`, { key }),
    );
    assert.deepEqual(listed.data, []);
  }
  assert.equal(liveFile.count("Customer"), liveCount);
  assert.equal(testFile.count("Customer"), testCount);
  // Each key still reaches its own mode's company file.
  const own = await sys.call("GET", "/v1/ledger-desktop/health-check", {
    key: sys.project.keys.secretTest,
    endUserId: testUser.endUserId,
  });
  assert.equal(own.status, 200, await own.text());
});
