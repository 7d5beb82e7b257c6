import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { bringOnline, callAsEndUser, E2E_CONFIG, eventually, json, type RequestResource } from "./helpers.ts";

type SpacedRequest = RequestResource & { completedAt: string | null };

/**
 * The service spaces its own consecutive writes to one record by more than a second (spec: common
 * record fields), through HTTP, the connector protocol and the simulated application, on the
 * service's injected clock (its default spacing; other suites freeze the clock and turn it off).
 */
let sys: System;
let eu: ConnectedEndUser;

before(async () => {
  sys = await startSystem(null, { config: { ...E2E_CONFIG.config, RECORD_WRITE_SPACING_MS: "1000" } });
  eu = await sys.connectEndUser({ companyName: "Spacing Co" });
  await bringOnline(sys, eu);
});
after(() => sys.close());

async function requestOf(id: string): Promise<SpacedRequest> {
  return json<SpacedRequest>(await sys.call("GET", `/v1/requests/${id}`, { key: eu.key }));
}

test("an update right after another one to the same customer is sent more than a second after its answer", async () => {
  const created = await callAsEndUser(sys, eu, "POST", "/v1/ledger-desktop/customers", {
    name: "Spaced Ltd",
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = String(created.body.id);
  const first = await sys.call("POST", `/v1/ledger-desktop/customers/${id}`, {
    endUserId: eu.endUserId,
    body: { revisionNumber: created.body.revisionNumber, companyName: "Spaced One" },
  });
  assert.equal(first.status, 200);
  const firstId = first.headers.get("svc-request-id") ?? "";
  const updated = await json<{ revisionNumber: string }>(first);
  const second = await sys.call("POST", `/v1/ledger-desktop/customers/${id}`, {
    endUserId: eu.endUserId,
    headers: { prefer: "respond-async" },
    body: { revisionNumber: updated.revisionNumber, companyName: "Spaced Two" },
  });
  assert.equal(second.status, 202);
  const requestId = (await json<{ id: string }>(second)).id;
  // The connector keeps asking (its hold is 300 ms), and is handed nothing while the clock stands.
  const asks = (): number => eu.connector.calls.filter((c) => c.call.method === "sendRequestXML").length;
  const asked = asks();
  await eventually("the connector asked twice more", async () => asks() >= asked + 2);
  assert.equal((await requestOf(requestId)).status, "queued");
  await sys.fakeClock?.advance(1001);
  const done = await eventually("second update applied", async () => {
    const request = await requestOf(requestId);
    return request.status === "succeeded" ? request : null;
  });
  const firstRequest = await requestOf(firstId);
  assert.ok(done.sentAt && firstRequest.completedAt);
  assert.ok(Date.parse(done.sentAt) - Date.parse(firstRequest.completedAt) > 1000);
});
