import assert from "node:assert/strict";
import { after, before, describe, test, type TestContext } from "node:test";
import { isDeepStrictEqual } from "node:util";
import type { LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import { nextWork, interruptSent } from "../../src/requests/engine.ts";
import { findRequestById } from "../../src/store/requests.ts";
import { readySession } from "../../src/testing/queue.ts";
import { AUTHENTICATION, INVALID, PERMISSION, assertError, expectStatus, stopwatch } from "./helpers.ts";
import { isFreeText } from "./schema-values.ts";
import {
  buildWorld,
  freshEndUser,
  objectsFor,
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
  takesEndUserHeader,
  type JsonSchema,
  type Operation,
  type PathObject,
  type Tenant,
  type World,
} from "./surface.ts";

/**
 * The shared security suite (house style §2.5, issue 6): one parameterised suite over every
 * operation of the OpenAPI document. Authentication, read-only keys, isolation between projects
 * and between modes (a test key never sees live objects and a live key never sees test ones: 404
 * exactly like another project's), `Svc-End-User-Id` rules, unknown headers and parameters, and the
 * idempotency replay/reuse matrix. Every rejected call must leave the store without a new Request.
 * Every operation is checked, none sampled (issue 14), against one service: each check is one test
 * that reports every failing operation together, and proves "nothing queued" with one count before
 * and after the whole group.
 */
let world: World;
let operations: Operation[];

before(async () => {
  world = await buildWorld();
  operations = world.operations;
});
after(() => world.h.close());

/** Something a rejected call must leave as it was, read before and after a group of calls. */
interface Witness {
  /** What a change means, for failure messages (`created a Request`). */
  change: string;
  read: () => Promise<unknown>;
}

/** The store's Request count: a rejected call creates none. */
const NO_REQUEST: Witness = { change: "created a Request", read: () => requestCount(world.h) };

interface WalkOptions {
  /** The path objects each operation is called with, made before anything is witnessed. */
  objects?: (op: Operation) => Promise<Partial<Record<PathObject, string>>>;
  /** What the calls must leave unchanged (default: no Request created; none when calls queue on purpose). */
  witnesses?: Witness[];
}

const everyOne = (): boolean => true;

/**
 * Reads `Svc-End-User-Id`: every application operation except those the application cannot do,
 * which refuse every call (422 LEDGER_OPERATION_UNSUPPORTED) before reading any input.
 */
const namesEndUser = (op: Operation): boolean => takesEndUserHeader(op) && !op.alwaysRefused;

/**
 * Runs `check` once per operation that `filter` keeps, as one test: every operation is checked
 * and every failure is reported together, one line each. The witnesses are read once before and
 * once after the whole group (a store round trip per group, not per call); when one changed, the
 * group runs again one operation at a time to name the operations that changed it. Prints how
 * many operations were checked; a check of every operation asserts that this is the document's
 * count (no sampling).
 */
function eachOperation(
  filter: (op: Operation) => boolean,
  check: (op: Operation, objects: Partial<Record<PathObject, string>>) => Promise<void>,
  options: WalkOptions = {},
): (t: TestContext) => Promise<void> {
  return async (t) => {
    const selected = operations.filter(filter);
    assert.ok(selected.length > 0, "the suite selects at least one operation");
    const spent = stopwatch();
    const objectsOf = options.objects ?? ((op: Operation) => objectsFor(world, op, world.live));
    const prepared = new Map<Operation, Partial<Record<PathObject, string>>>();
    for (const op of selected) prepared.set(op, await objectsOf(op));
    const witnesses = options.witnesses ?? [NO_REQUEST];
    const failures = new Map<Operation, string[]>();
    const fail = (op: Operation, problem: string): void => {
      failures.set(op, [...(failures.get(op) ?? []), problem]);
    };
    const checkOne = async (op: Operation): Promise<string | null> => {
      try {
        await check(op, prepared.get(op) ?? {});
        return null;
      } catch (error) {
        return (error instanceof Error ? error.message : String(error)).slice(0, 800);
      }
    };
    const read = (): Promise<unknown[]> => Promise.all(witnesses.map((w) => w.read()));
    const before = await read();
    for (const op of selected) {
      const problem = await checkOne(op);
      if (problem !== null) fail(op, problem);
    }
    if (!isDeepStrictEqual(await read(), before)) {
      for (const op of selected) {
        const alone = await read();
        await checkOne(op);
        const after = await read();
        witnesses.forEach((w, i) => {
          if (!isDeepStrictEqual(after[i], alone[i])) fail(op, w.change);
        });
      }
    }
    t.diagnostic(
      `${selected.length} operations checked; the OpenAPI document has ${world.documentOperations} (${spent()})`,
    );
    if (filter === everyOne) {
      assert.equal(selected.length, world.documentOperations, "every operation is checked, none sampled");
    }
    const lines = [...failures].map(([op, problems]) => `${label(op)}: ${problems.join("; ")}`);
    assert.ok(lines.length === 0, `${lines.length} operations failed:\n${lines.join("\n")}`);
  };
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
    eachOperation(everyOne, async (op, objects) => {
      const res = await call(world, op, world.live, { objects, key: null });
      assertError(res, {
        status: 401,
        code: "API_KEY_MISSING",
        type: AUTHENTICATION,
        param: "Authorization",
      });
    }),
  );

  test(
    "an unknown secret key → 401 API_KEY_INVALID",
    eachOperation(everyOne, async (op, objects) => {
      const res = await call(world, op, world.live, { objects, key: `sk_live_${"Z".repeat(32)}` });
      assertError(res, {
        status: 401,
        code: "API_KEY_INVALID",
        type: AUTHENTICATION,
        param: "Authorization",
      });
    }),
  );

  test(
    "a publishable key used as a Bearer key → 401 API_KEY_INVALID",
    eachOperation(everyOne, async (op, objects) => {
      const res = await call(world, op, world.live, { objects, key: world.live.publishableKey });
      assertError(res, {
        status: 401,
        code: "API_KEY_INVALID",
        type: AUTHENTICATION,
        param: "Authorization",
      });
    }),
  );
});

describe("Security: read-only keys", () => {
  for (const tenant of ["live", "test"] as const) {
    test(
      `a ${tenant} read-only key on a write → 403 API_KEY_READ_ONLY, nothing created or changed`,
      eachOperation(
        isWrite,
        async (op, objects) => {
          const t = world[tenant];
          const res = await call(world, op, t, {
            objects,
            key: t.readOnlyKey,
            ...(hasReadAndWrite(op) ? { example: "write" } : {}),
          });
          // A batch names its write member (decision 0014); any other call is refused as a whole.
          const param = op.operationId === "ledger.batch" ? "requests[0]" : null;
          assertError(res, { status: 403, code: "API_KEY_READ_ONLY", type: PERMISSION, param });
        },
        {
          objects: (op) => objectsFor(world, op, world[tenant]),
          witnesses: [
            NO_REQUEST,
            { change: "changed the tenant's objects", read: () => snapshot(world[tenant]) },
          ],
        },
      ),
    );
  }

  test(
    "a read-only key may read (GET operations, and the `read` example of a body-decided operation)",
    eachOperation(
      (op) => op.method === "GET" || hasReadAndWrite(op),
      async (op, objects) => {
        const res = await call(world, op, world.live, {
          objects,
          key: world.live.readOnlyKey,
          ...(hasReadAndWrite(op) ? { example: "read" } : {}),
        });
        assert.ok(res.statusCode < 400, `${res.statusCode} ${res.body}`);
      },
      // Reads of the application queue a Request each.
      { witnesses: [] },
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
    apiKeys: ((await get("/v1/api-keys?limit=100")) as { data: unknown[] }).data,
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
    test(`${whose} object in the path`, async (t) => {
      const owner = ownerOf();
      await eachOperation(
        (op) =>
          op.pathParams.some((p) =>
            [
              "endUser",
              "request",
              "webhookEndpoint",
              "webhookDelivery",
              "changeFeedSubscription",
              "apiKey",
            ].includes(pathObjectOf(op, p)),
          ),
        async (op, objects) => {
          const res = await call(world, op, foreignOf(), { objects });
          assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
          const stored = await findRequestById(world.h.deps.db, objects.request ?? "");
          assert.equal(stored?.status, "queued", "the owner's Request is untouched");
        },
        {
          objects: async () => ({
            endUser: owner.endUser,
            request: await queuedRequest(world.h, owner),
            webhookEndpoint: owner.webhookEndpoint,
            webhookDelivery: owner.webhookDelivery,
            changeFeedSubscription: owner.changeFeedSubscription,
            apiKey: owner.apiKey,
          }),
          witnesses: [NO_REQUEST, { change: "changed the owner's objects", read: () => snapshot(owner) }],
        },
      )(t);
    });

    test(
      `${whose} end user in Svc-End-User-Id`,
      eachOperation(namesEndUser, async (op, objects) => {
        const res = await call(world, op, foreignOf(), {
          objects: { ...objects, endUserHeader: ownerOf().endUser },
        });
        assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "Svc-End-User-Id" });
      }),
    );

    test(
      `${whose} end user in the body's endUserId`,
      eachOperation(
        (op) =>
          Object.values(op.examples).some((e) => e !== null && typeof e === "object" && "endUserId" in e),
        async (op, objects) => {
          const foreign = foreignOf();
          const body = {
            ...(exampleBody(op, foreign) as Record<string, unknown>),
            endUserId: ownerOf().endUser,
          };
          const res = await call(world, op, foreign, { objects, body });
          assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "endUserId" });
        },
        { objects: (op) => objectsFor(world, op, foreignOf()) },
      ),
    );

    test(`${whose} objects never appear in a list`, async (t) => {
      const owner = ownerOf();
      await queuedRequest(world.h, owner);
      const owned = await ownedIds(owner);
      await eachOperation(isList, async (op) => {
        const res = await call(world, op, foreignOf());
        const page = expectStatus<{ data: { id: string }[] }>(res, 200);
        const leaked = page.data.filter((item) => owned.has(item.id));
        assert.deepEqual(leaked, [], "no object of the owner is listed");
      })(t);
    });
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
    eachOperation(namesEndUser, async (op, objects) => {
      const res = await call(world, op, world.live, { objects: { ...objects, endUserHeader: null } });
      assertError(res, { status: 400, code: "END_USER_ID_MISSING", type: INVALID, param: "Svc-End-User-Id" });
    }),
  );

  test(
    "malformed → 400 INVALID_PARAMETER",
    eachOperation(namesEndUser, async (op, objects) => {
      for (const value of [
        "eu_nope",
        "req_01m82feyw9ext950wsykrw9k42",
        " ",
        "eu_01M82FEYW9EXT950WSYKRW9K42",
      ]) {
        const res = await call(world, op, world.live, { objects: { ...objects, endUserHeader: value } });
        assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "Svc-End-User-Id" });
      }
    }),
  );

  test(
    "well-formed but unknown → 404 RESOURCE_MISSING",
    eachOperation(namesEndUser, async (op, objects) => {
      const res = await call(world, op, world.live, {
        objects: { ...objects, endUserHeader: "eu_01m82feyw9ext950wsykrw9k42" },
      });
      assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "Svc-End-User-Id" });
    }),
  );
});

describe("Security: strict input", () => {
  test(
    "an unknown Svc-* header → 400 UNKNOWN_HEADER naming it",
    eachOperation(everyOne, async (op, objects) => {
      const res = await call(world, op, world.live, { objects, headers: { "svc-mystery-option": "1" } });
      assertError(res, { status: 400, code: "UNKNOWN_HEADER", type: INVALID, param: "Svc-Mystery-Option" });
    }),
  );

  test(
    "an unknown query parameter → 400 UNKNOWN_PARAMETER naming it",
    eachOperation(everyOne, async (op, objects) => {
      const res = await call(world, op, world.live, { objects, query: "mysteryOption=1" });
      assertError(res, { status: 400, code: "UNKNOWN_PARAMETER", type: INVALID, param: "mysteryOption" });
    }),
  );

  test(
    "an unknown body field → 400 UNKNOWN_PARAMETER naming it",
    eachOperation(
      (op) => Object.keys(op.examples).length > 0,
      async (op, objects) => {
        const body = { ...(exampleBody(op, world.live) as Record<string, unknown>), mysteryField: 1 };
        const res = await call(world, op, world.live, { objects, body });
        assertError(res, { status: 400, code: "UNKNOWN_PARAMETER", type: INVALID, param: "mysteryField" });
      },
    ),
  );
});

/** Operations that honour `Idempotency-Key`: every write and every application operation. */
const idempotent = (op: Operation): boolean =>
  (isWrite(op) || isApplicationOperation(op)) && !op.alwaysRefused;

let keySequence = 0;
const freshKey = (): string => `security-suite-${++keySequence}`;

/** The body with one string field changed (or another example), or null when the body is fixed. */
function otherBody(op: Operation, body: unknown): unknown {
  if (hasReadAndWrite(op)) return { ...(body as Record<string, unknown>), ...(op.examples.read as object) };
  const second = Object.values(op.examples)[1];
  if (second !== undefined) return { ...(body as Record<string, unknown>), ...(second as object) };
  if (body === null || typeof body !== "object") return null;
  // A field the body schema states as free text, else (no schema) one whose value does not look
  // coded; a decimal gets another last digit. Either way still valid input of the same length, but
  // a different body.
  const properties = (op.bodySchema?.properties ?? {}) as Record<string, JsonSchema>;
  const decimal = /^-?\d+(\.\d+)?$/;
  const coded = (value: string): boolean =>
    decimal.test(value) || /^\d{4}-\d{2}-\d{2}/.test(value) || /^[0-9A-F]+-\d+$/.test(value);
  const texts = Object.entries(body as Record<string, unknown>).filter(
    (entry): entry is [string, string] =>
      typeof entry[1] === "string" && !["endUserId", "publishableKey"].includes(entry[0]),
  );
  const free = ([name, value]: [string, string]): boolean => {
    const schema = properties[name];
    return schema ? isFreeText(schema) && !coded(value) : !coded(value);
  };
  const field = texts.findLast(free) ?? texts.findLast(([, value]) => decimal.test(value));
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

/** Checks that create Requests on purpose (each counts around its own calls where it matters). */
const QUEUES: WalkOptions = { witnesses: [] };

/** The first call of an operation with a fresh `Idempotency-Key`, which the reuse checks repeat. */
interface KeyedCall {
  key: string;
  body: unknown;
  objects: Partial<Record<PathObject, string>>;
  first: LightMyRequestResponse;
}

/**
 * One keyed first call per operation, made by whichever check needs it first and shared by the
 * others (each check sends its own repeat): an accepted call costs a Request, so the suite makes
 * one per operation instead of one per check.
 */
const keyedCalls = new Map<Operation, Promise<KeyedCall>>();
function keyedCall(op: Operation, objects: Partial<Record<PathObject, string>>): Promise<KeyedCall> {
  let made = keyedCalls.get(op);
  if (!made) {
    const key = freshKey();
    const body = exampleBody(op, world.live);
    made = call(world, op, world.live, { objects, body, headers: { "idempotency-key": key } }).then(
      (first) => ({ key, body, objects, first }),
    );
    keyedCalls.set(op, made);
  }
  return made;
}

/** The shared first call of `op`, which must have been accepted. */
async function acceptedKeyedCall(
  op: Operation,
  objects: Partial<Record<PathObject, string>>,
): Promise<KeyedCall> {
  const keyed = await keyedCall(op, objects);
  assert.ok(keyed.first.statusCode < 300, `the first call: ${keyed.first.statusCode} ${keyed.first.body}`);
  return keyed;
}

/** A reuse of the first call's key: refused with 422 IDEMPOTENCY_KEY_REUSED. */
function assertReused(res: LightMyRequestResponse): void {
  assertError(res, { status: 422, code: "IDEMPOTENCY_KEY_REUSED", type: INVALID, param: "Idempotency-Key" });
}

/**
 * The checks that repeat the shared first call: it is made while the operations are prepared, so
 * that the checks' own calls (replays and refused reuses) must create no Request at all.
 */
const KEYED: WalkOptions = {
  objects: async (op) => {
    const objects = await objectsFor(world, op, world.live);
    await keyedCall(op, objects);
    return objects;
  },
};

describe("Security: idempotency replay and reuse", () => {
  test(
    "the same key and the same request replay the first answer (an application operation's is its Request)",
    eachOperation(
      idempotent,
      async (op, objects) => {
        const { key, body, objects: used, first } = await keyedCall(op, objects);
        const again = await call(world, op, world.live, {
          objects: used,
          body,
          headers: { "idempotency-key": key },
        });
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
      },
      KEYED,
    ),
  );

  test(
    "the same key with a different body → 422 IDEMPOTENCY_KEY_REUSED",
    eachOperation(
      (op) => idempotent(op) && otherBody(op, exampleBody(op, world.live)) !== null,
      async (op, objects) => {
        const { key, body, objects: used } = await acceptedKeyedCall(op, objects);
        assertReused(
          await call(world, op, world.live, {
            objects: used,
            body: otherBody(op, body),
            headers: { "idempotency-key": key },
          }),
        );
      },
      KEYED,
    ),
  );

  test(
    "the same key on another path (another object) → 422 IDEMPOTENCY_KEY_REUSED",
    eachOperation(
      (op) => idempotent(op) && op.pathParams.some((p) => pathObjectOf(op, p) === "endUser"),
      async (op, objects) => {
        const { key, body } = await keyedCall(op, objects);
        assertReused(
          await call(world, op, world.live, {
            body,
            objects: { endUser: world.live.otherEndUser },
            headers: { "idempotency-key": key },
          }),
        );
      },
      KEYED,
    ),
  );

  test(
    "the same key for another end user (Svc-End-User-Id) → 422 IDEMPOTENCY_KEY_REUSED",
    eachOperation(
      (op) => idempotent(op) && namesEndUser(op),
      async (op, objects) => {
        const { key, body, objects: used } = await acceptedKeyedCall(op, objects);
        assertReused(
          await call(world, op, world.live, {
            body,
            objects: { ...used, endUserHeader: world.live.otherEndUser },
            headers: { "idempotency-key": key },
          }),
        );
      },
      KEYED,
    ),
  );

  test(
    "a key is scoped to its mode: the same key with a test key starts its own request",
    eachOperation(
      (op) => idempotent(op) && isApplicationOperation(op),
      async (op, objects) => {
        const { key, first } = await acceptedKeyedCall(op, objects);
        const test = expectStatus<{ id: string }>(
          await call(world, op, world.test, { headers: { "idempotency-key": key } }),
          202,
        );
        assert.notEqual(test.id, first.json<{ id: string }>().id);
      },
      QUEUES,
    ),
  );

  test(
    "a key whose request reached the application and failed replays it instead of running again",
    eachOperation(
      (op) => isApplicationOperation(op) && !op.alwaysRefused,
      async (op, objects) => {
        const key = freshKey();
        const endUser = objects.endUser ?? assert.fail("an end user whose queue is empty");
        const mine = { ...objects, endUserHeader: endUser };
        const before = await requestCount(world.h);
        const first = expectStatus<{ id: string; connectionId: string }>(
          await call(world, op, world.live, { objects: mine, headers: { "idempotency-key": key } }),
          202,
        );
        // The connector takes it (it is `sent`), then its session breaks: a read fails, a write's
        // outcome becomes unknown. Either way it reached the application.
        const ticket = await readySessionOf(first.connectionId);
        const work = await nextWork(world.h.deps, first.connectionId, ticket, "16.0");
        assert.equal(work?.kind === "request" ? work.rows[0]?.id : null, first.id, "the connector took it");
        const sent = await findRequestById(world.h.deps.db, first.id);
        assert.ok(sent);
        assert.ok(await interruptSent(world.h.deps, sent, "the session broke"));
        const again = await call(world, op, world.live, {
          objects: mine,
          headers: { "idempotency-key": key },
        });
        assert.equal(await requestCount(world.h), before + 1, "the replay created no Request");
        assert.equal(again.headers["svc-request-id"], first.id, again.body);
        assert.equal(again.json<{ id: string }>().id, first.id);
      },
      {
        ...QUEUES,
        // An end user whose queue is empty, so that this request is next. A read that failed leaves
        // the connection as it was, so the reads share one; a write whose outcome is unknown makes
        // the connection ask the application first, so each write has an end user of its own.
        objects: async (op) => ({
          endUser: isWrite(op) ? await freshEndUser(world, world.live) : await readsEndUser(),
        }),
      },
    ),
  );
});

const readySessions = new Map<string, Promise<string>>();
/** The ticket of a session ready to be handed work on `connectionId` (opened once per connection). */
const readySessionOf = (connectionId: string): Promise<string> => {
  let ticket = readySessions.get(connectionId);
  if (!ticket) {
    const hash = `security-suite-ticket-${connectionId}`;
    ticket = readySession(world.h, connectionId, hash).then(() => hash);
    readySessions.set(connectionId, ticket);
  }
  return ticket;
};

let readsEndUserMade: Promise<string> | undefined;
/** The end user the failed reads share (made once). */
const readsEndUser = (): Promise<string> => (readsEndUserMade ??= freshEndUser(world, world.live));

/** The metric names of a `Server-Timing` header, in order (null: no header). */
function serverTimingNames(res: LightMyRequestResponse): string[] | null {
  const header = res.headers["server-timing"];
  if (header === undefined) return null;
  return String(header)
    .split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/)
    .map((part) => part.trim().split(";")[0] ?? "");
}

/** The `svc` metric's figure (our own time), which every application operation's answer carries. */
function svcDuration(res: LightMyRequestResponse): number | null {
  const match = /(?:^|,\s*)svc;dur=(\d+(?:\.\d+)?)/.exec(String(res.headers["server-timing"] ?? ""));
  return match?.[1] === undefined ? null : Number(match[1]);
}

describe("Where the time went: Server-Timing on every application operation (issue 28, decision 0047)", () => {
  const FOUR = ["queue", "connector", "ledger", "svc"];

  test(
    "an accepted call (202, or the refusal of an operation the application cannot do) names queue, connector, ledger and svc",
    eachOperation(
      isApplicationOperation,
      async (op, objects) => {
        const res = await call(world, op, world.live, { objects });
        assert.equal(res.statusCode, op.alwaysRefused ? 422 : 202, res.body);
        assert.deepEqual(serverTimingNames(res), FOUR, String(res.headers["server-timing"]));
        assert.notEqual(svcDuration(res), null, "svc carries a figure");
      },
      QUEUES,
    ),
  );

  test(
    "a call refused before any Request (an unknown query parameter) carries it too, svc alone with a figure",
    eachOperation(isApplicationOperation, async (op, objects) => {
      const res = await call(world, op, world.live, { objects, query: "timingProbe=1" });
      assert.ok(res.statusCode === 400 || (op.alwaysRefused && res.statusCode === 422), res.body);
      assert.deepEqual(serverTimingNames(res), FOUR, String(res.headers["server-timing"]));
      assert.notEqual(svcDuration(res), null, "svc carries a figure");
      assert.doesNotMatch(String(res.headers["server-timing"]), /(queue|connector|ledger);dur=/);
    }),
  );

  test(
    "platform operations carry none (they are not Requests)",
    eachOperation(
      (op) => !isApplicationOperation(op),
      async (op, objects) => {
        const res = await call(world, op, world.live, { objects, key: null });
        assert.equal(res.statusCode, 401, res.body);
        assert.equal(serverTimingNames(res), null, String(res.headers["server-timing"]));
      },
    ),
  );
});
