import type { operations } from "./generated/openapi.js";

/** An operation ID of the OpenAPI document (`ledger.invoices.list`, `endUsers.create`, …). */
export type OperationId = keyof operations;

type JsonContent<R> = R extends { content: { "application/json": infer B } } ? B : never;

/** The query parameters of an operation. */
export type QueryOf<K extends OperationId> = operations[K]["parameters"] extends { query?: infer Q }
  ? NonNullable<Q>
  : never;

/** The JSON body of an operation. */
export type BodyOf<K extends OperationId> = operations[K] extends { requestBody?: infer R }
  ? JsonContent<NonNullable<R>>
  : never;

type Responses<K extends OperationId> = operations[K]["responses"];
type SuccessBody<R> = [JsonContent<R>] extends [never] ? unknown : JsonContent<R>;

/**
 * What an operation answers on success: the JSON of its 200 or 201 response. `unknown` while the
 * document has no schema for it (the value is still returned as the service sent it).
 */
export type ResultOf<K extends OperationId> = 200 extends keyof Responses<K>
  ? SuccessBody<Responses<K>[200]>
  : 201 extends keyof Responses<K>
    ? SuccessBody<Responses<K>[201]>
    : unknown;

/** One record of a cursor list. */
export type ItemOf<K extends OperationId> = ResultOf<K> extends { data: (infer T)[] } ? T : unknown;

/** Async mode: `Prefer: respond-async`, then the client waits on the Request until it settles. */
export interface AsyncOptions {
  /** `Svc-Queue-Ttl-Seconds` (10 to 86400): how long the Request may wait for the connector. */
  queueTtlSeconds?: number;
  /** Called with the 202's Request before the client starts waiting on it. */
  onAccepted?: (request: RequestResource) => void;
}

/** Per-call options. Headers an operation does not take are not sent. */
export interface CallOptions {
  /** `Svc-End-User-Id` for this call (overrides the client's). */
  endUserId?: string;
  /** `Idempotency-Key` for this logical write (default: a new random UUID, reused on every retry). */
  idempotencyKey?: string;
  /** `Svc-Timeout-Seconds` (1 to 300): how long a sync call waits for the application. */
  timeoutSeconds?: number;
  /** Send the call async and wait on its Request (`true`, or options). */
  async?: boolean | AsyncOptions;
  /** Retries after the first attempt (default: the client's). */
  maxRetries?: number;
  signal?: AbortSignal;
  /** Extra headers. */
  headers?: Record<string, string>;
}

/** The fields of a Request (`GET /v1/requests/{id}`) the client reads. */
export interface RequestResource {
  id: string;
  objectType: "request";
  operationId: string;
  mode: string;
  status: string;
  outcome: string;
  error: ApiErrorObject | null;
  result: unknown;
  [field: string]: unknown;
}

/** The `error` object of every error response (spec: Errors). */
export interface ApiErrorObject {
  type: string;
  code: string;
  message: string;
  userFacingMessage: string;
  httpStatusCode: number | null;
  integrationCode: string | null;
  requestId: string;
  cause: string;
  fixes: { actor: "developer" | "end_user" | "support"; action: string }[];
  docsUrl: string;
  retryable: boolean;
  outcome: string;
  param: string | null;
  details: Record<string, unknown>;
}
