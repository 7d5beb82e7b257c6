import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { openWith, sealWith } from "./secrets.ts";
import { SEALED_PREFIX, Sealing, SealedValueError, parseSecretsKey, sealingFor } from "./sealing.ts";

/** Secrets at rest (decision 0032): the sealing's guarantees, one per test. */
const A = randomBytes(32);
const B = randomBytes(32);
const sealing = (current: Buffer | null, ...previous: Buffer[]): Sealing =>
  new Sealing({ current, previous });
const PLACE = "webhook_endpoints.secret:whe_1";

test("a configured key reads as base64 or hex of 32 bytes, nothing else", () => {
  assert.deepEqual(parseSecretsKey(A.toString("base64")), A);
  assert.deepEqual(parseSecretsKey(A.toString("base64url")), A);
  assert.deepEqual(parseSecretsKey(A.toString("hex")), A);
  assert.deepEqual(parseSecretsKey(` ${A.toString("base64")}\n`), A);
  assert.equal(parseSecretsKey(randomBytes(16).toString("base64")), null);
  assert.equal(parseSecretsKey(randomBytes(31).toString("hex")), null);
  assert.equal(parseSecretsKey("correct horse battery staple"), null);
  assert.throws(() => sealingFor({ SECRETS_KEY: "short" }), /SECRETS_KEY must be 32 random bytes/);
  assert.throws(
    () => sealingFor({ SECRETS_KEY: A.toString("hex"), SECRETS_KEY_PREVIOUS: `${B.toString("hex")},nope` }),
    /SECRETS_KEY_PREVIOUS/,
  );
});

test("a sealed value opens at its place only: the ciphertext shows nothing of it, and it names its key", () => {
  const s = sealing(A);
  const box = s.seal("whsec_c2VjcmV0", PLACE);
  assert.ok(box.startsWith(`${SEALED_PREFIX}${s.currentKeyId}.`), box);
  assert.ok(!box.includes("whsec_") && !box.includes("c2VjcmV0"));
  assert.notEqual(s.seal("whsec_c2VjcmV0", PLACE), box, "a fresh IV each time");
  assert.equal(s.open(box, PLACE), "whsec_c2VjcmV0");
  // Moved to another row: the associated data no longer matches.
  assert.throws(() => s.open(box, "webhook_endpoints.secret:whe_2"), SealedValueError);
  // Damaged.
  const parts = box.split(".");
  parts[parts.length - 1] = Buffer.from("tampered").toString("base64url");
  assert.throws(() => s.open(parts.join("."), PLACE), SealedValueError);
});

test("key IDs tell keys apart and reveal neither key", () => {
  const a = sealing(A);
  const b = sealing(B);
  assert.match(a.currentKeyId ?? "", /^[A-Za-z0-9_-]{8}$/);
  assert.notEqual(a.currentKeyId, b.currentKeyId);
  assert.equal(sealing(A).currentKeyId, a.currentKeyId, "derived from the key: stable across restarts");
  assert.ok(!A.toString("base64url").includes(a.currentKeyId ?? "-"));
});

test("during a rotation the previous key opens what it sealed; the new key alone does not; reseal brings it over", () => {
  const before = sealing(A).seal("secret", PLACE);
  const rotating = sealing(B, A);
  assert.equal(rotating.open(before, PLACE), "secret");
  assert.equal(rotating.isCurrent(before), false);
  assert.throws(
    () => sealing(B).open(before, PLACE),
    /sealed under key .* neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS/,
  );
  const resealed = rotating.reseal(before, PLACE);
  assert.equal(resealed.outcome, "resealed");
  const after = resealed.outcome === "resealed" ? resealed.value : "";
  assert.equal(sealing(B).open(after, PLACE), "secret", "the new key alone opens it");
  assert.deepEqual(rotating.reseal(after, PLACE), { outcome: "current" });
  assert.throws(() => sealing(null).reseal(after, PLACE), /SECRETS_KEY is not set/);
});

test("without a key values are stored as they are, and a clear value is read as it is (then sealed by reseal)", () => {
  const none = sealing(null);
  assert.equal(none.protects, false);
  assert.equal(none.seal("whsec_x", PLACE), "whsec_x");
  assert.equal(sealing(A).open("whsec_x", PLACE), "whsec_x", "stored before the key existed");
  const sealed = sealing(A).reseal("whsec_x", PLACE);
  assert.ok(sealed.outcome === "resealed" && sealed.value.startsWith(SEALED_PREFIX));
});

test("a replay copy sealed under its Idempotency-Key and the key does not open with the Idempotency-Key alone", () => {
  const s = sealing(A);
  const place = "idempotency_keys.response_box:proj_1:live:key-1";
  const box = s.sealWithContext('{"secret":"sk_live_x"}', place, "key-1");
  assert.equal(openWith("key-1", box), null, "the Idempotency-Key alone (stored beside it) opens nothing");
  assert.equal(s.openWithContext(box, place, "key-1"), '{"secret":"sk_live_x"}');
  assert.throws(() => s.openWithContext(box, place, "key-2"), SealedValueError);
  assert.throws(() => s.open(box, place), SealedValueError, "not without its context either");
  // A copy stored the old way (the Idempotency-Key alone) still replays, and is sealed by reseal.
  const legacy = sealWith("key-1", '{"secret":"sk_live_y"}');
  assert.equal(s.openWithContext(legacy, place, "key-1"), '{"secret":"sk_live_y"}');
  const resealed = s.resealWithContext(legacy, place, "key-1");
  assert.ok(resealed.outcome === "resealed");
  assert.equal(openWith("key-1", resealed.value), null);
  // Without a key the old form is kept.
  assert.equal(openWith("key-1", sealing(null).sealWithContext("v", place, "key-1")), "v");
});

test("fingerprints are keyed: they match under every configured key, not without it; unkeyed ones still match", () => {
  const text = 'POST\n/v1/x\neu_1\n{"number":"4111111111111111"}';
  const keyed = sealing(A).fingerprint(text);
  assert.match(keyed, /^k1\.[A-Za-z0-9_-]{8}\.[0-9a-f]{64}$/);
  assert.ok(sealing(A).fingerprintMatches(keyed, text));
  assert.ok(!sealing(A).fingerprintMatches(keyed, `${text} `));
  assert.ok(sealing(B, A).fingerprintMatches(keyed, text), "while the old key is previous");
  assert.ok(!sealing(B).fingerprintMatches(keyed, text), "not once it is dropped");
  const plain = sealing(null).fingerprint(text);
  assert.match(plain, /^[0-9a-f]{64}$/);
  assert.ok(sealing(A).fingerprintMatches(plain, text), "stored before the key");
});
