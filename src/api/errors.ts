import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import type { Deps } from "../deps.ts";
import { toErrorBody } from "../errors/render.ts";
import { coerceError, ServiceError } from "../errors/service-error.ts";
import { isStoreUnavailable } from "../store/unavailable.ts";
import { BodyTimeoutError } from "../platform/body-deadline.ts";

/** `Retry-After` of a call refused because the store does not answer (decision 0019). */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * A failure of the store itself (store/unavailable.ts) is 503 SERVICE_UNAVAILABLE, retryable, with
 * `Retry-After`: nothing the call asked for was done (or, once a Request exists, the caller is told
 * so by the Request engine, requests/submit.ts). Any other unexpected failure is INTERNAL_ERROR.
 */
export function fromUnexpected(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error as ServiceError;
  if (isStoreUnavailable(error)) {
    return new ServiceError("SERVICE_UNAVAILABLE", {
      message: "The service's store does not answer; nothing was done. Retry after `Retry-After` seconds.",
      cause: error,
      retryAfterSeconds: STORE_RETRY_AFTER_SECONDS,
    });
  }
  return coerceError(error);
}

/** Methods that never change anything: a failed call of one may be sent again whatever its outcome. */
const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Whether the identical call may be sent again automatically: the body's `retryable`,
 * `Svc-Should-Retry` and `X-Should-Retry` (decision 0045). The code's retry rule says it, except
 * that a write whose outcome is `unknown` or `pending` is never resent (spec: Errors), whatever its
 * code says — an INTERNAL_ERROR or an unreadable answer on a write may have been applied, and a
 * client that sends no Idempotency-Key would apply it twice.
 */
export function shouldRetry(error: ServiceError, method: string): boolean {
  if (!error.retryable) return false;
  const mayBeApplied = error.outcome === "unknown" || error.outcome === "pending";
  return !(mayBeApplied && !READ_METHODS.has(method.toUpperCase()));
}

/**
 * The single error renderer (house style §2.4): every error leaves as the spec's `{error:{...}}`
 * body with `Svc-Should-Retry` and the same value in `X-Should-Retry` (the header generated SDKs
 * obey, decision 0045), and `Retry-After` for 429 and retryable 503.
 */
export function fromFrameworkError(error: unknown, bodyLimitBytes = 20 * 1024 * 1024): ServiceError {
  if (error instanceof ServiceError) return error as ServiceError;
  if (error instanceof BodyTimeoutError)
    return new ServiceError("INVALID_PARAMETER", { param: "body", message: error.message });
  const code = (error as Partial<FastifyError> | null)?.code;
  switch (code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ServiceError("PAYLOAD_TOO_LARGE", {
        message: `The request body is larger than ${bodyLimitText(bodyLimitBytes)}.`,
      });
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new ServiceError("INVALID_JSON", {
        message: `The request body is not valid JSON: ${(error as Error).message}`,
      });
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
    case "FST_ERR_CTP_EMPTY_TYPE":
    case "FST_ERR_CTP_INVALID_TYPE":
      return new ServiceError("INVALID_PARAMETER", {
        param: "Content-Type",
        message: "Unsupported Content-Type; send `application/json`.",
      });
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new ServiceError("INVALID_PARAMETER", {
        param: "Content-Length",
        message: "`Content-Length` does not match the body.",
      });
    case "FST_ERR_BAD_URL":
      return new ServiceError("INVALID_PARAMETER", {
        message: "The URL is not valid (a path segment has a malformed percent-encoding).",
      });
    case "FST_ERR_MAX_PARAM_LENGTH":
      return new ServiceError("RESOURCE_MISSING", {
        message: "No such object: a path segment is longer than any ID.",
      });
    default:
      if (error instanceof SyntaxError && "statusCode" in error) {
        return new ServiceError("INVALID_JSON", {
          message: `The request body is not valid JSON: ${error.message}`,
        });
      }
      // Any other refusal of the HTTP framework (a 4xx it raised itself) is the caller's input, never a 500.
      if (isClientError(error)) {
        return new ServiceError("INVALID_PARAMETER", {
          message: `The request is not valid: ${error.message}`,
        });
      }
      return fromUnexpected(error);
  }
}

function bodyLimitText(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

function isClientError(error: unknown): error is Error {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return error instanceof Error && typeof status === "number" && status >= 400 && status < 500;
}

export function sendError(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  raw: unknown,
): FastifyReply {
  const thrown = fromFrameworkError(raw, request.routeOptions.bodyLimit);
  // Codes without an HTTP status live only on Request resources (spec: Errors, decision 0011); one
  // reaching a response is a bug, answered as such rather than with a status the spec does not give.
  const error =
    thrown.httpStatus === null
      ? new ServiceError("INTERNAL_ERROR", {
          cause: new Error(`${thrown.code} has no HTTP status and cannot answer a call`),
        })
      : thrown;
  if (error.code === "INTERNAL_ERROR") {
    request.log.error({ err: error.cause ?? error }, "internal error");
  } else if (error.code === "SERVICE_UNAVAILABLE" && error.cause !== undefined) {
    request.log.warn({ err: error.cause }, "the store does not answer");
  }
  const retryable = shouldRetry(error, request.method);
  const body = {
    ...toErrorBody(error, request.svcRequestId || String(request.id), deps.config.publicUrl),
    retryable,
  };
  const status = error.httpStatus ?? 500;
  void reply.header("Svc-Should-Retry", String(retryable));
  void reply.header("X-Should-Retry", String(retryable));
  if (status === 429 || (status === 503 && retryable)) {
    void reply.header("Retry-After", String(error.retryAfterSeconds ?? (status === 429 ? 1 : 5)));
  }
  return reply.code(status).type("application/json; charset=utf-8").send({ error: body });
}
