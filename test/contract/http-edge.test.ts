import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";
import { AUTHENTICATION, INVALID, assertCommonHeaders, assertError, expectStatus } from "./helpers.ts";
import {
  buildWorld,
  call,
  exampleBody,
  label,
  objectsFor,
  pathObjectOf,
  requestCount,
  type Operation,
  type World,
} from "./surface.ts";

/**
 * The HTTP edge (issue 6): characters the store refuses are 400 before any database call, and
 * every response, including those the HTTP framework and Node's parser produce, has the spec's
 * error shape and headers.
 */
let world: World;
let url: string;

before(async () => {
  world = await buildWorld();
  await world.h.app.listen({ port: 0, host: "127.0.0.1" });
  const address = world.h.app.server.address();
  assert.ok(address && typeof address === "object");
  url = `http://127.0.0.1:${address.port}`;
});
after(() => world.h.close());

/** A response as read from a raw socket: status, lower-case headers, body. */
interface RawResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes raw bytes to the listening server and reads one response (bounded in time). */
async function raw(bytes: string | Buffer): Promise<RawResponse> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("no response within 5 s"));
    }, 5000);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      const [head = "", ...rest] = text.split("\r\n\r\n");
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(":");
        if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
      }
      resolve({ statusCode: Number(statusLine.split(" ")[1]), headers, body: rest.join("\r\n\r\n") });
    });
    socket.write(bytes);
  });
}

/** The spec's error contract on a raw response (same checks as assertError, for socket replies). */
function assertRawError(
  res: RawResponse,
  expected: { status: number; code: string; param: string | null },
): void {
  const shaped = {
    statusCode: res.statusCode,
    body: res.body,
    headers: res.headers,
    json: () => JSON.parse(res.body) as unknown,
  };
  assertError(shaped as never, { ...expected, type: INVALID });
}

function operations(filter: (op: Operation) => boolean): Operation[] {
  const selected = world.operations.filter(filter);
  assert.ok(selected.length > 0);
  return selected;
}

describe("Edge: characters the store refuses are 400 UNSUPPORTED_CHARACTER naming the field", () => {
  test("NUL in any JSON text field of any operation's body", async (t) => {
    for (const op of operations((o) => Object.keys(o.examples).length > 0)) {
      await t.test(label(op), async () => {
        const body = exampleBody(op, world.live) as Record<string, unknown>;
        for (const [field, value] of Object.entries(body)) {
          if (typeof value !== "string") continue;
          const objects = await objectsFor(world, op, world.live);
          const before = await requestCount(world.h);
          const res = await call(world, op, world.live, {
            objects,
            body: { ...body, [field]: `${value}\u0000x` },
          });
          const error = assertError(res, {
            status: 400,
            code: "UNSUPPORTED_CHARACTER",
            type: INVALID,
            param: field,
          });
          assert.deepEqual(error.details, {
            codePoint: 0,
            character: null,
            index: [...value].length,
            suggestion: null,
          });
          assert.equal(await requestCount(world.h), before);
        }
      });
    }
  });

  test("NUL deep inside a JSON body and in a key names the path to it", async () => {
    const op = operations((o) => o.operationId === "endUsers.create")[0] as Operation;
    const nested = await call(world, op, world.live, {
      body: { companyName: "A", sourceId: "nested", email: null, extra: { list: ["ok", "bad\u0000"] } },
    });
    assertError(nested, {
      status: 400,
      code: "UNSUPPORTED_CHARACTER",
      type: INVALID,
      param: "extra.list[1]",
    });
    const key = await call(world, op, world.live, { body: { companyName: "A", "so\u0000urce": "x" } });
    assertError(key, { status: 400, code: "UNSUPPORTED_CHARACTER", type: INVALID, param: "so\u0000urce" });
  });

  test("a lone UTF-16 surrogate in a JSON string is refused the same way", async () => {
    const op = operations((o) => o.operationId === "endUsers.create")[0] as Operation;
    const res = await call(world, op, world.live, {
      body: '{"companyName":"A\\ud800B","sourceId":"surrogate"}',
      headers: { "content-type": "application/json" },
    });
    const error = assertError(res, {
      status: 400,
      code: "UNSUPPORTED_CHARACTER",
      type: INVALID,
      param: "companyName",
    });
    assert.equal(error.details.codePoint, 0xd800);
  });

  test("%00 in any path id of any operation", async (t) => {
    for (const op of operations((o) => o.pathParams.some((p) => pathObjectOf(o, p) !== "integrationSlug"))) {
      await t.test(label(op), async () => {
        const param = op.pathParams.find((p) => pathObjectOf(op, p) !== "integrationSlug") as string;
        const kind = pathObjectOf(op, param);
        const before = await requestCount(world.h);
        const res = await call(world, op, world.live, { objects: { [kind]: "eu_\u0000" } });
        assertError(res, { status: 400, code: "UNSUPPORTED_CHARACTER", type: INVALID, param });
        assert.equal(await requestCount(world.h), before);
      });
    }
  });

  test("%00 in any query value of any operation", async (t) => {
    for (const op of operations((o) => o.queryParams.length > 0)) {
      await t.test(label(op), async () => {
        for (const name of op.queryParams) {
          const objects = await objectsFor(world, op, world.live);
          const res = await call(world, op, world.live, { objects, query: `${name}=a%00b` });
          assertError(res, { status: 400, code: "UNSUPPORTED_CHARACTER", type: INVALID, param: name });
        }
      });
    }
  });

  test("a NUL in a setup page's path is refused before its session is looked up", async () => {
    // The setup pages are not rate limited (the page polls), so only the shape and ID are checked.
    const res = await world.h.app.inject({ method: "GET", url: "/setup/authsess_%00?clientSecret=%00" });
    assert.equal(res.statusCode, 400, res.body);
    const error = res.json<{ error: { code: string; param: string; requestId: string } }>().error;
    assert.equal(error.code, "UNSUPPORTED_CHARACTER");
    assert.equal(error.param, "id");
    assert.equal(error.requestId, res.headers["svc-request-id"]);
  });
});

describe("Edge: what the HTTP framework rejects has the spec's shape and headers", () => {
  test("a malformed URL (bad percent-encoding) → 400 INVALID_PARAMETER", async () => {
    const res = await world.h.app.inject({
      method: "GET",
      url: "/v1/end-users/%E0%A4%A",
      headers: { authorization: `Bearer ${world.live.key}` },
    });
    assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: null });
    assertCommonHeaders(res);
  });

  test("a path segment longer than any ID → 404 RESOURCE_MISSING", async () => {
    const res = await world.h.app.inject({
      method: "GET",
      url: `/v1/end-users/${"a".repeat(2000)}`,
      headers: { authorization: `Bearer ${world.live.key}` },
    });
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: null });
    assertCommonHeaders(res);
  });

  test("an unsupported media type → 400 INVALID_PARAMETER naming Content-Type", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/vnd.unknown"]) {
      const res = await world.h.app.inject({
        method: "POST",
        url: "/v1/end-users",
        headers: { authorization: `Bearer ${world.live.key}`, "content-type": type },
        payload: "companyName=A",
      });
      assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "Content-Type" });
      assertCommonHeaders(res);
    }
  });

  test("bad JSON → 400 INVALID_JSON; prototype poisoning too", async () => {
    for (const payload of ["{", '{"a":1,}', '{"__proto__":{"x":1}}']) {
      const res = await world.h.app.inject({
        method: "POST",
        url: "/v1/end-users",
        headers: { authorization: `Bearer ${world.live.key}`, "content-type": "application/json" },
        payload,
      });
      assertError(res, { status: 400, code: "INVALID_JSON", type: INVALID, param: null });
    }
  });

  test("a JSON null body is not an empty body: 400, nothing changed", async () => {
    const headers = { authorization: `Bearer ${world.live.key}`, "content-type": "application/json" };
    const update = operations((o) => o.operationId === "endUsers.update")[0] as Operation;
    const objects = await objectsFor(world, update, world.live);
    const res = await world.h.app.inject({
      method: "POST",
      url: `/v1/end-users/${objects.endUser}`,
      headers,
      payload: "null",
    });
    assert.equal(res.statusCode, 400, res.body);
  });

  test("an empty body with a JSON content type works on DELETE and cancel", async () => {
    const headers = { authorization: `Bearer ${world.live.key}`, "content-type": "application/json" };
    const remove = operations((o) => o.operationId === "endUsers.delete")[0] as Operation;
    const objects = await objectsFor(world, remove, world.live);
    const deleted = await world.h.app.inject({
      method: "DELETE",
      url: `/v1/end-users/${objects.endUser}`,
      headers,
      payload: "",
    });
    expectStatus(deleted, 200);
    const cancel = operations((o) => o.operationId === "requests.cancel")[0] as Operation;
    const request = (await objectsFor(world, cancel, world.live)).request;
    const canceled = await world.h.app.inject({
      method: "POST",
      url: `/v1/requests/${request}/cancel`,
      headers,
      payload: "",
    });
    assert.equal(expectStatus<{ status: string }>(canceled, 200).status, "canceled");
  });

  test("a sync caller whose request is canceled gets 504 REQUEST_TIMEOUT_NOT_SENT; REQUEST_CANCELED stays on the Request (decision 0011)", async () => {
    // A sync call waits (nothing is sent: no connector); a cancel from elsewhere ends it.
    const pending = call(
      world,
      world.operations.find((o) => o.operationId === "ledger.healthCheck") as Operation,
      world.live,
      {
        sync: true,
      },
    );
    let requestId: string | undefined;
    for (let i = 0; i < 200 && !requestId; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const list = await world.h.app.inject({
        method: "GET",
        url: `/v1/requests?status=queued&endUserId=${world.live.endUser}&limit=100`,
        headers: { authorization: `Bearer ${world.live.key}` },
      });
      const rows = expectStatus<{ data: { id: string; mode: string }[] }>(list, 200).data;
      requestId = rows.find((r) => r.mode === "sync")?.id;
    }
    assert.ok(requestId, "the sync call is queued");
    expectStatus(
      await world.h.app.inject({
        method: "POST",
        url: `/v1/requests/${requestId}/cancel`,
        headers: { authorization: `Bearer ${world.live.key}` },
      }),
      200,
    );
    const res = await pending;
    assert.equal(res.statusCode, 504, res.body);
    const error = res.json<{
      error: {
        code: string;
        httpStatusCode: number | null;
        requestId: string;
        retryable: boolean;
        outcome: string;
        details: { requestId: string; reason: string };
      };
    }>().error;
    assert.equal(error.code, "REQUEST_TIMEOUT_NOT_SENT");
    assert.equal(error.httpStatusCode, 504, "the body's status is the response's");
    assert.deepEqual(error.details, { requestId, reason: "REQUEST_CANCELED" });
    assert.equal(error.outcome, "not_applicable", "a health check is a read");
    assert.equal(error.requestId, requestId);
    assert.equal(res.headers["svc-request-id"], requestId);
    // The Request itself keeps the code that lives only on Request resources.
    const request = expectStatus<{ status: string; error: { code: string; httpStatusCode: number | null } }>(
      await world.h.app.inject({
        method: "GET",
        url: `/v1/requests/${requestId}`,
        headers: { authorization: `Bearer ${world.live.key}` },
      }),
      200,
    );
    assert.equal(request.status, "canceled");
    assert.equal(request.error.code, "REQUEST_CANCELED");
    assert.equal(request.error.httpStatusCode, null);
  });
});

describe("Edge: what Node's HTTP parser rejects (real socket)", () => {
  test("oversized headers → the spec's error with its headers, not a bare 431", async () => {
    const res = await raw(`GET /v1/end-users HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    assertRawError(res, { status: 400, code: "INVALID_PARAMETER", param: null });
    assertCommonHeaders(res);
  });

  test("an over-long URL → the spec's error with its headers", async () => {
    const res = await raw(`GET /v1/end-users?x=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assertRawError(res, { status: 400, code: "INVALID_PARAMETER", param: null });
    assertCommonHeaders(res);
  });

  test("a control character in a header value → the spec's error with its headers", async () => {
    const res = await raw(`GET /v1/end-users HTTP/1.1\r\nHost: x\r\nSvc-End-User-Id: eu_\u0001x\r\n\r\n`);
    assertRawError(res, { status: 400, code: "INVALID_PARAMETER", param: null });
    assertCommonHeaders(res);
  });

  test("garbage instead of HTTP → the spec's error with its headers", async () => {
    const res = await raw("HELLO\r\n\r\n");
    assertRawError(res, { status: 400, code: "INVALID_PARAMETER", param: null });
  });

  test("the same calls through fetch still work after the socket errors (the server is fine)", async () => {
    const res = await fetch(`${url}/v1/end-users`, {
      headers: { authorization: `Bearer ${world.live.key}` },
    });
    assert.equal(res.status, 200);
    const missing = await fetch(`${url}/v1/end-users`);
    assert.equal(missing.status, 401);
    const body = (await missing.json()) as { error: { code: string; type: string } };
    assert.equal(body.error.type, AUTHENTICATION);
  });
});
