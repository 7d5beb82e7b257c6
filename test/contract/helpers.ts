import assert from "node:assert/strict";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { catalogue, isErrorCode } from "../../src/errors/catalogue.ts";
import { bearer } from "../../src/testing/harness.ts";

/**
 * Shared assertions of the HTTP contract suites (house style §2.5). Every failure message carries the
 * full response body so a failing run explains itself.
 */

/** The spec's required error fields (Errors). */
export const ERROR_FIELDS = [
  "type",
  "code",
  "message",
  "userFacingMessage",
  "httpStatusCode",
  "integrationCode",
  "requestId",
  "cause",
  "fixes",
  "docsUrl",
  "retryable",
  "outcome",
  "param",
  "details",
] as const;

export interface ErrorObject {
  type: string;
  code: string;
  message: string;
  userFacingMessage: string;
  httpStatusCode: number | null;
  integrationCode: string | null;
  requestId: string;
  cause: string;
  fixes: { actor: string; action: string }[];
  docsUrl: string;
  retryable: boolean;
  outcome: string;
  param: string | null;
  details: Record<string, unknown>;
}

export interface ExpectedError {
  status: number;
  code: string;
  type: string;
  param: string | null;
  /** Defaults to false (every request-validation, auth and permission code). */
  retryable?: boolean;
  /** Defaults to `not_applied`. */
  outcome?: string;
}

export const INVALID = "INVALID_REQUEST_ERROR";
export const AUTHENTICATION = "AUTHENTICATION_ERROR";
export const PERMISSION = "PERMISSION_ERROR";

/** Asserts the whole error contract of one response and returns the error object. */
export function assertError(res: LightMyRequestResponse, expected: ExpectedError): ErrorObject {
  const context = `${res.statusCode} ${res.body}`;
  assert.equal(res.statusCode, expected.status, `HTTP status; body: ${context}`);
  assert.match(String(res.headers["content-type"]), /^application\/json/, `content type: ${context}`);
  const body = res.json<{ error?: ErrorObject }>();
  assert.ok(body.error && typeof body.error === "object", `an {error} body: ${context}`);
  const error = body.error;
  for (const field of ERROR_FIELDS) {
    assert.ok(Object.hasOwn(error, field), `error field \`${field}\` is present: ${context}`);
  }
  assert.equal(error.code, expected.code, `error.code: ${context}`);
  assert.equal(error.type, expected.type, `error.type: ${context}`);
  assert.equal(error.param, expected.param, `error.param: ${context}`);
  assert.equal(error.httpStatusCode, expected.status, `error.httpStatusCode: ${context}`);
  const retryable = expected.retryable ?? false;
  assert.equal(error.retryable, retryable, `error.retryable: ${context}`);
  assert.equal(res.headers["svc-should-retry"], String(retryable), `Svc-Should-Retry: ${context}`);
  assert.equal(res.headers["x-should-retry"], String(retryable), `X-Should-Retry: ${context}`);
  assert.equal(error.outcome, expected.outcome ?? "not_applied", `error.outcome: ${context}`);
  assert.equal(typeof res.headers["svc-request-id"], "string", `Svc-Request-Id header: ${context}`);
  assert.equal(error.requestId, res.headers["svc-request-id"], `requestId = Svc-Request-Id: ${context}`);
  assert.equal(typeof error.message, "string", `message: ${context}`);
  assert.ok(error.message.length > 0, `message is not empty: ${context}`);
  assert.ok(error.userFacingMessage.length > 0, `userFacingMessage is not empty: ${context}`);
  assert.ok(Array.isArray(error.fixes) && error.fixes.length > 0, `at least one fix: ${context}`);
  for (const fix of error.fixes) {
    assert.ok(["developer", "end_user", "support"].includes(fix.actor), `fix actor: ${context}`);
    assert.ok(fix.action.length > 0, `fix action: ${context}`);
  }
  assert.equal(typeof error.cause, "string", `cause: ${context}`);
  assert.doesNotThrow(() => new URL(error.docsUrl), `docsUrl is a URI: ${context}`);
  assert.ok(error.details !== null && typeof error.details === "object", `details object: ${context}`);
  assertRateLimitHeaders(res);
  return error;
}

/** The answer to one bad input, in a failure message's words, and what is wrong with it (if anything). */
export interface Refusal {
  /** `400 INVALID_PARAMETER param=limit`, `202 (accepted)`, `500 INTERNAL_ERROR param=null`. */
  outcome: string;
  /** Null when the input was refused as the contract says. */
  problem: string | null;
}

/**
 * Judges the answer to bad input (spec: Errors; issue 14): a 4xx (never 2xx, never 5xx) whose
 * error is in the spec's shape, whose code is the catalogue's for that status, and whose `param`
 * is one of `params`. An operation the application cannot do (`alwaysRefused`) refuses every call
 * with 422 LEDGER_OPERATION_UNSUPPORTED before it reads its input, which is a refusal too.
 */
export function judgeRefusal(
  res: LightMyRequestResponse,
  params: readonly string[],
  alwaysRefused = false,
): Refusal {
  let error: Partial<ErrorObject> | undefined;
  try {
    error = res.json<{ error?: Partial<ErrorObject> }>().error;
  } catch {
    error = undefined;
  }
  const code = typeof error?.code === "string" ? error.code : "-";
  const outcome =
    res.statusCode < 400
      ? `${res.statusCode} (accepted)`
      : `${res.statusCode} ${code} param=${error?.param === undefined ? "-" : String(error.param)}`;
  const fail = (problem: string): Refusal => ({ outcome, problem });
  if (res.statusCode < 400) return fail("accepted");
  if (res.statusCode >= 500) return fail("server error");
  if (!error) return fail(`not an {error} body: ${res.body.slice(0, 200)}`);
  const missing = ERROR_FIELDS.filter((field) => !Object.hasOwn(error, field));
  if (missing.length > 0) return fail(`error fields missing: ${missing.join(", ")}`);
  if (!isErrorCode(code)) return fail(`\`${code}\` is not a catalogue code`);
  if (catalogue[code].httpStatus !== res.statusCode) {
    return fail(`the catalogue's status of ${code} is ${String(catalogue[code].httpStatus)}`);
  }
  if (alwaysRefused && code === "LEDGER_OPERATION_UNSUPPORTED") return { outcome, problem: null };
  if (typeof error.param !== "string" || !params.includes(error.param)) {
    return fail(`param should name ${params.map((p) => `\`${p}\``).join(" or ")}`);
  }
  return { outcome, problem: null };
}

/**
 * Starts a stopwatch for a suite's diagnostics: the returned function tells the wall time and this
 * process's CPU time since (printed only, never asserted: the machine may be loaded).
 */
export function stopwatch(): () => string {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return `${Math.round(performance.now() - wall)} ms, ${Math.round((used.user + used.system) / 1000)} ms CPU`;
  };
}

/** `Svc-Request-Id` of a response that is not a Request (decision 0005). */
export const CALL_ID = /^call_[0-9a-hjkmnp-tv-z]{26}$/;
/** `Svc-Request-Id` of an application operation's response: its Request's ID. */
export const REQUEST_ID = /^req_[0-9a-hjkmnp-tv-z]{26}$/;

/**
 * Every response carries `Svc-Request-Id` and the `RateLimit-*` headers (spec: Headers). The ID is
 * a `call_` ID unless the response is a Request's (`kind: "request"`).
 */
export function assertCommonHeaders(
  res: Pick<LightMyRequestResponse, "statusCode" | "body" | "headers">,
  kind: "call" | "request" = "call",
): void {
  const context = `${res.statusCode} ${res.body}`;
  assert.match(
    String(res.headers["svc-request-id"]),
    kind === "call" ? CALL_ID : REQUEST_ID,
    `Svc-Request-Id: ${context}`,
  );
  assertRateLimitHeaders(res);
}

function assertRateLimitHeaders(res: Pick<LightMyRequestResponse, "statusCode" | "body" | "headers">): void {
  const context = `${res.statusCode} ${JSON.stringify(res.headers)} ${res.body}`;
  for (const name of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) {
    assert.match(String(res.headers[name]), /^\d+$/, `${name} header: ${context}`);
  }
}

/** Asserts a success status and returns the parsed body. */
export function expectStatus<T = Record<string, unknown>>(res: LightMyRequestResponse, status: number): T {
  assert.equal(res.statusCode, status, `HTTP status; body: ${res.statusCode} ${res.body}`);
  return res.json<T>();
}

export const ID = {
  endUser: /^eu_[0-9a-hjkmnp-tv-z]{26}$/,
  authSession: /^authsess_[0-9a-hjkmnp-tv-z]{26}$/,
  connection: /^conn_[0-9a-hjkmnp-tv-z]{26}$/,
};

/** UTC ISO 8601 with milliseconds (spec: platform object timestamps). */
export const UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export interface EndUser {
  id: string;
  objectType: string;
  createdAt: string;
  companyName: string;
  sourceId: string;
  email: string | null;
  integrationConnections: {
    id: string;
    objectType: string;
    status: string;
    isTest: boolean;
    integrationSlug: string;
  }[];
}

export interface ListPage<T> {
  objectType: string;
  url: string;
  data: T[];
  nextCursor: string | null;
  hasMore: boolean;
  remainingCount: unknown;
  cursorExpiresAt: unknown;
}

/** A small client over `app.inject` with one secret key. */
export class Client {
  private sequence = 0;
  constructor(
    readonly app: FastifyInstance,
    readonly key: string,
  ) {}

  request(
    method: "GET" | "POST" | "PUT" | "DELETE",
    url: string,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<LightMyRequestResponse> {
    const inject: InjectOptions = { method, url, headers: { ...bearer(this.key), ...options.headers } };
    if (options.body !== undefined) inject.payload = options.body as NonNullable<InjectOptions["payload"]>;
    return this.app.inject(inject);
  }

  /** Creates an end user with a fresh `sourceId` unless one is given. */
  async createEndUser(body: Record<string, unknown> = {}): Promise<EndUser> {
    this.sequence += 1;
    const res = await this.request("POST", "/v1/end-users", {
      body: {
        companyName: `Company ${this.sequence}`,
        sourceId: `src-${Date.now()}-${this.sequence}`,
        ...body,
      },
    });
    return expectStatus<EndUser>(res, 201);
  }

  /** Every end user ID of the project, newest first (follows cursors). */
  async endUserIds(): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = cursor
        ? `/v1/end-users?limit=100&cursor=${encodeURIComponent(cursor)}`
        : "/v1/end-users?limit=100";
      const page = expectStatus<ListPage<EndUser>>(await this.request("GET", url), 200);
      ids.push(...page.data.map((u) => u.id));
      cursor = page.nextCursor;
    } while (cursor !== null);
    return ids;
  }
}
