import assert from "node:assert/strict";
import { after, before, describe, test, type TestContext } from "node:test";
import { sql } from "kysely";
import { nextWork, interruptSent } from "../../src/requests/engine.ts";
import { findRequestById } from "../../src/store/requests.ts";
import { AUTHENTICATION, INVALID, PERMISSION, assertError, expectStatus } from "./helpers.ts";
import type { LightMyRequestResponse } from "fastify";
import {
  buildWorld,
  freshEndUser,
  objectsFor,
  type CallOptions,
  call,
  exampleBody,
  hasReadAndWrite,
  isApplicationOperation,
  isList,
  isWrite,
  label,
  pathObjectOf,
  queuedRequest,
  requestCount,
  sample,
  takesEndUserHeader,
  type Operation,
  type Tenant,
  type World,
} from "./surface.ts";

/**
 * The shared security suite (house style §2.5, issue 6): one parameterised suite over every
 * operation of the OpenAPI document. Authentication, read-only keys, isolation between projects
 * and between modes (a test key never sees live objects and a live key never sees test ones: 404
 * exactly like another project's), `Svc-End-User-Id` rules, unknown headers and parameters, and the
 * idempotency replay/reuse matrix. Every rejected call must leave the store without a new Request.
 */
let world: World;
let operations: Operation[];

before(async () => {
  world = await buildWorld();
  operations = sample(world.operations);
});
after(() => world.h.close());

/** Runs `body` once per operation that `filter` keeps (the list is only known once the app runs). */
function eachOperation(
  filter: (op: Operation) => boolean,
  body: (op: Operation) => Promise<void>,
): (t: TestContext) => Promise<void> {
  return async (t) => {
    const selected = operations.filter(filter);
    assert.ok(selected.length > 0, "the suite selects at least one operation");
    for (const op of selected) {
      await t.test(label(op), () => body(op));
    }
  };
}

/** Runs `action` and asserts that no Request was created by it. */
async function createsNoRequest<T>(action: () => Promise<T>): Promise<T> {
  const before = await requestCount(world.h);
  const result = await action();
  assert.equal(await requestCount(world.h), before, "a rejected call creates no Request");
  return result;
}

/** Calls `op` as `tenant` (its own path objects made first) and asserts that no Request was created. */
async function rejected(
  op: Operation,
  tenant: Tenant,
  options: CallOptions = {},
): Promise<LightMyRequestResponse> {
  const objects = options.objects ?? (await objectsFor(world, op, tenant));
  return createsNoRequest(() => call(world, op, tenant, { ...options, objects }));
}

/** Everything a tenant owns that a foreign key could see (end users, Requests, webhook endpoints). */
async function ownedIds(tenant: Tenant): Promise<Set<string>> {
  const ids = new Set([tenant.endUser, tenant.otherEndUser]);
  const isTest = tenant.mode === "test";
  const rows = await sql<{ id: string }>`
    select id from requests where project_id = ${tenant.projectId} and is_test = ${isTest}
    union all
    select id from webhook_endpoints where project_id = ${tenant.projectId} and is_test = ${isTest}
    union all
    select id from change_feed_subscriptions where project_id = ${tenant.projectId} and is_test = ${isTest}
  `.execute(world.h.deps.db);
  for (const row of rows.rows) ids.add(row.id);
  return ids;
}

describe("Security: authentication on every operation", () => {
  test(
    "no Authorization header → 401 API_KEY_MISSING",
    eachOperation(
      () => true,
      async (op) => {
        const res = await rejected(op, world.live, { key: null });
        assertError(res, {
          status: 401,
          code: "API_KEY_MISSING",
          type: AUTHENTICATION,
          param: "Authorization",
        });
      },
    ),
  );

  test(
    "an unknown secret key → 401 API_KEY_INVALID",
    eachOperation(
      () => true,
      async (op) => {
        const res = await rejected(op, world.live, { key: `sk_live_${"Z".repeat(32)}` });
        assertError(res, {
          status: 401,
          code: "API_KEY_INVALID",
          type: AUTHENTICATION,
          param: "Authorization",
        });
      },
    ),
  );

  test(
    "a publishable key used as a Bearer key → 401 API_KEY_INVALID",
    eachOperation(
      () => true,
      async (op) => {
        const res = await rejected(op, world.live, { key: world.live.publishableKey });
        assertError(res, {
          status: 401,
          code: "API_KEY_INVALID",
          type: AUTHENTICATION,
          param: "Authorization",
        });
      },
    ),
  );
});

describe("Security: read-only keys", () => {
  for (const tenant of ["live", "test"] as const) {
    test(
      `a ${tenant} read-only key on a write → 403 API_KEY_READ_ONLY, nothing created or changed`,
      eachOperation(isWrite, async (op) => {
        const t = world[tenant];
        const objects = await objectsFor(world, op, t);
        const before = await snapshot(t);
        const res = await rejected(op, t, {
          objects,
          key: t.readOnlyKey,
          ...(hasReadAndWrite(op) ? { example: "write" } : {}),
        });
        assertError(res, { status: 403, code: "API_KEY_READ_ONLY", type: PERMISSION, param: null });
        assert.deepEqual(await snapshot(t), before, "the tenant's end users are unchanged");
      }),
    );
  }

  test(
    "a read-only key may read (GET operations, and the `read` example of a body-decided operation)",
    eachOperation(
      (op) => op.method === "GET" || hasReadAndWrite(op),
      async (op) => {
        const res = await call(world, op, world.live, {
          objects: await objectsFor(world, op, world.live),
          key: world.live.readOnlyKey,
          ...(hasReadAndWrite(op) ? { example: "read" } : {}),
        });
        assert.ok(res.statusCode < 400, `${res.statusCode} ${res.body}`);
      },
    ),
  );
});

/**
 * The tenant's end users, its webhook endpoint and that endpoint's deliveries as the API shows them
 * (to assert that a refused write changed nothing).
 */
async function snapshot(tenant: Tenant): Promise<unknown> {
  const get = async (url: string): Promise<unknown> =>
    expectStatus(
      await world.h.app.inject({ method: "GET", url, headers: { authorization: `Bearer ${tenant.key}` } }),
      200,
    );
  return {
    endUsers: ((await get("/v1/end-users?limit=100")) as { data: unknown[] }).data,
    webhookEndpoint: await get(`/v1/webhook-endpoints/${tenant.webhookEndpoint}`),
    deliveries: (
      (await get(`/v1/webhook-endpoints/${tenant.webhookEndpoint}/deliveries`)) as { data: unknown[] }
    ).data,
  };
}

/** Owner → foreign key: another project, and the other mode of the same project both ways. */
const crossings: [string, () => Tenant, () => Tenant][] = [
  ["another project's", () => world.live, () => world.other],
  ["the live mode's (with a test key)", () => world.live, () => world.test],
  ["the test mode's (with a live key)", () => world.test, () => world.live],
];

describe("Security: isolation between projects and modes (404 RESOURCE_MISSING, nothing done)", () => {
  for (const [whose, ownerOf, foreignOf] of crossings) {
    test(
      `${whose} object in the path`,
      eachOperation(
        (op) =>
          op.pathParams.some((p) =>
            ["endUser", "request", "webhookEndpoint", "webhookDelivery", "changeFeedSubscription"].includes(
              pathObjectOf(op, p),
            ),
          ),
        async (op) => {
          const owner = ownerOf();
          const foreign = foreignOf();
          const request = await queuedRequest(world.h, owner);
          const before = await snapshot(owner);
          const res = await rejected(op, foreign, {
            objects: {
              endUser: owner.endUser,
              request,
              webhookEndpoint: owner.webhookEndpoint,
              webhookDelivery: owner.webhookDelivery,
              changeFeedSubscription: owner.changeFeedSubscription,
            },
          });
          assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
          assert.deepEqual(await snapshot(owner), before, "the owner's objects are unchanged");
          const stored = await findRequestById(world.h.deps.db, request);
          assert.equal(stored?.status, "queued", "the owner's Request is untouched");
        },
      ),
    );

    test(
      `${whose} end user in Svc-End-User-Id`,
      eachOperation(takesEndUserHeader, async (op) => {
        const owner = ownerOf();
        const res = await rejected(op, foreignOf(), { objects: { endUserHeader: owner.endUser } });
        assertError(res, {
          status: 404,
          code: "RESOURCE_MISSING",
          type: INVALID,
          param: "Svc-End-User-Id",
        });
      }),
    );

    test(
      `${whose} end user in the body's endUserId`,
      eachOperation(
        (op) =>
          Object.values(op.examples).some((e) => e !== null && typeof e === "object" && "endUserId" in e),
        async (op) => {
          const foreign = foreignOf();
          const body = {
            ...(exampleBody(op, foreign) as Record<string, unknown>),
            endUserId: ownerOf().endUser,
          };
          const res = await rejected(op, foreign, { body });
          assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "endUserId" });
        },
      ),
    );

    test(
      `${whose} objects never appear in a list`,
      eachOperation(isList, async (op) => {
        const owner = ownerOf();
        await queuedRequest(world.h, owner);
        const owned = await ownedIds(owner);
        const res = await call(world, op, foreignOf());
        const page = expectStatus<{ data: { id: string }[] }>(res, 200);
        const leaked = page.data.filter((item) => owned.has(item.id));
        assert.deepEqual(leaked, [], "no object of the owner is listed");
      }),
    );
  }

  test("a foreign list cursor is CURSOR_INVALID across modes", async () => {
    for (const op of operations.filter(isList)) {
      const first = expectStatus<{ nextCursor: string | null }>(
        await call(world, op, world.live, { query: "limit=1" }),
        200,
      );
      if (first.nextCursor === null) continue;
      const res = await call(world, op, world.test, {
        query: `cursor=${encodeURIComponent(first.nextCursor)}`,
      });
      assertError(res, { status: 400, code: "CURSOR_INVALID", type: INVALID, param: "cursor" });
    }
  });
});

describe("Security: Svc-End-User-Id", () => {
  test(
    "missing → 400 END_USER_ID_MISSING",
    eachOperation(takesEndUserHeader, async (op) => {
      const res = await rejected(op, world.live, { objects: { endUserHeader: null } });
      assertError(res, { status: 400, code: "END_USER_ID_MISSING", type: INVALID, param: "Svc-End-User-Id" });
    }),
  );

  test(
    "malformed → 400 INVALID_PARAMETER",
    eachOperation(takesEndUserHeader, async (op) => {
      for (const value of [
        "eu_nope",
        "req_01m82feyw9ext950wsykrw9k42",
        " ",
        "eu_01M82FEYW9EXT950WSYKRW9K42",
      ]) {
        const res = await rejected(op, world.live, { objects: { endUserHeader: value } });
        assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "Svc-End-User-Id" });
      }
    }),
  );

  test(
    "well-formed but unknown → 404 RESOURCE_MISSING",
    eachOperation(takesEndUserHeader, async (op) => {
      const res = await rejected(op, world.live, {
        objects: { endUserHeader: "eu_01m82feyw9ext950wsykrw9k42" },
      });
      assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "Svc-End-User-Id" });
    }),
  );
});

describe("Security: strict input", () => {
  test(
    "an unknown Svc-* header → 400 UNKNOWN_HEADER naming it",
    eachOperation(
      () => true,
      async (op) => {
        const res = await rejected(op, world.live, { headers: { "svc-mystery-option": "1" } });
        assertError(res, { status: 400, code: "UNKNOWN_HEADER", type: INVALID, param: "Svc-Mystery-Option" });
      },
    ),
  );

  test(
    "an unknown query parameter → 400 UNKNOWN_PARAMETER naming it",
    eachOperation(
      () => true,
      async (op) => {
        const res = await rejected(op, world.live, { query: "mysteryOption=1" });
        assertError(res, { status: 400, code: "UNKNOWN_PARAMETER", type: INVALID, param: "mysteryOption" });
      },
    ),
  );

  test(
    "an unknown body field → 400 UNKNOWN_PARAMETER naming it",
    eachOperation(
      (op) => Object.keys(op.examples).length > 0,
      async (op) => {
        const body = { ...(exampleBody(op, world.live) as Record<string, unknown>), mysteryField: 1 };
        const res = await rejected(op, world.live, { body });
        assertError(res, { status: 400, code: "UNKNOWN_PARAMETER", type: INVALID, param: "mysteryField" });
      },
    ),
  );
});

/** Operations that honour `Idempotency-Key`: every write and every application operation. */
const idempotent = (op: Operation): boolean => isWrite(op) || isApplicationOperation(op);

let keySequence = 0;
const freshKey = (): string => `security-suite-${++keySequence}`;

/** The body with one string field changed (or another example), or null when the body is fixed. */
function otherBody(op: Operation, body: unknown): unknown {
  if (hasReadAndWrite(op)) return { ...(body as Record<string, unknown>), ...(op.examples.read as object) };
  const second = Object.values(op.examples)[1];
  if (second !== undefined) return { ...(body as Record<string, unknown>), ...(second as object) };
  if (body === null || typeof body !== "object") return null;
  const texts = Object.entries(body as Record<string, unknown>).filter(
    (entry): entry is [string, string] =>
      typeof entry[1] === "string" && !["endUserId", "publishableKey"].includes(entry[0]),
  );
  // Free text preferred (enumerations come first in the examples, free text last); a decimal gets
  // another last digit. Either way still valid input of the same length, but a different body.
  const decimal = /^-?\d+(\.\d+)?$/;
  const coded = (value: string): boolean =>
    decimal.test(value) || /^\d{4}-\d{2}-\d{2}/.test(value) || /^[0-9A-F]+-\d+$/.test(value);
  const field =
    texts.findLast(([, value]) => !coded(value)) ?? texts.findLast(([, value]) => decimal.test(value));
  if (!field) return null;
  const [name, value] = field;
  const last = value.slice(-1);
  const replacement = decimal.test(value)
    ? last === "9"
      ? "8"
      : String(Number(last) + 1)
    : last === "X"
      ? "Y"
      : "X";
  return { ...(body as Record<string, unknown>), [name]: `${value.slice(0, -1)}${replacement}` };
}

describe("Security: idempotency replay and reuse", () => {
  test(
    "the same key and the same request replay the first answer (an application operation's is its Request)",
    eachOperation(idempotent, async (op) => {
      const key = freshKey();
      const objects = await objectsFor(world, op, world.live);
      const body = exampleBody(op, world.live);
      const first = await call(world, op, world.live, { objects, body, headers: { "idempotency-key": key } });
      const before = await requestCount(world.h);
      const again = await call(world, op, world.live, { objects, body, headers: { "idempotency-key": key } });
      assert.equal(await requestCount(world.h), before, "a replay creates no Request");
      assert.equal(again.statusCode, first.statusCode, again.body);
      if (isApplicationOperation(op)) {
        assert.equal(first.statusCode, 202, first.body);
        assert.equal(
          again.headers["svc-request-id"],
          first.headers["svc-request-id"],
          "the original Request's ID",
        );
        assert.equal(again.json<{ id: string }>().id, first.json<{ id: string }>().id);
      } else if (first.statusCode < 400) {
        assert.equal(again.headers["idempotent-replayed"], "true");
        assert.deepEqual(again.json(), first.json());
      }
    }),
  );

  test(
    "the same key with a different body → 422 IDEMPOTENCY_KEY_REUSED",
    eachOperation(
      (op) => idempotent(op) && otherBody(op, exampleBody(op, world.live)) !== null,
      async (op) => {
        const key = freshKey();
        const objects = await objectsFor(world, op, world.live);
        const body = exampleBody(op, world.live);
        const first = await call(world, op, world.live, {
          objects,
          body,
          headers: { "idempotency-key": key },
        });
        assert.ok(first.statusCode < 300, first.body);
        const res = await rejected(op, world.live, {
          objects,
          body: otherBody(op, body),
          headers: { "idempotency-key": key },
        });
        assertError(res, {
          status: 422,
          code: "IDEMPOTENCY_KEY_REUSED",
          type: INVALID,
          param: "Idempotency-Key",
        });
      },
    ),
  );

  test(
    "the same key on another path (another object) → 422 IDEMPOTENCY_KEY_REUSED",
    eachOperation(
      (op) => idempotent(op) && op.pathParams.some((p) => pathObjectOf(op, p) === "endUser"),
      async (op) => {
        const key = freshKey();
        const body = exampleBody(op, world.live);
        const objects = await objectsFor(world, op, world.live);
        await call(world, op, world.live, { objects, body, headers: { "idempotency-key": key } });
        const res = await rejected(op, world.live, {
          body,
          objects: { endUser: world.live.otherEndUser },
          headers: { "idempotency-key": key },
        });
        assertError(res, {
          status: 422,
          code: "IDEMPOTENCY_KEY_REUSED",
          type: INVALID,
          param: "Idempotency-Key",
        });
      },
    ),
  );

  test(
    "the same key for another end user (Svc-End-User-Id) → 422 IDEMPOTENCY_KEY_REUSED",
    eachOperation(
      (op) => idempotent(op) && takesEndUserHeader(op),
      async (op) => {
        const key = freshKey();
        expectStatus(await call(world, op, world.live, { headers: { "idempotency-key": key } }), 202);
        const res = await rejected(op, world.live, {
          objects: { endUserHeader: world.live.otherEndUser },
          headers: { "idempotency-key": key },
        });
        assertError(res, {
          status: 422,
          code: "IDEMPOTENCY_KEY_REUSED",
          type: INVALID,
          param: "Idempotency-Key",
        });
      },
    ),
  );

  test(
    "a key is scoped to its mode: the same key with a test key starts its own request",
    eachOperation(
      (op) => idempotent(op) && isApplicationOperation(op),
      async (op) => {
        const key = freshKey();
        const live = expectStatus<{ id: string }>(
          await call(world, op, world.live, { headers: { "idempotency-key": key } }),
          202,
        );
        const test = expectStatus<{ id: string }>(
          await call(world, op, world.test, { headers: { "idempotency-key": key } }),
          202,
        );
        assert.notEqual(test.id, live.id);
      },
    ),
  );

  test(
    "a key whose request reached the application and failed replays it instead of running again",
    eachOperation(isApplicationOperation, async (op) => {
      const key = freshKey();
      // An end user of its own, so that this request is next in its connection's queue.
      const endUser = await freshEndUser(world, world.live);
      const objects = { endUser, endUserHeader: endUser };
      const first = expectStatus<{ id: string; connectionId: string }>(
        await call(world, op, world.live, { objects, headers: { "idempotency-key": key } }),
        202,
      );
      // The connector takes it (it is `sent`), then its session breaks: a read fails, a write's
      // outcome becomes unknown. Either way it reached the application.
      const work = await nextWork(world.h.deps, first.connectionId, "security-suite-ticket", "16.0");
      assert.equal(work?.kind === "request" ? work.row.id : null, first.id, "the connector took it");
      const sent = await findRequestById(world.h.deps.db, first.id);
      assert.ok(sent);
      assert.ok(await interruptSent(world.h.deps, sent, "the session broke"));
      const again = await rejected(op, world.live, { objects, headers: { "idempotency-key": key } });
      assert.equal(again.headers["svc-request-id"], first.id, again.body);
      assert.equal(again.json<{ id: string }>().id, first.id);
    }),
  );
});
