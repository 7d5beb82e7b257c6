import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { catalogue, isErrorCode } from "../../src/errors/catalogue.ts";
import { typedOperations, type TypedOperation } from "../../src/ledger/operations.ts";
import { validateTypedInput } from "../../src/requests/typed-call.ts";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { aloneCases, type AloneCase } from "./field-alone.ts";
import { stopwatch } from "./helpers.ts";
import { onlineEndUser, requestCount } from "./surface.ts";

/**
 * Every body field alone (issue 25, item 4): for each typed operation with a body, each field of its
 * declaration at any depth is sent on its own (plus the top level's required fields and the path's
 * record ID; see `field-alone.ts`). The engine must never write a message the application's schema
 * refuses: every body is either accepted (queued: async, and no connector takes it) or refused with a
 * 4xx whose code is the catalogue's and whose `param` names a field of the body — never a 500. A
 * refused body queues nothing.
 *
 * One service for the whole sweep, and every case goes through HTTP. To stay fast, a body the input
 * rules accept (checked first by the same validator the route uses) is sent as a member of a batch
 * of 25 — each member is validated and written exactly as on its own route, and one accepted batch
 * queues one Request — while a body they refuse is sent alone to its own route (a refusal costs no
 * write). A batch that is not accepted is sent again member by member, so a failure names its body.
 */
let h: TestApp;
let endUser: string;
before(async () => {
  h = await buildTestApp(null, {
    config: { RATE_LIMIT_MAX: "1000000", CONNECTION_QUEUE_CAPACITY: "1000000" },
  });
  const keys = h.project.keys;
  endUser = await onlineEndUser(h, { key: keys.secretLive, publishableKey: keys.publishableLive }, "alone-1");
});
after(() => h.close());

const RECORD_ID = "80000001-1700000000";
const BATCH_SIZE = 25;

interface Sent {
  readonly op: TypedOperation;
  readonly c: AloneCase;
}

const headers = (): Record<string, string> => ({
  authorization: `Bearer ${h.project.keys.secretLive}`,
  "svc-end-user-id": endUser,
  prefer: "respond-async",
});

function alone({ op, c }: Sent): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method: op.http.method,
    url: op.http.path.replace(":id", RECORD_ID),
    headers: headers(),
    payload: c.body,
  });
}

function batch(members: readonly Sent[]): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method: "POST",
    url: "/v1/ledger-desktop/batch",
    headers: headers(),
    payload: {
      onError: "continueOnError",
      requests: members.map(({ op, c }) => ({
        operationId: op.operationId,
        body: c.body,
        ...(op.inputs().path.includes("id") ? { pathParams: { id: RECORD_ID } } : {}),
      })),
    },
  });
}

/** The body fields an operation declares (a refusal may name a required one the case left out). */
function declaredFields(op: TypedOperation): Set<string> {
  const rule = op.inputs().body;
  const examples = rule.type === "json" ? Object.values(rule.examples()) : [];
  return new Set([
    ...(op.bodyShape()?.fields.map((f) => f.json) ?? []),
    ...examples.flatMap((e) => (e !== null && typeof e === "object" ? Object.keys(e) : [])),
  ]);
}

/** What is wrong with the answer to one body sent alone, or null. */
function problemOf(res: LightMyRequestResponse, { op }: Sent): string | null {
  if (res.statusCode === 202) return null;
  if (res.statusCode >= 500) return `answered ${res.statusCode}: ${res.body.slice(0, 300)}`;
  if (res.statusCode < 400) return `answered ${res.statusCode}, not 202 (queued) or a 4xx`;
  const error = res.json<{ error?: { code?: unknown; param?: unknown } }>().error;
  const code = String(error?.code);
  if (!isErrorCode(code)) return `\`${code}\` is not a catalogue code`;
  if (catalogue[code].httpStatus !== res.statusCode)
    return `${code} is not a ${res.statusCode} in the catalogue`;
  const param = error?.param;
  if (typeof param !== "string" || param === "") return `${code} names no \`param\``;
  const top = /^[^.[]+/.exec(param)?.[0] ?? "";
  if (!declaredFields(op).has(top)) return `${code} param \`${param}\` names no field of the body`;
  return null;
}

/** Whether the input rules (the route's own validator) accept the body. */
function passesInputRules({ op, c }: Sent): boolean {
  try {
    validateTypedInput(op, {
      pathParams: op.inputs().path.includes("id") ? { id: RECORD_ID } : {},
      body: c.body,
    });
    return true;
  } catch {
    return false;
  }
}

test("every body field of every typed operation with a body, alone: accepted or a 4xx naming a field, never a 500, nothing queued when refused", async (t) => {
  const spent = stopwatch();
  const failures: string[] = [];
  const fail = ({ op, c }: Sent, problem: string): void => {
    failures.push(
      `${op.operationId} ${c.field} (${c.variant}) ${JSON.stringify(c.body).slice(0, 300)} → ${problem}`,
    );
  };
  const all: Sent[] = typedOperations().flatMap((op) => aloneCases(op).map((c) => ({ op, c })));
  const operations = new Set(all.map(({ op }) => op.operationId)).size;
  const valid = all.filter(passesInputRules);
  const validSet = new Set(valid);
  const invalid = all.filter((sent) => !validSet.has(sent));

  let before = await requestCount(h);
  let accepted = 0;
  for (const sent of invalid) {
    const res = await alone(sent);
    if (res.statusCode === 202) accepted++;
    const problem = problemOf(res, sent);
    if (problem !== null) fail(sent, problem);
  }
  assert.equal((await requestCount(h)) - before, accepted, "a refused body queued nothing");

  before = await requestCount(h);
  let batches = 0;
  for (let start = 0; start < valid.length; start += BATCH_SIZE) {
    const members = valid.slice(start, start + BATCH_SIZE);
    const res = await batch(members);
    if (res.statusCode === 202) {
      batches++;
      continue;
    }
    // Not accepted as a whole: each member on its own route names the body that broke it.
    for (const sent of members) {
      const one = await alone(sent);
      if (one.statusCode === 202) {
        batches++;
        continue;
      }
      fail(sent, problemOf(one, sent) ?? `refused (${one.statusCode}) though its input rules accept it`);
    }
  }
  assert.equal((await requestCount(h)) - before, batches, "each accepted call queued one Request");

  t.diagnostic(
    `${operations} operations, ${all.length} bodies: ${invalid.length} refused alone, ${valid.length} accepted in ${batches} calls (${spent()})`,
  );
  assert.ok(operations > 100, `the sweep walked ${operations} operations with a body`);
  assert.ok(valid.length > 0 && invalid.length > 0, "the sweep both accepts and refuses");
  assert.ok(failures.length === 0, `${failures.length} bodies broke the contract:\n${failures.join("\n")}`);
});
