import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { adminOperations } from "../../src/admin/operations.ts";
import { SEALED_PREFIX, sealingFor } from "../../src/platform/sealing.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { startWebhookReceiver, verifySignature } from "../../src/testing/webhook-receiver.ts";
import { bringOnline, eventually, json, stopConnector, type RequestResource } from "./helpers.ts";
import { storeDump } from "./store-dump.ts";
import { SYSTEM_CONFIG, endpointFor } from "./webhook-helpers.ts";

/**
 * Rotating the key-encryption key (decision 0032): values sealed under key A open once A has moved
 * to `SECRETS_KEY_PREVIOUS`; `secrets reseal` seals them under the new key, which then opens them
 * alone. A "restart with new keys" is the same process with its `deps.sealing` rebuilt from the new
 * configuration: every reader takes the sealing from `deps` at the moment it reads.
 */
const A = randomBytes(32).toString("base64");
const B = randomBytes(32).toString("hex");
const CARD = "4111111111111111";

const keyIdOf = (key: string): string => sealingFor({ SECRETS_KEY: key }).currentKeyId ?? "";

async function storedRequest(sys: System, id: string) {
  return sys.deps.db
    .selectFrom("requests")
    .select(["status", "request_xml", "request_secrets", "input"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
}

async function queueCardCustomer(sys: System, eu: ConnectedEndUser, name: string, number = CARD) {
  const res = await sys.call("POST", "/v1/ledger-desktop/customers", {
    endUserId: eu.endUserId,
    headers: { prefer: "respond-async" },
    body: { name, creditCard: { number, expirationMonth: 12, expirationYear: 2031 } },
  });
  assert.equal(res.status, 202, await res.clone().text());
  return (await json<RequestResource>(res)).id;
}

async function settled(sys: System, id: string): Promise<RequestResource & { result: unknown }> {
  return eventually(`request ${id} settled`, async () => {
    const read = await json<RequestResource & { result: unknown }>(
      await sys.call("GET", `/v1/requests/${id}`),
    );
    return read.status === "succeeded" || read.status === "failed" ? read : null;
  });
}

/** Customers of the company file by name, as the application holds them (its own session). */
async function fileCustomer(eu: ConnectedEndUser, name: string): Promise<string | null> {
  const opened = await eu.ledger.beginSession({
    companyFilePath: eu.companyFilePath,
    appName: "Auditor",
    ownerId: "{00000000-0000-0000-0000-00000000a0d1}",
    fileId: "{00000000-0000-0000-0000-00000000f11e}",
    stampFileId: false,
  });
  assert.ok(opened.ok);
  try {
    const result = await opened.session.processRequest(
      `<?xml version="1.0" encoding="utf-8"?><?qbxml version="16.0"?><QBXML><QBXMLMsgsRq onError="stopOnError"><CustomerQueryRq><FullName>${name}</FullName></CustomerQueryRq></QBXMLMsgsRq></QBXML>`,
    );
    assert.ok(result.ok);
    return result.response.includes("<CustomerRet>") ? result.response : null;
  } finally {
    opened.session.end();
  }
}

test("values sealed under key A open once A is previous; reseal moves them to the new key, which then opens them alone", async (t) => {
  const sys = await startSystem(t, { ...SYSTEM_CONFIG, config: { ...SYSTEM_CONFIG.config, SECRETS_KEY: A } });
  const receiver = await startWebhookReceiver(t);
  const endpoint = await endpointFor(sys, receiver.url, { eventTypes: ["request.*"] });
  const eu = await sys.connectEndUser({ companyName: "Rotation Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  // Waiting to be sent: its card number is sealed apart from its masked message.
  const queued = await queueCardCustomer(sys, eu, "Queued Holder");
  const waiting = await storedRequest(sys, queued);
  assert.match(waiting.request_xml ?? "", /<CreditCardNumber>•{12}1111<\/CreditCardNumber>/);
  assert.ok(
    waiting.request_secrets?.startsWith(`${SEALED_PREFIX}${keyIdOf(A)}.`),
    waiting.request_secrets ?? "",
  );
  const replayCall = () =>
    sys.call("POST", "/v1/api-keys", {
      headers: { "idempotency-key": "rotation-key-1" },
      body: { kind: "secret" },
    });
  const created = await replayCall();
  assert.equal(created.status, 201, await created.clone().text());
  const apiKey = (await json<{ secret: string }>(created)).secret;

  // Restarted with a new key, the old one previous: everything still opens.
  sys.deps.sealing = sealingFor({ SECRETS_KEY: B, SECRETS_KEY_PREVIOUS: A });
  const replayed = await replayCall();
  assert.equal(replayed.headers.get("idempotent-replayed"), "true");
  assert.equal((await json<{ secret: string }>(replayed)).secret, apiKey);
  const test1 = await sys.call("POST", `/v1/webhook-endpoints/${endpoint.id}/test`);
  assert.equal(test1.status, 200, await test1.clone().text());
  await receiver.waitFor("the test event", (r) => r.some((w) => w.event.type === "webhook.test"));
  verifySignature(endpoint.secret, receiver.received.at(-1) ?? assert.fail());

  // The rotation's command: nothing is left under A.
  const report = await adminOperations(sys.deps).resealSecrets();
  assert.equal(report.keyId, keyIdOf(B));
  assert.deepEqual(report.webhookSigningSecrets, { resealed: 1, current: 0, unreadable: 0 });
  assert.deepEqual(report.requestSecrets, { resealed: 1, current: 0, unreadable: 0 });
  assert.deepEqual(report.idempotencyReplayCopies, { resealed: 1, current: 0, unreadable: 0 });
  assert.equal(report.olderFingerprints.count, 1, "the key's fingerprint needs A until it expires");
  assert.deepEqual(report.unreadablePlaces, []);
  const dump = await storeDump(sys.deps.db);
  assert.ok(!dump.includes(`${SEALED_PREFIX}${keyIdOf(A)}.`), "a value is still sealed under A");
  assert.ok(dump.includes(`${SEALED_PREFIX}${keyIdOf(B)}.`));
  const second = await adminOperations(sys.deps).resealSecrets();
  assert.deepEqual(second.requestSecrets, { resealed: 0, current: 1, unreadable: 0 }, "idempotent");

  // A dropped: the new key alone opens everything. The queued Request reaches the application in
  // full, and its secrets are gone with the hand-over.
  sys.deps.sealing = sealingFor({ SECRETS_KEY: B });
  await bringOnline(sys, eu);
  const done = await settled(sys, queued);
  assert.equal(done.status, "succeeded", JSON.stringify(done));
  assert.ok((await fileCustomer(eu, "Queued Holder"))?.includes(CARD), "the application got the full number");
  assert.ok(!JSON.stringify(done).includes(CARD));
  assert.equal((await storedRequest(sys, queued)).request_secrets, null, "cleared by the hand-over");
  const test2 = await sys.call("POST", `/v1/webhook-endpoints/${endpoint.id}/test`);
  assert.equal(test2.status, 200);
  await receiver.waitFor(
    "the second test event",
    (r) => r.filter((w) => w.event.type === "webhook.test").length === 2,
  );
  verifySignature(
    endpoint.secret,
    receiver.received.filter((w) => w.event.type === "webhook.test")[1] ?? assert.fail(),
  );
});

test("a queued Request whose sealed values no configured key opens is never sent: it fails unsent, and the queue moves on", async (t) => {
  const sys = await startSystem(t, { ...SYSTEM_CONFIG, config: { ...SYSTEM_CONFIG.config, SECRETS_KEY: A } });
  const eu = await sys.connectEndUser({ companyName: "Lost Key Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  const lost = await queueCardCustomer(sys, eu, "Lost Holder");
  const next = await queueCardCustomer(sys, eu, "Next Holder", "5500005555555559");
  // Restarted with A dropped too early, and one Request queued under the new key.
  sys.deps.sealing = sealingFor({ SECRETS_KEY: B });
  const fresh = await queueCardCustomer(sys, eu, "Fresh Holder", "340000000000009");
  await bringOnline(sys, eu);
  for (const id of [lost, next]) {
    const ended = await settled(sys, id);
    assert.equal(ended.status, "failed");
    assert.equal(ended.outcome, "not_applied");
    assert.equal(ended.error?.code, "INTERNAL_ERROR");
  }
  assert.equal((await settled(sys, fresh)).status, "succeeded");
  assert.equal(await fileCustomer(eu, "Lost Holder"), null, "no masked number was written");
  assert.equal(await fileCustomer(eu, "Next Holder"), null);
  assert.ok((await fileCustomer(eu, "Fresh Holder"))?.includes("340000000000009"));
});

test("a Request that ends before it is sent keeps no secret, and one refused at admission never stored any", async (t) => {
  const sys = await startSystem(t, SYSTEM_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Cancel Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  const queued = await queueCardCustomer(sys, eu, "Canceled Holder");
  assert.notEqual((await storedRequest(sys, queued)).request_secrets, null);
  const canceled = await sys.call("POST", `/v1/requests/${queued}/cancel`);
  assert.equal(canceled.status, 200, await canceled.clone().text());
  const row = await storedRequest(sys, queued);
  assert.equal(row.status, "canceled");
  assert.equal(row.request_secrets, null);
  // An end user whose connection is not set up: refused at admission, stored failed, no secret kept.
  const newcomer = await json<{ id: string }>(
    await sys.call("POST", "/v1/end-users", { body: { companyName: "Not Yet Co", sourceId: "not-yet" } }),
  );
  const refused = await sys.call("POST", "/v1/ledger-desktop/customers", {
    endUserId: newcomer.id,
    body: { name: "Refused Holder", creditCard: { number: CARD, expirationMonth: 1, expirationYear: 2030 } },
  });
  assert.equal(refused.status, 422, await refused.clone().text());
  const refusedId = refused.headers.get("svc-request-id") ?? "";
  assert.match(refusedId, /^req_/);
  const stored = await storedRequest(sys, refusedId);
  assert.equal(stored.status, "failed");
  assert.equal(stored.request_secrets, null);
  assert.ok(!(await storeDump(sys.deps.db)).includes(CARD));
});
