import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  bringOnline,
  customerAdd,
  eventually,
  json,
  passthroughPath,
  requestById,
  type RequestResource,
} from "./helpers.ts";

/**
 * Found by the R1 reliability suite: a write sent, then confirmed `not_applied` by the recovery
 * query (the application holds nothing for it), fails LEDGER_CONNECTION_ERROR, which is retryable
 * (`retry_same_request`: "the identical request, same Idempotency-Key, can succeed"). A retry with
 * the same key used to replay that failure forever, so a client following the rule could never get
 * its write applied. It is a new attempt (`previousRequestId`), applied once; a later retry replays
 * the success.
 */
test("a write confirmed not applied after recovery is retried with its key as a new attempt, applied once", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Retry Co" });
  await bringOnline(sys, eu);
  const file = sys.ledger.companyFile(eu.companyFilePath);
  const before = file.count("Customer");
  const send = (): Promise<Response> =>
    sys.call("POST", passthroughPath(eu.endUserId), {
      body: customerAdd("Retried Ltd"),
      headers: { prefer: "respond-async", "idempotency-key": "retry-after-not-applied" },
    });

  // The connector crashes after receiving the write, before the application sees it.
  eu.connector.setFault({ kind: "crash_before_write" });
  const first = await json<RequestResource>(await send());
  await eventually("sent", async () => (await requestById(sys, first.id)).status === "sent");
  void eu.connector.checkInNow();
  const failed = await eventually("confirmed not applied", async () => {
    const r = await requestById(sys, first.id);
    return r.status === "failed" ? r : null;
  });
  assert.equal(failed.outcome, "not_applied");
  assert.equal(failed.error?.code, "LEDGER_CONNECTION_ERROR");
  assert.ok(failed.sentAt, "it was sent");
  assert.equal(file.count("Customer"), before);

  const retried = await send();
  assert.equal(retried.status, 202, await retried.clone().text());
  const second = await json<RequestResource>(retried);
  assert.notEqual(second.id, first.id, "a new attempt, not the failure replayed");
  assert.equal(second.previousRequestId, first.id);
  const done = await eventually("the new attempt succeeded", async () => {
    void eu.connector.checkInNow();
    const r = await requestById(sys, second.id);
    return r.status === "succeeded" ? r : null;
  });
  assert.equal(done.outcome, "applied");
  assert.equal(file.count("Customer"), before + 1);

  const replayed = await json<RequestResource>(await send());
  assert.equal(replayed.id, second.id, "the success is replayed");
  assert.equal(file.count("Customer"), before + 1, "applied once");
});
