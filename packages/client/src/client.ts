import { randomUUID } from "node:crypto";
import { LedgerBridgeError } from "./errors.ts";
import { OPERATIONS, type OperationName, type OperationRow } from "./generated/operations.ts";
import type { ClientResources } from "./generated/resources.js";
import { PagePromise } from "./pagination.ts";
import type { AsyncOptions, CallOptions, RequestResource } from "./types.ts";

export interface ClientOptions {
  /** A secret key (`sk_live_…` / `sk_test_…`). */
  apiKey: string;
  /** The service's address (default `http://localhost:8080`). */
  baseUrl?: string;
  /** `Svc-End-User-Id` for every application operation (a call's `endUserId` overrides it). */
  endUserId?: string;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** First backoff delay when the answer gives no `Retry-After` (default 500 ms, doubling). */
  retryDelayMs?: number;
  /** Longest backoff delay (default 8 s). */
  maxRetryDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown (default 60 s). */
  maxRetryAfterSeconds?: number;
  /** `waitSeconds` of each long poll on a Request in async mode (default 30, at most 60). */
  pollWaitSeconds?: number;
  /** The `fetch` to use (default the global one): tests inject theirs. */
  fetch?: typeof fetch;
  /** Makes idempotency keys (default `crypto.randomUUID`). */
  idempotencyKey?: () => string;
  /** Waits before a retry (default `setTimeout`). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Headers sent on every call. */
  headers?: Record<string, string>;
}

/** Request states after which nothing changes. */
const SETTLED = new Set(["succeeded", "failed", "canceled"]);

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/**
 * The typed client: one namespace per resource of the OpenAPI document (`client.ledger.invoices`,
 * `client.endUsers`, `client.webhookEndpoints.deliveries`, …), each method one operation.
 *
 * Every call retries when the service says so (`Svc-Should-Retry: true`, waiting `Retry-After`
 * when given) and, for reads and for writes that carry an `Idempotency-Key`, when the connection
 * failed; a write's key is made once per call and sent on every attempt, so the service applies it
 * once. A write that takes no key is never resent after a lost answer.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- the namespaces are generated (ClientResources) and built in the constructor
export class LedgerBridge {
  readonly #options: Required<Omit<ClientOptions, "endUserId" | "headers">> &
    Pick<ClientOptions, "endUserId" | "headers">;

  constructor(options: ClientOptions) {
    this.#options = {
      baseUrl: "http://localhost:8080",
      maxRetries: 2,
      retryDelayMs: 500,
      maxRetryDelayMs: 8000,
      maxRetryAfterSeconds: 60,
      pollWaitSeconds: 30,
      fetch: globalThis.fetch.bind(globalThis),
      idempotencyKey: randomUUID,
      sleep: defaultSleep,
      ...options,
    };
    this.#options.baseUrl = this.#options.baseUrl.replace(/\/+$/, "");
    const tree: Record<string, unknown> = {};
    for (const name of Object.keys(OPERATIONS) as OperationName[]) {
      const parts = name.split(".");
      let node = tree;
      for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
      node[parts.at(-1) ?? name] = (...args: unknown[]) => this.#invoke(name, args);
    }
    Object.assign(this, tree);
  }

  /** A client like this one whose calls act for `endUserId`. */
  withEndUser(endUserId: string): LedgerBridge {
    return new LedgerBridge({ ...this.#options, endUserId });
  }

  /**
   * Waits on a Request (`GET /v1/requests/{id}?waitSeconds=…`, repeated) until it settles, and
   * returns its `result`; a failed or canceled Request throws its error. A write whose answer was
   * lost (`outcome_unknown`) throws `LEDGER_WRITE_OUTCOME_UNKNOWN` at once, as a sync call does:
   * the service may still recover it, but the caller must check before writing again, never resend.
   */
  async waitForRequest(id: string, options: Pick<CallOptions, "signal"> = {}): Promise<unknown> {
    for (;;) {
      const request = (await this.#send(
        "GET",
        `/v1/requests/${encodeURIComponent(id)}?waitSeconds=${this.#options.pollWaitSeconds}`,
        {
          headers: {},
          body: undefined,
          resendable: true,
          maxRetries: this.#options.maxRetries,
          signal: options.signal,
        },
      )) as RequestResource;
      if (request.status === "outcome_unknown") throw outcomeUnknown(request);
      if (!SETTLED.has(request.status)) continue;
      if (request.status === "succeeded") return request.result;
      throw request.error
        ? LedgerBridgeError.fromBody(request.error.httpStatusCode, { error: request.error }, request.id)
        : new LedgerBridgeError({
            code: "UNEXPECTED_RESPONSE",
            message: `request ${request.id} ended ${request.status} without an error`,
            httpStatus: null,
            requestId: request.id,
          });
    }
  }

  /** Calls any operation by ID: path parameters in order, then its query or body, then options. */
  #invoke(name: OperationName, args: unknown[]): unknown {
    const row: OperationRow = OPERATIONS[name];
    const pathValues = args.slice(0, row.pathParams.length);
    const input = row.input === "none" ? undefined : args[row.pathParams.length];
    const options = (args[row.pathParams.length + (row.input === "none" ? 0 : 1)] ?? {}) as CallOptions;
    let path = row.path;
    row.pathParams.forEach((param, i) => {
      const value = pathValues[i];
      if (typeof value !== "string" || value === "") {
        throw new TypeError(`${name}: path parameter \`${param}\` must be a non-empty string`);
      }
      path = path.replace(`{${param}}`, encodeURIComponent(value));
    });
    if (row.paginated) {
      const query = (input ?? {}) as Record<string, unknown>;
      return new PagePromise((cursor) =>
        this.#call(row, path, cursor === undefined ? query : { ...query, cursor }, undefined, options),
      );
    }
    return row.input === "body"
      ? this.#call(row, path, undefined, input, options)
      : this.#call(row, path, input as Record<string, unknown> | undefined, undefined, options);
  }

  async #call(
    row: OperationRow,
    path: string,
    query: Record<string, unknown> | undefined,
    body: unknown,
    options: CallOptions,
  ): Promise<unknown> {
    const headers: Record<string, string> = { ...options.headers };
    const endUserId = options.endUserId ?? this.#options.endUserId;
    if (row.endUser && endUserId !== undefined) headers["svc-end-user-id"] = endUserId;
    const asyncOptions: AsyncOptions | undefined =
      options.async === true ? {} : options.async === false ? undefined : options.async;
    if (row.async) {
      if (options.timeoutSeconds !== undefined)
        headers["svc-timeout-seconds"] = String(options.timeoutSeconds);
      if (asyncOptions) {
        headers.prefer = "respond-async";
        if (asyncOptions.queueTtlSeconds !== undefined) {
          headers["svc-queue-ttl-seconds"] = String(asyncOptions.queueTtlSeconds);
        }
      }
    }
    // One key per logical write, made here once and sent on every attempt below.
    if (row.idempotent) headers["idempotency-key"] = options.idempotencyKey ?? this.#options.idempotencyKey();
    const url = path + queryString(query);
    const answer = await this.#send(row.method, url, {
      headers,
      body,
      resendable: row.method === "GET" || row.idempotent,
      maxRetries: options.maxRetries ?? this.#options.maxRetries,
      signal: options.signal,
      onAccepted: asyncOptions && row.async ? asyncOptions : undefined,
    });
    return answer;
  }

  /** One logical call: attempts until success, a final error, or the retries are spent. */
  async #send(
    method: string,
    url: string,
    call: {
      headers: Record<string, string>;
      body: unknown;
      /** Whether a lost answer may be resent (a read, or a write with an Idempotency-Key). */
      resendable: boolean;
      maxRetries: number;
      signal: AbortSignal | undefined;
      onAccepted?: AsyncOptions | undefined;
    },
  ): Promise<unknown> {
    const o = this.#options;
    const headers: Record<string, string> = {
      accept: "application/json",
      ...o.headers,
      ...call.headers,
      authorization: `Bearer ${o.apiKey}`,
    };
    let payload: string | undefined;
    if (call.body !== undefined) {
      payload = JSON.stringify(call.body);
      headers["content-type"] = "application/json";
    }
    for (let attempt = 0; ; attempt++) {
      const canRetry = attempt < call.maxRetries;
      let response: Response;
      try {
        response = await o.fetch(`${o.baseUrl}${url}`, {
          method,
          headers,
          ...(payload === undefined ? {} : { body: payload }),
          ...(call.signal ? { signal: call.signal } : {}),
        });
      } catch (error) {
        if (call.signal?.aborted) throw error;
        if (canRetry && call.resendable) {
          await o.sleep(this.#backoff(attempt), call.signal);
          continue;
        }
        throw new LedgerBridgeError(
          {
            code: "CONNECTION_ERROR",
            message: `${method} ${url}: no answer (${error instanceof Error ? error.message : String(error)})`,
            httpStatus: null,
          },
          { cause: error },
        );
      }
      const requestId = response.headers.get("svc-request-id");
      const body = await readBody(response);
      if (response.status === 202 && call.onAccepted) {
        const request = body as RequestResource;
        call.onAccepted.onAccepted?.(request);
        return this.waitForRequest(request.id, { signal: call.signal } as Pick<CallOptions, "signal">);
      }
      if (response.ok) return body;
      const error = LedgerBridgeError.fromBody(response.status, body, requestId);
      const should = response.headers.get("svc-should-retry");
      // The service says whether the identical request may succeed; without its header (a proxy's
      // answer), a gateway error is retried only when resending is safe.
      const retry =
        should === null ? call.resendable && [502, 503, 504].includes(response.status) : should === "true";
      if (!canRetry || !retry) throw error;
      const after = retryAfterMs(response.headers.get("retry-after"));
      if (after !== null && after > o.maxRetryAfterSeconds * 1000) throw error;
      await o.sleep(after ?? this.#backoff(attempt), call.signal);
    }
  }

  #backoff(attempt: number): number {
    const o = this.#options;
    return Math.min(o.maxRetryDelayMs, o.retryDelayMs * 2 ** attempt);
  }
}

// The generated namespaces, as properties of every client.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type -- see the class
export interface LedgerBridge extends ClientResources {}

/**
 * The error of a Request in `outcome_unknown`: its stored `LEDGER_WRITE_OUTCOME_UNKNOWN` (a batch's
 * says which members), or one made like the service's sync answer when it stored another code.
 */
function outcomeUnknown(request: RequestResource): LedgerBridgeError {
  if (request.error?.code === "LEDGER_WRITE_OUTCOME_UNKNOWN") {
    return LedgerBridgeError.fromBody(request.error.httpStatusCode, { error: request.error }, request.id);
  }
  return new LedgerBridgeError({
    code: "LEDGER_WRITE_OUTCOME_UNKNOWN",
    type: "OUTCOME_UNKNOWN_ERROR",
    message: `request ${request.id}: the write's answer was lost; it may have been applied. Read the Request again (or check the company file) before writing again.`,
    httpStatus: 502,
    requestId: request.id,
  });
}

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
function retryAfterMs(value: string | null): number | null {
  if (value === null) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === "") return undefined;
  if ((response.headers.get("content-type") ?? "").includes("json")) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

/** The query string: arrays as repeated keys, as the service reads them. */
function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? (value as unknown[]) : [value]) {
      params.append(
        key,
        typeof item === "string"
          ? item
          : typeof item === "number" || typeof item === "boolean"
            ? String(item)
            : JSON.stringify(item),
      );
    }
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
