import type { IncomingHttpHeaders } from "node:http";
import { ServiceError } from "../errors/service-error.ts";
import { parseIdempotencyKey } from "./idempotency-key.ts";

/**
 * The headers of an application operation (spec: Headers on application operations), parsed once.
 */
export interface CallOptions {
  endUserId: string;
  /** Where the end user was named: the path's `id` (passthrough) or the `Svc-End-User-Id` header. */
  endUserParam: "id" | "Svc-End-User-Id";
  async: boolean;
  timeoutSeconds: number;
  queueTtlSeconds: number;
  idempotencyKey: string | null;
}

/** Spec: default sync wait 90 s; 60 s for the health check. */
export const DEFAULT_TIMEOUT_SECONDS = 90;
export const HEALTH_CHECK_TIMEOUT_SECONDS = 60;
export const DEFAULT_QUEUE_TTL_SECONDS = 3600;

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

function integerHeader(
  headers: IncomingHttpHeaders,
  name: string,
  label: string,
  min: number,
  max: number,
): number | null {
  const raw = single(headers, name);
  if (raw === undefined) return null;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: label,
      message: `\`${label}\` must be an integer from ${min} to ${max}.`,
    });
  }
  return Number(raw);
}

/** `endUserIdFromPath` is set for operations that name the end user in their path (passthrough). */
export function parseCallOptions(
  headers: IncomingHttpHeaders,
  defaults: { timeoutSeconds: number },
  endUserIdFromPath?: string,
): CallOptions {
  const named = single(headers, "svc-end-user-id");
  // Decision 0038: an operation that names its end user in the path takes the header only when it
  // names the same one; two different end users in one call is a caller's bug, never guessed.
  if (endUserIdFromPath !== undefined && named !== undefined && named !== endUserIdFromPath) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: "Svc-End-User-Id",
      message:
        "`Svc-End-User-Id` names another end user than the path; send the path's end user or leave the header out.",
    });
  }
  const endUserId = endUserIdFromPath ?? named;
  if (endUserId === undefined || endUserId === "")
    throw new ServiceError("END_USER_ID_MISSING", { param: "Svc-End-User-Id" });
  if (!/^eu_[0-9a-hjkmnp-tv-z]{26}$/.test(endUserId)) {
    if (endUserIdFromPath !== undefined)
      throw new ServiceError("RESOURCE_MISSING", { param: "id", message: "No such end user." });
    throw new ServiceError("INVALID_PARAMETER", {
      param: "Svc-End-User-Id",
      message: "`Svc-End-User-Id` must be an end user ID (`eu_` + 26 characters).",
    });
  }
  const prefer = single(headers, "prefer");
  if (prefer !== undefined && prefer.trim() !== "respond-async") {
    throw new ServiceError("INVALID_PARAMETER", {
      param: "Prefer",
      message: "The only supported `Prefer` value is `respond-async`.",
    });
  }
  const isAsync = prefer !== undefined;
  const timeoutSeconds =
    integerHeader(headers, "svc-timeout-seconds", "Svc-Timeout-Seconds", 1, 300) ?? defaults.timeoutSeconds;
  const ttl = integerHeader(headers, "svc-queue-ttl-seconds", "Svc-Queue-Ttl-Seconds", 10, 86400);
  // Decision 0040: a queue TTL on a sync call is refused, never ignored.
  if (ttl !== null && !isAsync) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: "Svc-Queue-Ttl-Seconds",
      message: "`Svc-Queue-Ttl-Seconds` applies only to asynchronous calls (`Prefer: respond-async`).",
    });
  }
  return {
    endUserId,
    endUserParam: endUserIdFromPath === undefined ? "Svc-End-User-Id" : "id",
    async: isAsync,
    timeoutSeconds,
    queueTtlSeconds: ttl ?? DEFAULT_QUEUE_TTL_SECONDS,
    idempotencyKey: parseIdempotencyKey(headers["idempotency-key"]),
  };
}
