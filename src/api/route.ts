import type { FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import type { Deps } from "../deps.ts";
import type { Principal } from "../tenancy/api-keys.ts";

/**
 * A route is declared once: its schemas drive validation here and the OpenAPI document
 * (src/api/openapi.ts). Handlers are thin: extract, call one function, shape the reply.
 */
export interface RouteContext<B, Q> {
  deps: Deps;
  /** Present on authenticated routes. */
  principal: Principal;
  body: B;
  query: Q;
  params: Record<string, string>;
  request: FastifyRequest;
  reply: FastifyReply;
}

export interface RouteResult {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A request header as OpenAPI documents it. */
export interface HeaderDoc {
  readonly name: string;
  readonly required: boolean;
  readonly description: string;
  /** Defaults to a plain string. */
  readonly schema?: Record<string, unknown>;
}

export interface RouteDefinition<B = unknown, Q = unknown> {
  method: "GET" | "POST" | "PUT" | "DELETE";
  url: string;
  operationId: string;
  summary: string;
  tag: string;
  /** `secret` (default): Bearer secret key required. */
  auth?: "secret";
  /** Writes are refused to read-only keys (403 API_KEY_READ_ONLY). Defaults to method !== GET. */
  write?: boolean;
  /**
   * Who honours `Idempotency-Key`, independent of {@link write}: `platform` (the default for
   * non-GET routes) stores and replays the first HTTP response; `request` leaves it to the Request
   * engine (application operations: same key attaches to or replays the Request); `none` ignores it.
   */
  idempotency?: "platform" | "request" | "none";
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  /**
   * `raw`: the handler receives the query and body as sent and validates them itself (typed
   * operations: the typed-call core validates every input, for HTTP and batch members alike).
   * `rawBody`: only the body (passthrough reads XML or `{xml}` itself).
   */
  input?: "raw" | "rawBody";
  /** Names of path parameters, for OpenAPI. */
  pathParams?: string[];
  /** Extra headers documented for the operation (for example `Svc-End-User-Id`). */
  headers?: readonly HeaderDoc[];
  /**
   * Valid JSON request bodies by name, published as the OpenAPI request body's `examples` and sent
   * by the contract suites (test/contract/security.test.ts) to every operation. Fields named
   * `endUserId` and `publishableKey` are replaced there with the caller's own. An operation whose
   * kind depends on its body (passthrough) names one `read` and one `write` example.
   */
  examples?: Record<string, unknown>;
  /**
   * The success response for OpenAPI: its status, description and body schema (converted with the
   * output types; schemas with a `meta({id})` become shared components). A status of 400 or more
   * marks an operation that only ever answers that error (an unsupported typed operation).
   */
  response: { status: number; description: string; schema?: z.ZodType };
  /**
   * Error statuses this route answers beyond those src/api/openapi.ts derives for every route (400,
   * 401, 403, 429, 500, 503; 404 with path parameters; 413 and 422 for writes; the connection's and
   * the application's for application operations).
   */
  errors?: readonly number[];
  /**
   * Ready-made OpenAPI fragments (typed operations derive theirs from the resource registry and
   * share nested records as components) used instead of converting `body` and `response.schema`.
   */
  openapi?: {
    requestBody?: Record<string, unknown>;
    /** Extra media types of the request body (`application/xml` → its schema). */
    requestMedia?: Record<string, Record<string, unknown>>;
    responseBody?: Record<string, unknown>;
    /** Extra media types of the success response (`application/xml` → its schema). */
    responseMedia?: Record<string, Record<string, unknown>>;
    components?: Record<string, Record<string, unknown>>;
    /** Query parameters with their own schemas (instead of converting `query`). */
    queryParameters?: {
      name: string;
      required: boolean;
      description: string;
      schema: Record<string, unknown>;
    }[];
  };
  handler(ctx: RouteContext<B, Q>): Promise<RouteResult>;
}

/** Keeps each route's own body/query types while collecting them in one list. */
export function defineRoute<B = undefined, Q = undefined>(route: RouteDefinition<B, Q>): RouteDefinition {
  return route;
}
