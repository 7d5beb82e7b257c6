import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { createProject } from "../../src/tenancy/api-keys.ts";
import { Client, INVALID, assertError, expectStatus, type EndUser } from "./helpers.ts";

/**
 * Spec: Conventions ("Request bodies are strict", unknown `Svc-*` headers), Limits (body size,
 * platform list `limit`, Idempotency-Key) and the Idempotency-Key rules of the headers table.
 */
let h: TestApp;
let client: Client;

before(async () => {
  h = await buildTestApp(null);
  client = new Client(h.app, h.project.keys.secretLive);
});
after(() => h.close());

const json = { "content-type": "application/json" };

/** Runs `call` and asserts the project's end users are exactly as before. */
async function assertNothingCreated(call: () => Promise<void>): Promise<void> {
  const before = await client.endUserIds();
  await call();
  assert.deepEqual(await client.endUserIds(), before, "the end user list is unchanged");
}

describe("Conventions: malformed bodies", () => {
  test("a malformed JSON body returns 400 INVALID_JSON and creates nothing", async () => {
    await assertNothingCreated(async () => {
      const res = await client.request("POST", "/v1/end-users", {
        headers: json,
        body: '{"companyName": "A",',
      });
      assertError(res, { status: 400, code: "INVALID_JSON", type: INVALID, param: null });
    });
  });

  test("a JSON array body returns 400 INVALID_PARAMETER", async () => {
    await assertNothingCreated(async () => {
      const res = await client.request("POST", "/v1/end-users", {
        body: [{ companyName: "A", sourceId: "a" }],
      });
      assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "body" });
    });
  });

  test("a missing required field returns 400 INVALID_PARAMETER naming the field", async () => {
    await assertNothingCreated(async () => {
      const res = await client.request("POST", "/v1/end-users", { body: { sourceId: "missing-company" } });
      assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "companyName" });
    });
  });
});

describe("Conventions: unknown parameters and headers", () => {
  test("an unknown body field returns 400 UNKNOWN_PARAMETER naming the field, and creates nothing", async () => {
    await assertNothingCreated(async () => {
      const res = await client.request("POST", "/v1/end-users", {
        body: { companyName: "A", sourceId: "unknown-field", nickname: "x" },
      });
      assertError(res, { status: 400, code: "UNKNOWN_PARAMETER", type: INVALID, param: "nickname" });
    });
  });

  test("an unknown field on update returns 400 UNKNOWN_PARAMETER and leaves the end user unchanged", async () => {
    const created = await client.createEndUser({ companyName: "Before" });
    const res = await client.request("POST", `/v1/end-users/${created.id}`, {
      body: { companyName: "After", colour: "red" },
    });
    assertError(res, { status: 400, code: "UNKNOWN_PARAMETER", type: INVALID, param: "colour" });
    const now = expectStatus<EndUser>(await client.request("GET", `/v1/end-users/${created.id}`), 200);
    assert.equal(now.companyName, "Before");
  });

  test("an unknown query parameter on a list returns 400 UNKNOWN_PARAMETER naming it", async () => {
    const res = await client.request("GET", "/v1/end-users?sort=asc");
    assertError(res, { status: 400, code: "UNKNOWN_PARAMETER", type: INVALID, param: "sort" });
  });

  test("a query parameter on an operation without query parameters returns 400 UNKNOWN_PARAMETER", async () => {
    const created = await client.createEndUser();
    const res = await client.request("GET", `/v1/end-users/${created.id}?expand=connections`);
    assertError(res, { status: 400, code: "UNKNOWN_PARAMETER", type: INVALID, param: "expand" });
  });

  test("an unknown Svc- header returns 400 UNKNOWN_HEADER naming the header, and creates nothing", async () => {
    await assertNothingCreated(async () => {
      const res = await client.request("POST", "/v1/end-users", {
        headers: { "Svc-Foo": "x" },
        body: { companyName: "A", sourceId: "unknown-header" },
      });
      assertError(res, { status: 400, code: "UNKNOWN_HEADER", type: INVALID, param: "Svc-Foo" });
    });
  });

  test("an unknown Svc- header on a read returns 400 UNKNOWN_HEADER", async () => {
    const res = await client.request("GET", "/v1/end-users", { headers: { "svc-foo": "x" } });
    assertError(res, { status: 400, code: "UNKNOWN_HEADER", type: INVALID, param: "Svc-Foo" });
  });

  test("other unknown headers (not Svc-) are ignored", async () => {
    const res = await client.request("GET", "/v1/end-users", { headers: { "x-trace": "abc" } });
    expectStatus(res, 200);
  });
});

describe("Conventions: field rules", () => {
  for (const value of ["0", "101", "1.5", "abc", ""]) {
    test(`a list with limit=${JSON.stringify(value)} returns 400 INVALID_PARAMETER naming limit`, async () => {
      const res = await client.request("GET", `/v1/end-users?limit=${value}`);
      assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "limit" });
    });
  }

  test("limit=1 and limit=100 are accepted", async () => {
    expectStatus(await client.request("GET", "/v1/end-users?limit=1"), 200);
    expectStatus(await client.request("GET", "/v1/end-users?limit=100"), 200);
  });

  test("a malformed email returns 400 INVALID_PARAMETER naming email, and creates nothing", async () => {
    await assertNothingCreated(async () => {
      const res = await client.request("POST", "/v1/end-users", {
        body: { companyName: "A", sourceId: "bad-email", email: "not-an-email" },
      });
      assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "email" });
    });
  });

  test("a companyName over 255 characters returns 400 STRING_TOO_LONG, and creates nothing", async () => {
    await assertNothingCreated(async () => {
      const res = await client.request("POST", "/v1/end-users", {
        body: { companyName: "x".repeat(256), sourceId: "too-long" },
      });
      assertError(res, { status: 400, code: "STRING_TOO_LONG", type: INVALID, param: "companyName" });
    });
  });

  test("a companyName of exactly 255 characters is accepted", async () => {
    const created = await client.createEndUser({ companyName: "x".repeat(255) });
    assert.equal(created.companyName.length, 255);
  });

  test("a wrongly typed field returns 400 INVALID_PARAMETER naming the field", async () => {
    await assertNothingCreated(async () => {
      const res = await client.request("POST", "/v1/end-users", {
        body: { companyName: 42, sourceId: "typed" },
      });
      assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "companyName" });
    });
  });
});

describe("Limits: request body size", () => {
  test("a body over 20 MiB returns 413 PAYLOAD_TOO_LARGE and creates nothing", async () => {
    await assertNothingCreated(async () => {
      const payload = JSON.stringify({ companyName: "x".repeat(20 * 1024 * 1024 + 16), sourceId: "huge" });
      const res = await client.request("POST", "/v1/end-users", { headers: json, body: payload });
      assertError(res, { status: 413, code: "PAYLOAD_TOO_LARGE", type: INVALID, param: null });
    });
  });
});

describe("Conventions: Idempotency-Key on end users", () => {
  for (const [label, key] of [
    ["empty", ""],
    ["256 characters", "k".repeat(256)],
    ["non-ASCII", "clé-é"],
  ] as const) {
    test(`an ${label} Idempotency-Key returns 400 IDEMPOTENCY_KEY_INVALID and creates nothing`, async () => {
      await assertNothingCreated(async () => {
        const res = await client.request("POST", "/v1/end-users", {
          headers: { "idempotency-key": key },
          body: { companyName: "A", sourceId: `idem-invalid-${label}` },
        });
        assertError(res, {
          status: 400,
          code: "IDEMPOTENCY_KEY_INVALID",
          type: INVALID,
          param: "Idempotency-Key",
        });
      });
    });
  }

  test("an Idempotency-Key of 255 printable ASCII characters is accepted", async () => {
    const res = await client.request("POST", "/v1/end-users", {
      headers: { "idempotency-key": "k".repeat(254) + "~" },
      body: { companyName: "A", sourceId: "idem-255" },
    });
    expectStatus(res, 201);
  });

  test("repeating a create with the same key and body replays the response and creates one end user", async () => {
    const before = await client.endUserIds();
    const send = () =>
      client.request("POST", "/v1/end-users", {
        headers: { "idempotency-key": "eu-replay-1" },
        body: { companyName: "Replay Ltd", sourceId: "replay-1" },
      });
    const first = await send();
    const created = expectStatus<EndUser>(first, 201);
    assert.equal(first.headers["idempotent-replayed"], undefined);
    const second = await send();
    assert.deepEqual(expectStatus<EndUser>(second, 201), created);
    assert.equal(second.headers["idempotent-replayed"], "true");
    assert.deepEqual(await client.endUserIds(), [created.id, ...before]);
  });

  test("reusing a key with a different body returns 422 IDEMPOTENCY_KEY_REUSED and creates nothing", async () => {
    expectStatus(
      await client.request("POST", "/v1/end-users", {
        headers: { "idempotency-key": "eu-reuse-1" },
        body: { companyName: "First", sourceId: "reuse-1" },
      }),
      201,
    );
    await assertNothingCreated(async () => {
      const res = await client.request("POST", "/v1/end-users", {
        headers: { "idempotency-key": "eu-reuse-1" },
        body: { companyName: "Second", sourceId: "reuse-2" },
      });
      assertError(res, {
        status: 422,
        code: "IDEMPOTENCY_KEY_REUSED",
        type: INVALID,
        param: "Idempotency-Key",
      });
    });
  });

  test("reusing a key on another operation returns 422 IDEMPOTENCY_KEY_REUSED", async () => {
    const created = await client.createEndUser({ companyName: "Keyed" });
    expectStatus(
      await client.request("POST", "/v1/end-users", {
        headers: { "idempotency-key": "eu-reuse-op" },
        body: { companyName: "Op", sourceId: "reuse-op" },
      }),
      201,
    );
    const res = await client.request("POST", `/v1/end-users/${created.id}`, {
      headers: { "idempotency-key": "eu-reuse-op" },
      body: { companyName: "Op" },
    });
    assertError(res, {
      status: 422,
      code: "IDEMPOTENCY_KEY_REUSED",
      type: INVALID,
      param: "Idempotency-Key",
    });
    const now = expectStatus<EndUser>(await client.request("GET", `/v1/end-users/${created.id}`), 200);
    assert.equal(now.companyName, "Keyed");
  });

  test("a key whose first attempt failed does not hold the key", async () => {
    await client.createEndUser({ sourceId: "taken-source" });
    const failed = await client.request("POST", "/v1/end-users", {
      headers: { "idempotency-key": "eu-after-failure" },
      body: { companyName: "A", sourceId: "taken-source" },
    });
    assertError(failed, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "sourceId" });
    const retried = await client.request("POST", "/v1/end-users", {
      headers: { "idempotency-key": "eu-after-failure" },
      body: { companyName: "A", sourceId: "free-source" },
    });
    expectStatus(retried, 201);
  });

  test("the same key in another project is independent", async () => {
    const other = await createProject(h.deps, { name: "Other" });
    const otherClient = new Client(h.app, other.keys.secretLive);
    const body = { companyName: "Shared key", sourceId: "shared-key" };
    const mine = expectStatus<EndUser>(
      await client.request("POST", "/v1/end-users", { headers: { "idempotency-key": "shared" }, body }),
      201,
    );
    const theirs = await otherClient.request("POST", "/v1/end-users", {
      headers: { "idempotency-key": "shared" },
      body,
    });
    assert.notEqual(expectStatus<EndUser>(theirs, 201).id, mine.id);
    assert.equal(theirs.headers["idempotent-replayed"], undefined);
  });
});
