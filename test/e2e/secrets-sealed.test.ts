import assert from "node:assert/strict";
import { test } from "node:test";
import { openWith, sealWith } from "../../src/platform/secrets.ts";
import { SEALED_PREFIX, sealingFor } from "../../src/platform/sealing.ts";
import { resealStoredSecrets } from "../../src/store/sealed-values.ts";
import { verifySignature } from "../../src/testing/webhook-receiver.ts";
import { storeDump } from "./store-dump.ts";
import { sendTest, webhookRig, type WebhookRig } from "./webhook-helpers.ts";

/**
 * Secrets sealed at rest with the key-encryption key (decision 0032): webhook signing secrets (and
 * the previous one during a rotation) and the idempotency replay copies of platform creates that
 * return a credential. A dump of the store holds none of them, yet deliveries verify with the
 * `standardwebhooks` package and replays return the same credential.
 */
const base64Of = (secret: string): string => secret.replace(/^whsec_/, "");

async function storedEndpoint(rig: WebhookRig, id: string) {
  return rig.h.deps.db
    .selectFrom("webhook_endpoints")
    .select(["secret", "previous_secret"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
}

test("a store dump holds neither an endpoint's signing secret nor its previous one after a rotation; deliveries still verify with both", async (t) => {
  const rig = await webhookRig(t);
  const endpoint = await rig.createEndpoint();
  const rotated = await rig.api<{ secret: string }>(
    "POST",
    `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`,
  );
  assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
  const [first, second] = [endpoint.secret, rotated.body.secret];
  const stored = await storedEndpoint(rig, endpoint.id);
  assert.ok(stored.secret.startsWith(SEALED_PREFIX), stored.secret);
  assert.ok(stored.previous_secret?.startsWith(SEALED_PREFIX), stored.previous_secret ?? "null");
  const dump = await storeDump(rig.h.deps.db);
  for (const secret of [first, second])
    assert.ok(!dump.includes(base64Of(secret)), "the store holds a signing secret in clear");

  await sendTest(rig, endpoint.id);
  await rig.receiver.waitFor("the test event", (r) => r.length === 1);
  const [webhook] = rig.receiver.received;
  assert.ok(webhook);
  assert.equal(webhook.signature.split(" ").length, 2, "signed with the new and the previous secret");
  verifySignature(second, webhook);
  verifySignature(first, webhook);
});

test("an endpoint stored before the key existed still signs, and reseal seals its secret", async (t) => {
  const rig = await webhookRig(t);
  const sealed = rig.h.deps.sealing;
  rig.h.deps.sealing = sealingFor({});
  const endpoint = await rig.createEndpoint();
  assert.equal((await storedEndpoint(rig, endpoint.id)).secret, endpoint.secret, "no key: stored as it is");
  rig.h.deps.sealing = sealed;

  await sendTest(rig, endpoint.id);
  await rig.receiver.waitFor("the first event", (r) => r.length === 1);
  verifySignature(endpoint.secret, rig.receiver.received[0] ?? assert.fail());

  const report = await resealStoredSecrets(rig.h.deps.db, sealed, new Date(rig.clock.now()));
  assert.deepEqual(report.webhookSigningSecrets, { resealed: 1, current: 0, unreadable: 0 });
  assert.ok((await storedEndpoint(rig, endpoint.id)).secret.startsWith(SEALED_PREFIX));
  assert.ok(!(await storeDump(rig.h.deps.db)).includes(base64Of(endpoint.secret)));
  await sendTest(rig, endpoint.id);
  await rig.receiver.waitFor("the second event", (r) => r.length === 2);
  verifySignature(endpoint.secret, rig.receiver.received[1] ?? assert.fail());
});

test("platform creates that return a credential replay under their Idempotency-Key, though the key alone opens no stored copy", async (t) => {
  const rig = await webhookRig(t);
  const key = "create-endpoint-1";
  const body = { url: rig.receiver.url, eventTypes: ["request.*"] };
  const create = (path: string, payload: Record<string, unknown>, idempotencyKey: string) =>
    rig.h.app.inject({
      method: "POST",
      url: path,
      headers: {
        authorization: `Bearer ${rig.h.project.keys.secretLive}`,
        "idempotency-key": idempotencyKey,
      },
      payload,
    });
  const first = await create("/v1/webhook-endpoints", body, key);
  assert.equal(first.statusCode, 201, first.body);
  const again = await create("/v1/webhook-endpoints", body, key);
  assert.equal(again.statusCode, 201, again.body);
  assert.equal(again.headers["idempotent-replayed"], "true");
  const secret = first.json<{ secret: string }>().secret;
  assert.equal(again.json<{ secret: string }>().secret, secret, "the same secret, replayed");
  const apiKey = await create("/v1/api-keys", { kind: "secret" }, "create-key-1");
  assert.equal(apiKey.statusCode, 201, apiKey.body);
  const apiSecret = apiKey.json<{ secret: string }>().secret;

  const rows = await rig.h.deps.db
    .selectFrom("idempotency_keys")
    .select(["key", "response_box", "fingerprint"])
    .where("key", "in", [key, "create-key-1"])
    .execute();
  assert.equal(rows.length, 2);
  for (const row of rows) {
    assert.ok(row.response_box?.startsWith(SEALED_PREFIX), row.response_box ?? "null");
    assert.equal(openWith(row.key, row.response_box ?? ""), null, "the Idempotency-Key alone opens nothing");
    assert.match(row.fingerprint, /^k1\./, "the fingerprint is keyed");
  }
  const dump = await storeDump(rig.h.deps.db);
  assert.ok(!dump.includes(base64Of(secret)), "the webhook secret is in no column");
  assert.ok(!dump.includes(apiSecret), "the API key is in no column");

  // A copy stored before (sealed with the Idempotency-Key alone) still replays within its 7 days.
  await rig.h.deps.db
    .updateTable("idempotency_keys")
    .set({ response_box: sealWith(key, first.body) })
    .where("key", "=", key)
    .execute();
  const legacy = await create("/v1/webhook-endpoints", body, key);
  assert.equal(legacy.statusCode, 201, legacy.body);
  assert.equal(legacy.headers["idempotent-replayed"], "true");
  assert.equal(legacy.json<{ secret: string }>().secret, secret);
  // Another body under the same key is still refused.
  const reused = await create("/v1/webhook-endpoints", { ...body, description: "other" }, key);
  assert.equal(reused.statusCode, 422, reused.body);
  assert.equal(reused.json<{ error: { code: string } }>().error.code, "IDEMPOTENCY_KEY_REUSED");
});
