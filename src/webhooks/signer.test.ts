import assert from "node:assert/strict";
import { test } from "node:test";
import { Webhook } from "standardwebhooks";
import { newSecret, sign, signatureHeaders, signingSecrets } from "./signer.ts";

/**
 * Our signer against the Standard Webhooks test vectors
 * (`../shared/reference/standard-webhooks-vectors.md`) and the official `standardwebhooks` package
 * as the oracle: a receiver using the reference library must accept every signature we make.
 */
const OLD = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const NEW = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const DERIVED_ID = "evt_01h455vb4pex5vsknk084sn02q";
const DERIVED_TS = 1700000000;
const DERIVED_BODY =
  '{"type":"request.completed","timestamp":"2023-11-14T22:13:20.000Z","data":{"id":"req_01h455vb4pex5vsknk084sn02q","object":"request","status":"succeeded"}}';

const vectors = [
  {
    name: "vector A (every reference library)",
    secret: OLD,
    id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
    ts: 1614265330,
    body: '{"test": 2432232314}',
    signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
  },
  {
    name: "vector B (Rust library)",
    secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
    id: "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
    ts: 1649367553,
    body: '{"email":"test@example.com","username":"test_user"}',
    signature: "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=",
  },
  {
    name: "derived typeid-old",
    secret: OLD,
    id: DERIVED_ID,
    ts: DERIVED_TS,
    body: DERIVED_BODY,
    signature: "v1,JnRR6FgkmkV3HVFXj2/c35BocI/4NcLeK6JBr1oEZa4=",
  },
  {
    name: "derived typeid-new (32-byte key)",
    secret: NEW,
    id: DERIVED_ID,
    ts: DERIVED_TS,
    body: DERIVED_BODY,
    signature: "v1,jclcRT7au1iFNoKsW5UbAkowLU6SBM/wbSwHBHXGLWY=",
  },
  {
    name: "derived UTF-8 body",
    secret: OLD,
    id: DERIVED_ID,
    ts: DERIVED_TS,
    body: '{"memo":"Café – €5 ✓"}',
    signature: "v1,ogyYhtxJfHSaQq60XdDrRm4xhZ2v8JuC6zy5pUvAqOE=",
  },
  {
    name: "derived empty body",
    secret: OLD,
    id: DERIVED_ID,
    ts: DERIVED_TS,
    body: "",
    signature: "v1,FEE+W9/pAQCCAU1gXkHbmVQx211+4LuZ8JG50JrIIQA=",
  },
];

/** `standardwebhooks` verify with the wall clock pinned to the message's timestamp. */
function libraryVerifies(secret: string, id: string, ts: number, body: string, signature: string): boolean {
  const realNow = Date.now;
  Date.now = () => ts * 1000;
  try {
    new Webhook(secret).verify(body, {
      "webhook-id": id,
      "webhook-timestamp": String(ts),
      "webhook-signature": signature,
    });
    return true;
  } catch {
    return false;
  } finally {
    Date.now = realNow;
  }
}

for (const v of vectors) {
  test(`the signer reproduces the published signature: ${v.name}`, () => {
    assert.equal(sign(v.secret, v.id, v.ts, v.body), v.signature);
    assert.ok(libraryVerifies(v.secret, v.id, v.ts, v.body, v.signature));
  });
}

test("the rotation header carries the new signature first, then the previous one, and both secrets verify it", () => {
  const headers = signatureHeaders([NEW, OLD], DERIVED_ID, DERIVED_TS, DERIVED_BODY);
  assert.equal(
    headers["webhook-signature"],
    "v1,jclcRT7au1iFNoKsW5UbAkowLU6SBM/wbSwHBHXGLWY= v1,JnRR6FgkmkV3HVFXj2/c35BocI/4NcLeK6JBr1oEZa4=",
  );
  assert.equal(headers["webhook-id"], DERIVED_ID);
  assert.equal(headers["webhook-timestamp"], String(DERIVED_TS));
  for (const secret of [NEW, OLD])
    assert.ok(libraryVerifies(secret, DERIVED_ID, DERIVED_TS, DERIVED_BODY, headers["webhook-signature"]));
});

test("a signature made with another secret, another body, id or timestamp is rejected by the library", () => {
  const good = sign(OLD, DERIVED_ID, DERIVED_TS, DERIVED_BODY);
  assert.ok(!libraryVerifies(NEW, DERIVED_ID, DERIVED_TS, DERIVED_BODY, good));
  assert.ok(!libraryVerifies(OLD, DERIVED_ID, DERIVED_TS, `${DERIVED_BODY} `, good));
  assert.ok(!libraryVerifies(OLD, "evt_01h455vb4pex5vsknk084sn02r", DERIVED_TS, DERIVED_BODY, good));
  assert.ok(!libraryVerifies(OLD, DERIVED_ID, DERIVED_TS + 1, DERIVED_BODY, good));
});

test("new secrets are whsec_ + base64 of 32 random bytes, distinct, and usable by the library", () => {
  const a = newSecret();
  const b = newSecret();
  assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(Buffer.from(a.slice("whsec_".length), "base64").length, 32);
  assert.notEqual(a, b);
  const signature = sign(a, DERIVED_ID, DERIVED_TS, DERIVED_BODY);
  assert.ok(libraryVerifies(a, DERIVED_ID, DERIVED_TS, DERIVED_BODY, signature));
  assert.ok(!libraryVerifies(b, DERIVED_ID, DERIVED_TS, DERIVED_BODY, signature));
});

test("the previous secret signs until previousSecretExpiresAt, not at or after it", () => {
  const expires = new Date(1_000_000);
  const endpoint = { secret: NEW, previousSecret: OLD, previousSecretExpiresAt: expires };
  assert.deepEqual(signingSecrets(endpoint, 999_999), [NEW, OLD]);
  assert.deepEqual(signingSecrets(endpoint, 1_000_000), [NEW]);
  assert.deepEqual(signingSecrets({ secret: NEW, previousSecret: null, previousSecretExpiresAt: null }, 0), [
    NEW,
  ]);
});
