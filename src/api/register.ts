import { KNOWN_SVC_HEADERS } from "./plugins/svc-headers.ts";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import {
  IDEMPOTENCY_RETENTION_MS,
  fingerprintText,
  parseIdempotencyKey,
} from "../requests/idempotency-key.ts";
import {
  claimIdempotencyKey,
  releaseIdempotencyKey,
  releaseUnansweredClaim,
  replayCopyPlace,
  saveIdempotentResponse,
  type IdempotencyRow,
} from "../store/idempotency.ts";
import { isStoreUnavailable } from "../store/unavailable.ts";
import type { z } from "zod";
import { knownJsonBody } from "../platform/json-text.ts";
import type { RouteDefinition, RouteResult } from "./route.ts";
import { parseWith } from "./validation.ts";

/** Registers declared routes: auth flags, strict query/body parsing, platform idempotency. */
export function registerRoutes(app: FastifyInstance, deps: Deps, routes: RouteDefinition[]): void {
  const unreleased = new UnreleasedClaims();
  for (const route of routes) {
    const write = route.write ?? route.method !== "GET";
    const noQuery = route.query ? emptyQueryOf(route.query) : null;
    app.route({
      method: route.method,
      url: route.url,
      config: {
        auth: true,
        write,
        // Application operations take `Prefer` (as in api/openapi.ts): they answer with Server-Timing.
        application: (route.headers ?? []).some((h) => h.name === "Prefer"),
        svcHeaders: (route.headers ?? [])
          .map((h) => h.name.toLowerCase())
          .filter((name) => name.startsWith("svc-") && !KNOWN_SVC_HEADERS.has(name)),
      },
      handler: async (request, reply) => {
        const principal = request.principal;
        if (!principal) throw new ServiceError("API_KEY_MISSING");
        const raw = route.input === "raw";
        const query = raw
          ? request.query
          : route.query
            ? noQuery !== null && isEmptyObject(request.query)
              ? { ...noQuery }
              : parseWith(route.query, request.query)
            : rejectQuery(request);
        const body =
          raw || route.input === "rawBody"
            ? request.body
            : route.body
              ? parseBody(
                  route.body,
                  // An empty body is no body; a JSON `null` is a body, and not an object.
                  request.body === undefined ? (route.method === "DELETE" ? undefined : {}) : request.body,
                )
              : rejectBody(request);
        const params = request.params as Record<string, string>;
        const run = () => route.handler({ deps, principal, body, query, params, request, reply });
        const idempotency = route.idempotency ?? (write && route.method !== "GET" ? "platform" : "none");
        const result =
          idempotency === "platform"
            ? await withPlatformIdempotency(deps, request, run, unreleased)
            : await run();
        return send(reply, result);
      },
    });
  }
}

/**
 * What a query schema makes of no query parameters at all (its defaults), parsed once: most calls
 * send none. Null when that is an error or holds anything but plain values (each call then parses).
 */
function emptyQueryOf(schema: z.ZodType): Record<string, unknown> | null {
  const parsed = schema.safeParse({});
  if (!parsed.success || parsed.data === null || typeof parsed.data !== "object") return null;
  const values = Object.values(parsed.data);
  return values.every((v) => v === null || typeof v !== "object")
    ? (parsed.data as Record<string, unknown>)
    : null;
}

function isEmptyObject(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  for (const _ in value) return false;
  return true;
}

/** A body's problems name the field, or `body` itself when the whole body is wrong (an array, `null`…). */
function parseBody<T>(schema: z.ZodType<T>, input: unknown): T {
  try {
    return parseWith(schema, input);
  } catch (error) {
    if (error instanceof ServiceError && error.param === null) {
      throw new ServiceError(error.code, { param: "body", message: error.message });
    }
    throw error;
  }
}

/** An operation without body fields takes no body, or `{}`: anything else is refused, not ignored. */
function rejectBody(request: FastifyRequest): undefined {
  const body = request.body;
  if (body === undefined) return undefined;
  const empty =
    typeof body === "object" && body !== null && !Array.isArray(body) && Object.keys(body).length === 0;
  if (empty) return undefined;
  const first =
    typeof body === "object" && body !== null && !Array.isArray(body) ? Object.keys(body)[0] : undefined;
  if (first !== undefined) {
    throw new ServiceError("UNKNOWN_PARAMETER", {
      param: first,
      message: `Unknown parameter \`${first}\`: this operation takes no body fields.`,
    });
  }
  throw new ServiceError("INVALID_PARAMETER", {
    param: "body",
    message: "This operation takes no body (or `{}`).",
  });
}

function rejectQuery(request: FastifyRequest): undefined {
  const keys = Object.keys(request.query ?? {});
  if (keys.length > 0 && keys[0] !== undefined) {
    throw new ServiceError("UNKNOWN_PARAMETER", {
      param: keys[0],
      message: `Unknown query parameter \`${keys[0]}\`.`,
    });
  }
  return undefined;
}

export function send(reply: FastifyReply, result: RouteResult): FastifyReply {
  if (result.headers)
    for (const [name, value] of Object.entries(result.headers)) void reply.header(name, value);
  // A body serialised already (a settled Request's result, stored as this text; a mirrored page as
  // its records' bytes): sent as it is, byte for byte what Fastify's JSON.stringify would send
  // (decision 0035).
  const known = knownJsonBody(result.body);
  if (known !== undefined)
    return reply
      .code(result.status ?? 200)
      .type("application/json; charset=utf-8")
      .send(known);
  return reply.code(result.status ?? 200).send(result.body);
}

/**
 * Platform writes honour `Idempotency-Key` (spec: auth sessions list IDEMPOTENCY_KEY_INVALID and
 * IDEMPOTENCY_KEY_REUSED): the first response is stored sealed (it may contain a credential such as
 * `clientSecret`) and replayed for the same request; another request → 422. The copy is sealed under
 * a key derived from the key-encryption key and the Idempotency-Key together (decision 0032): the
 * Idempotency-Key is stored beside it, so alone it protected nothing. Copies sealed the old way
 * (with the Idempotency-Key alone) still replay within their 7 days. Application operations use the
 * Request engine's idempotency instead.
 */
async function withPlatformIdempotency(
  deps: Deps,
  request: FastifyRequest,
  run: () => Promise<RouteResult>,
  unreleased: UnreleasedClaims,
): Promise<RouteResult> {
  const key = parseIdempotencyKey(request.headers["idempotency-key"]);
  const principal = request.principal;
  if (key === null || !principal) return run();
  const now = new Date(deps.clock.now());
  const identity = fingerprintText({
    method: request.method,
    path: request.url,
    endUserId: null,
    body: request.body ?? null,
  });
  const fingerprint = deps.sealing.fingerprint(identity);
  const claimKey = () =>
    claimIdempotencyKey(
      deps.db,
      principal,
      {
        key,
        fingerprint,
        request_id: null,
        response_box: null,
        response_status: null,
        created_at: now,
        expires_at: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS),
      },
      now,
    );
  let claim = await claimKey();
  const scope = `${principal.projectId}:${principal.mode}:${key}`;
  if (!claim.claimed && abandoned(claim.existing, scope, unreleased, now.getTime())) {
    // A claim whose attempt failed without releasing it (the store stopped answering): taken over,
    // so that a retry the error's rule allows is not refused as "still in progress" (decision 0019).
    await releaseUnansweredClaim(deps.db, principal, key, claim.existing.created_at);
    unreleased.delete(scope);
    claim = await claimKey();
  }
  if (!claim.claimed) {
    if (!deps.sealing.fingerprintMatches(claim.existing.fingerprint, identity))
      throw new ServiceError("IDEMPOTENCY_KEY_REUSED", { param: "Idempotency-Key" });
    const stored = claim.existing.response_box
      ? deps.sealing.openWithContext(claim.existing.response_box, replayCopyPlace(principal, key), key)
      : null;
    if (stored === null || claim.existing.response_status === null) {
      throw new ServiceError("IDEMPOTENCY_KEY_REUSED", {
        param: "Idempotency-Key",
        message: "A request with this `Idempotency-Key` is still in progress.",
      });
    }
    return {
      status: claim.existing.response_status,
      body: JSON.parse(stored) as unknown,
      headers: { "Idempotent-Replayed": "true" },
    };
  }
  let result: RouteResult;
  try {
    result = await run();
  } catch (error) {
    // A failed attempt does not hold the key: the same key may be used to try again. When the store
    // does not answer, the release waits for this instance's next claim of the key.
    await releaseIdempotencyKey(deps.db, principal, key).catch((releaseError: unknown) => {
      if (!isStoreUnavailable(releaseError)) throw releaseError;
      unreleased.add(scope, now.getTime());
    });
    throw error;
  }
  try {
    await saveIdempotentResponse(
      deps.db,
      principal,
      key,
      result.status ?? 200,
      deps.sealing.sealWithContext(JSON.stringify(result.body), replayCopyPlace(principal, key), key),
    );
  } catch (error) {
    // The work is done and its answer goes to the caller; only the replay copy is lost.
    if (!isStoreUnavailable(error)) throw error;
    request.log.warn({ err: error }, "idempotent response not stored: the store does not answer");
  }
  return result;
}

/** An unanswered platform claim older than this is abandoned whoever made it (decision 0019). */
export const UNANSWERED_CLAIM_ABANDONED_MS = 10 * 60 * 1000;

/**
 * Platform claims whose failed attempt could not release them because the store did not answer,
 * per instance (scope `project:mode:key` → the claim's creation time).
 */
class UnreleasedClaims {
  private readonly claims = new Map<string, number>();
  add(scope: string, createdAtMs: number): void {
    if (this.claims.size >= 10_000) this.claims.delete(this.claims.keys().next().value ?? "");
    this.claims.set(scope, createdAtMs);
  }
  has(scope: string, createdAtMs: number): boolean {
    return this.claims.get(scope) === createdAtMs;
  }
  delete(scope: string): void {
    this.claims.delete(scope);
  }
}

function abandoned(
  existing: IdempotencyRow,
  scope: string,
  unreleased: UnreleasedClaims,
  nowMs: number,
): boolean {
  if (existing.response_box !== null || existing.request_id !== null) return false;
  const created = existing.created_at.getTime();
  return unreleased.has(scope, created) || nowMs - created > UNANSWERED_CLAIM_ABANDONED_MS;
}
