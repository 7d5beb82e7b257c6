import assert from "node:assert/strict";
import { test } from "node:test";
import Fastify from "fastify";
import type { Deps } from "../deps.ts";
import { catalogue, isErrorCode, type ErrorCode } from "../errors/catalogue.ts";
import { ServiceError } from "../errors/service-error.ts";
import { sendError } from "./errors.ts";

/**
 * The retry signal of every code (decision 0045): what `Svc-Should-Retry`, `X-Should-Retry` and the
 * body's `retryable` say, and when `Retry-After` is sent, for each catalogue code with a status, on
 * a read and on a write, with the code's default outcome. The two headers are always equal; a write
 * that may have been applied (outcome `unknown` or `pending`) is never said to be retryable.
 */
const SAYS_TRUE_ON_A_READ: readonly ErrorCode[] = [
  "CONNECTION_QUEUE_FULL",
  "RATE_LIMITED",
  "INTERNAL_ERROR",
  "LEDGER_READ_INTERRUPTED",
  "LEDGER_RESPONSE_UNREADABLE",
  "INTEGRATION_CONNECTION_NOT_ACTIVE",
  "LEDGER_CANNOT_START",
  "LEDGER_CONNECTION_ERROR",
  "LEDGER_FILE_MODE_CONFLICT",
  "LEDGER_MODAL_DIALOG_OPEN",
  "LEDGER_NOT_RESPONDING",
  "LEDGER_STARTING",
  "SERVICE_UNAVAILABLE",
  "REQUEST_TIMEOUT_NOT_SENT",
];
/** Retryable on a read, never on a write: their default outcome is `unknown`. */
const READ_ONLY_TRUE: readonly ErrorCode[] = ["INTERNAL_ERROR", "LEDGER_RESPONSE_UNREADABLE"];

async function render(code: ErrorCode, method: "GET" | "POST", outcome?: "pending" | "unknown") {
  const app = Fastify();
  const deps = { config: { publicUrl: "http://localhost:8080" } } as unknown as Deps;
  app.route({
    method,
    url: "/x",
    handler: async (request, reply) =>
      sendError(deps, request, reply, new ServiceError(code, outcome ? { outcome } : {})),
  });
  const res = await app.inject({ method, url: "/x" });
  await app.close();
  return {
    status: res.statusCode,
    svc: res.headers["svc-should-retry"],
    x: res.headers["x-should-retry"],
    retryAfter: res.headers["retry-after"],
    retryable: res.json<{ error: { retryable: boolean } }>().error.retryable,
  };
}

test("every code with a status: X-Should-Retry equals Svc-Should-Retry and the body's retryable, on reads and writes", async () => {
  const codes = Object.keys(catalogue).filter(isErrorCode);
  for (const code of codes) {
    if (catalogue[code].httpStatus === null) continue;
    for (const method of ["GET", "POST"] as const) {
      const said = await render(code, method);
      const what = `${method} ${code}: ${JSON.stringify(said)}`;
      assert.equal(said.status, catalogue[code].httpStatus, what);
      const expected =
        SAYS_TRUE_ON_A_READ.includes(code) && !(method === "POST" && READ_ONLY_TRUE.includes(code));
      assert.equal(said.svc, String(expected), what);
      assert.equal(said.x, said.svc, `X-Should-Retry = Svc-Should-Retry: ${what}`);
      assert.equal(said.retryable, expected, `body retryable: ${what}`);
      const retryAfter = said.status === 429 || (said.status === 503 && expected);
      assert.equal(said.retryAfter !== undefined, retryAfter, `Retry-After: ${what}`);
    }
  }
});

test("a write answered 504 LEDGER_REQUEST_TIMEOUT or 502 LEDGER_WRITE_OUTCOME_UNKNOWN says false in both headers", async () => {
  for (const [code, outcome] of [
    ["LEDGER_REQUEST_TIMEOUT", "pending"],
    ["LEDGER_WRITE_OUTCOME_UNKNOWN", "unknown"],
    ["LEDGER_RESPONSE_UNREADABLE", "unknown"],
    ["INTERNAL_ERROR", "unknown"],
  ] as const) {
    const said = await render(code, "POST", outcome);
    assert.deepEqual([said.svc, said.x, said.retryable], ["false", "false", false], code);
  }
  // A 504 that says the write was never sent (and canceled) may be sent again: nothing was applied.
  const notSent = await render("REQUEST_TIMEOUT_NOT_SENT", "POST");
  assert.deepEqual([notSent.status, notSent.svc, notSent.x], [504, "true", "true"]);
});
