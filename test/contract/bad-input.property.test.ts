import assert from "node:assert/strict";
import { after, before, test, type TestContext } from "node:test";
import fc from "fast-check";
import type { LightMyRequestResponse } from "fastify";
import { catalogue, isErrorCode } from "../../src/errors/catalogue.ts";
import { ERROR_FIELDS, CALL_ID, REQUEST_ID, judgeRefusal, stopwatch } from "./helpers.ts";
import { badPathValues, badQueryValues, isDescribed, type BadValue } from "./schema-values.ts";
import {
  buildWorld,
  call,
  exampleBody,
  label,
  objectsFor,
  pathObjectOf,
  percentEncode,
  requestCount,
  takesEndUserHeader,
  type CallOptions,
  type Operation,
  type Parameter,
  type World,
} from "./surface.ts";

/**
 * Bad input to every operation of the OpenAPI document (issues 6 and 14), in two parts sharing one
 * service:
 *
 * - Every parameter, derived from its schema in the document (so a new parameter is covered as
 *   soon as it is documented): each query parameter gets a wrong type, an impossible date, NUL, a
 *   lone control character, over-long text, a repeated scalar or too many items; each path
 *   parameter an over-long value and NUL; an operation that takes no body gets a JSON string, an
 *   array, `true`, `null`, an unknown field and a 10,000-deep object. Each must be refused with a
 *   4xx whose code is the catalogue's and whose `param` names what was wrong, and must create no
 *   Request.
 * - Generated hostile input (fast-check: bad JSON, wrong types, unknown fields, strings with NUL,
 *   controls, surrogates, huge and deeply nested values, bad headers, bad and foreign IDs): never
 *   a status of 500 or more, every error in the spec's shape, nothing queued for what is refused.
 *
 * "Nothing queued" is proven per operation by counting Requests before and after all of its cases;
 * when the count moved, the cases are sent again one at a time to name the ones that queued.
 */
const RUNS_PER_OPERATION = 8;
/** A fixed seed by default, so that CI runs are reproducible; `PROPERTY_SEED` explores others. */
const SEED = Number(process.env.PROPERTY_SEED ?? 7);

let world: World;
before(async () => {
  world = await buildWorld();
});
after(() => world.h.close());

const JSON_TYPE = { "content-type": "application/json" };

/** One bad input to one operation, and the `param` values that would name it. */
interface Case {
  /** What is wrong with it, for grouping failures (`impossible date`, `no-body operation given null`). */
  kind: string;
  /** What was sent, for failure messages (`?transactionDateFrom="2024-02-30"`). */
  sent: string;
  params: string[];
  options: CallOptions;
}

/** A case the service did not refuse as the contract says. */
interface Failure {
  op: Operation;
  case: Case;
  /** The answer in short (`202 (accepted)`, `500 INTERNAL_ERROR param=null`). */
  outcome: string;
  problem: string;
}

/** A value for a failure message: short, with its length when long, and repeats counted. */
function shown(values: readonly string[]): string {
  const one = (value: string): string =>
    value.length > 24
      ? `${JSON.stringify(value.slice(0, 6))}…(${value.length} chars)`
      : JSON.stringify(value);
  const [first] = values;
  if (first !== undefined && values.length > 3) return `${values.length} × ${one(first)}`;
  return values.map(one).join(" & ");
}

function queryCase(op: Operation, parameter: Parameter, bad: BadValue): Case {
  const pairs = bad.values.map((value) => `${parameter.name}=${percentEncode(value)}`);
  return {
    kind: bad.what,
    sent: `?${parameter.name}=${shown(bad.values)}`,
    params: [parameter.name],
    // The operation's other required parameters are added (valid) by `call`.
    options: { query: pairs.join("&") },
  };
}

function pathCase(op: Operation, parameter: Parameter, bad: BadValue): Case {
  const value = bad.values[0] ?? "";
  return {
    kind: `path ${bad.what}`,
    sent: `{${parameter.name}}=${shown(bad.values)}`,
    params: [parameter.name],
    options: { objects: { [pathObjectOf(op, parameter.name)]: value } },
  };
}

const DEPTH = 10_000;
/** Bodies sent to an operation that takes none (empty or `{}` only): what each must be refused as. */
const NO_BODY_CASES: { sent: string; body: string; params: string[] }[] = [
  { sent: "a JSON string", body: JSON.stringify("x"), params: ["body"] },
  { sent: "a JSON array", body: "[]", params: ["body"] },
  { sent: "true", body: "true", params: ["body"] },
  { sent: "null", body: "null", params: ["body"] },
  // A GET refuses any body as a whole (`body`); other operations name the unknown field.
  { sent: "an unknown field", body: JSON.stringify({ mysteryField: 1 }), params: ["mysteryField", "body"] },
  {
    sent: `a ${DEPTH.toLocaleString("en")}-deep object`,
    body: `${'{"nested":'.repeat(DEPTH)}{}${"}".repeat(DEPTH)}`,
    params: ["nested", "body"],
  },
];

/** Every bad input the document's parameters and body declaration call for. */
function casesOf(op: Operation): Case[] {
  const cases: Case[] = [];
  for (const parameter of op.parameters) {
    if (parameter.in === "query") {
      for (const bad of badQueryValues(parameter)) cases.push(queryCase(op, parameter, bad));
    } else if (parameter.in === "path") {
      for (const bad of badPathValues()) cases.push(pathCase(op, parameter, bad));
    }
  }
  if (!op.takesBody) {
    for (const { sent, body, params } of NO_BODY_CASES) {
      cases.push({
        kind: `no-body operation given ${sent}`,
        sent: `body ${sent}`,
        params,
        options: { body, headers: JSON_TYPE },
      });
    }
  }
  return cases;
}

/** Request IDs answered so far: an answer naming a new one accounts for one new Request. */
const answeredRequests = new Set<string>();

/** 1 when the answer names a Request no earlier answer named (accepted, or refused by the application). */
function newRequestOf(res: LightMyRequestResponse): number {
  const id = String(res.headers["svc-request-id"] ?? "");
  if (!REQUEST_ID.test(id) || answeredRequests.has(id)) return 0;
  answeredRequests.add(id);
  return 1;
}

/** The operation's cases whose answers broke the contract. */
async function failuresOf(op: Operation): Promise<Failure[]> {
  const cases = casesOf(op);
  if (cases.length === 0) return [];
  const objects = await objectsFor(world, op, world.live);
  const send = (c: Case): Promise<LightMyRequestResponse> =>
    call(world, op, world.live, {
      ...c.options,
      objects: { ...objects, ...c.options.objects },
    });
  const failures = new Map<Case, Failure>();
  const refused: Case[] = [];
  const before = await requestCount(world.h);
  let named = 0;
  for (const c of cases) {
    const res = await send(c);
    const queued = newRequestOf(res);
    named += queued;
    const { outcome, problem } = judgeRefusal(res, c.params, op.alwaysRefused);
    if (problem !== null) {
      failures.set(c, { op, case: c, outcome, problem: queued > 0 ? `${problem}, queued` : problem });
    } else refused.push(c);
  }
  if ((await requestCount(world.h)) - before !== named) {
    // A refused case queued a Request its answer does not name: send each again alone to find it.
    for (const c of refused) {
      const alone = await requestCount(world.h);
      const { outcome } = judgeRefusal(await send(c), c.params, op.alwaysRefused);
      const queued = (await requestCount(world.h)) - alone;
      if (queued > 0) failures.set(c, { op, case: c, outcome, problem: `refused but queued ${queued}` });
    }
  }
  return [...failures.values()];
}

const lineOf = (f: Failure): string =>
  `${f.op.method} ${f.op.path} ${f.case.sent} (${f.case.kind}) → ${f.outcome}: ${f.problem}`;

/** A readable failure: each kind of failure with its count and one example, then every case. */
function report(failures: readonly Failure[]): string {
  const kinds = new Map<string, { count: number; example: Failure }>();
  for (const f of failures) {
    const key = `${f.case.kind} → ${f.outcome.replace(/ param=.*/, "")}: ${f.problem}`;
    const entry = kinds.get(key);
    if (entry) entry.count += 1;
    else kinds.set(key, { count: 1, example: f });
  }
  return [
    `${failures.length} bad inputs were not refused with a 4xx naming their parameter, or queued a Request.`,
    "By kind (count, one example):",
    ...[...kinds.values()].map(({ count, example }) => `  ${count} × ${lineOf(example)}`),
    "Every case:",
    ...failures.map((f) => `  ${lineOf(f)}`),
  ].join("\n");
}

/** Asserts that the suite walked every operation of the document, and prints how many. */
function assertEveryOperation(t: TestContext, walked: number, detail: string, spent?: () => string): void {
  t.diagnostic(
    `${walked} operations walked (${detail}); the OpenAPI document has ${world.documentOperations}` +
      (spent ? ` (${spent()})` : ""),
  );
  assert.equal(walked, world.documentOperations, "every operation of the document is walked, none sampled");
}

test("every query parameter's schema in the document says what it takes (its bad values are derived from it)", (t) => {
  const vague = world.operations.flatMap((op) =>
    op.parameters
      .filter((p) => p.in === "query" && !isDescribed(p.schema))
      .map((p) => `${op.method} ${op.path} ?${p.name}: ${JSON.stringify(p.schema)}`),
  );
  const names = [...new Set(vague.map((line) => /\?(\w+):/.exec(line)?.[1]))].join(", ");
  assertEveryOperation(t, world.operations.length, `${vague.length} query parameters without a stated form`);
  assert.ok(
    vague.length === 0,
    `${vague.length} query parameters have a schema that states no vocabulary, form or length ` +
      `(so a wrong type or an impossible date cannot be derived for them): ${names}\n${vague.join("\n")}`,
  );
});

test("every parameter of every operation: wrong type, impossible date, NUL, control character, over-long, repeated, too many items; bodies where none is taken → 4xx naming it, nothing queued", async (t) => {
  const spent = stopwatch();
  const failures: Failure[] = [];
  let cases = 0;
  for (const op of world.operations) {
    cases += casesOf(op).length;
    failures.push(...(await failuresOf(op)));
  }
  const parameters = world.operations.flatMap((op) => op.parameters.filter((p) => p.in !== "header"));
  assertEveryOperation(
    t,
    world.operations.length,
    `${cases} bad inputs over ${parameters.length} query and path parameters`,
    spent,
  );
  assert.ok(failures.length === 0, report(failures));
});

/** Strings that have broken services before, weighted over random ones. */
const hostileString = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.constantFrom(
      "\u0000",
      "a\u0000b",
      "\u0007\u001b\u007f",
      "\ud800",
      "x\udfffy",
      "\u2028\u2029",
      "😀",
      "%00",
      "' or 1=1 --",
      "<script>alert(1)</script>",
      "../../etc/passwd",
      "eu_00000000000000000000000000",
      "req_00000000000000000000000000",
    ),
  },
  { weight: 1, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.string({ unit: "binary" }) },
  { weight: 1, arbitrary: fc.nat({ max: 300_000 }).map((n) => "x".repeat(n)) },
);

/** Deeply nested arrays or objects (a parser's or validator's recursion). */
const deep = fc
  .tuple(fc.integer({ min: 50, max: 20_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? `${"[".repeat(depth)}${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`,
  );

const jsonValue = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.integer(),
  hostileString,
  fc.array(hostileString, { maxLength: 5 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 5 }),
);

/** A foreign ID: another project's or another mode's end user, or a malformed one. */
function foreignIds(w: World): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(w.other.endUser, w.test.endUser, w.other.otherEndUser, w.test.otherEndUser),
    hostileString,
  );
}

/** Headers: unknown Svc-*, bad options, bad idempotency keys, bad content types (built once). */
const badHeaders: fc.Arbitrary<CallOptions>[] = [
  fc
    .record({
      name: fc.stringMatching(/^svc-[a-z-]{1,20}$/),
      value: fc.stringMatching(/^[\x21-\x7e]{0,40}$/),
    })
    .map(({ name, value }) => ({ headers: { [name]: value } })),
  fc
    .record({
      header: fc.constantFrom(
        "svc-timeout-seconds",
        "svc-queue-ttl-seconds",
        "prefer",
        "idempotency-key",
        "content-type",
        "authorization",
      ),
      value: fc.stringMatching(/^[\x20-\x7e]{0,300}$/),
    })
    .map(({ header, value }) => ({ headers: { [header]: value } })),
];

/** One bad change to an otherwise valid call. */
function mutations(w: World, op: Operation): fc.Arbitrary<CallOptions> {
  const body = exampleBody(op, w.live);
  const fields = body !== null && typeof body === "object" ? Object.keys(body) : [];
  const choices: fc.Arbitrary<CallOptions>[] = [
    // Bad JSON text, and JSON of the wrong shape.
    fc
      .oneof(
        fc.string(),
        deep,
        fc.string().map((s) => `{${s}`),
      )
      .map((text) => ({ body: text, headers: JSON_TYPE })),
    jsonValue.map((value) => ({ body: JSON.stringify(value), headers: JSON_TYPE })),
    // Unknown fields, and every known field given a hostile or wrongly typed value.
    fc.dictionary(hostileString, jsonValue, { minKeys: 1, maxKeys: 4 }).map((extra) => ({
      body: { ...(body as object), ...extra },
    })),
    ...badHeaders,
    // Query parameters, known and unknown, with hostile values.
    fc
      .record({
        name:
          op.queryParams.length > 0 ? fc.oneof(fc.constantFrom(...op.queryParams), fc.string()) : fc.string(),
        value: hostileString,
      })
      .map(({ name, value }) => ({
        query: `${percentEncode(name)}=${percentEncode(value.slice(0, 4000))}`,
      })),
  ];
  if (fields.length > 0) {
    choices.push(
      fc.record({ field: fc.constantFrom(...fields), value: jsonValue }).map(({ field, value }) => ({
        body: { ...(body as object), [field]: value },
      })),
    );
  }
  const idParams = op.pathParams.filter((p) => pathObjectOf(op, p) !== "integrationSlug");
  if (idParams.length > 0) {
    choices.push(
      foreignIds(w).map((id) => ({
        objects: Object.fromEntries(idParams.map((p) => [pathObjectOf(op, p), id.slice(0, 4000)])),
      })),
    );
  }
  if (takesEndUserHeader(op)) {
    choices.push(
      foreignIds(w)
        .filter((id) => /^[\x20-\x7e]*$/.test(id) && id.length < 4000)
        .map((id) => ({ objects: { endUserHeader: id } })),
    );
  }
  return fc.oneof(...choices);
}

/** The spec's error contract, without knowing which error to expect. */
function assertSpecError(res: LightMyRequestResponse): void {
  const context = `${res.statusCode} ${res.body.slice(0, 500)}`;
  assert.match(String(res.headers["content-type"]), /^application\/json/, context);
  const error = res.json<{ error?: Record<string, unknown> }>().error;
  assert.ok(error, context);
  for (const field of ERROR_FIELDS) assert.ok(Object.hasOwn(error, field), `${field}: ${context}`);
  const code = String(error.code);
  assert.ok(isErrorCode(code), `a catalogue code: ${context}`);
  assert.equal(catalogue[code].httpStatus ?? 409, res.statusCode, `the catalogue's status: ${context}`);
  assert.equal(error.httpStatusCode ?? 409, res.statusCode, context);
  assert.equal(res.headers["svc-should-retry"], String(error.retryable), context);
  assert.equal(res.headers["x-should-retry"], res.headers["svc-should-retry"], `X-Should-Retry: ${context}`);
  const id = String(res.headers["svc-request-id"]);
  assert.ok(CALL_ID.test(id) || REQUEST_ID.test(id), `Svc-Request-Id: ${context}`);
  assert.equal(error.requestId, id, context);
  for (const name of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) {
    assert.match(String(res.headers[name]), /^\d+$/, `${name}: ${context}`);
  }
}

test("generated bad input to every operation: never ≥ 500, errors in the spec's shape, nothing queued", async (t) => {
  const spent = stopwatch();
  const failures: string[] = [];
  for (const [index, op] of world.operations.entries()) {
    const objects = await objectsFor(world, op, world.live);
    const send = (change: CallOptions): Promise<LightMyRequestResponse> =>
      call(world, op, world.live, { ...change, objects: { ...objects, ...change.objects } });
    const seed = SEED + index;
    const before = await requestCount(world.h);
    let accounted = 0;
    try {
      await fc.assert(
        fc.asyncProperty(mutations(world, op), async (change) => {
          const res = await send(change);
          accounted += newRequestOf(res);
          assert.ok(res.statusCode < 500, `${res.statusCode} ${res.body.slice(0, 500)}`);
          if (res.statusCode >= 400) assertSpecError(res);
        }),
        { numRuns: RUNS_PER_OPERATION, seed, includeErrorInReport: true },
      );
      if ((await requestCount(world.h)) - before !== accounted) {
        // A refused input queued a Request: run again, counting each input alone, to name it.
        await fc.assert(
          fc.asyncProperty(mutations(world, op), async (change) => {
            const alone = await requestCount(world.h);
            const res = await send(change);
            const expected = newRequestOf(res);
            assert.equal(
              (await requestCount(world.h)) - alone,
              expected,
              `a rejected input created a Request: ${res.statusCode} ${res.body.slice(0, 500)}`,
            );
          }),
          { numRuns: RUNS_PER_OPERATION, seed, includeErrorInReport: true },
        );
      }
    } catch (error) {
      failures.push(`${label(op)} (seed ${seed}): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  assertEveryOperation(t, world.operations.length, `${RUNS_PER_OPERATION} generated inputs each`, spent);
  assert.ok(failures.length === 0, failures.join("\n\n"));
});
