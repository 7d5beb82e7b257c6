import type { ErrorCode } from "./generated/operations.ts";
import type { ApiErrorObject } from "./types.ts";

/**
 * Codes the client itself gives: `CONNECTION_ERROR` (no answer, after the retries the call
 * allowed) and `UNEXPECTED_RESPONSE` (an answer that is not the service's: a proxy's page, …).
 */
export type ClientErrorCode = "CONNECTION_ERROR" | "UNEXPECTED_RESPONSE";

/**
 * Every failure of a call: the service's error (`code` from its catalogue, `type`, `param`,
 * `httpStatus`, `requestId`, …), or the client's own (`ClientErrorCode`, `httpStatus` null for a
 * connection error). Branch on `code`. The service may add codes: unknown ones are kept as sent.
 */
export class LedgerBridgeError extends Error {
  override readonly name = "LedgerBridgeError";
  readonly code: ErrorCode | ClientErrorCode | (string & {});
  readonly type: string;
  readonly param: string | null;
  /** The response's status (null when there was none). */
  readonly httpStatus: number | null;
  /** `Svc-Request-Id`: the Request (`req_…`) or the call (`call_…`). */
  readonly requestId: string | null;
  readonly userFacingMessage: string;
  readonly retryable: boolean;
  readonly outcome: string;
  readonly details: Record<string, unknown>;
  readonly fixes: ApiErrorObject["fixes"];
  readonly docsUrl: string | null;
  readonly integrationCode: string | null;
  /** The `error` object as the service sent it (null for the client's own codes). */
  readonly error: ApiErrorObject | null;

  constructor(
    init: {
      code: string;
      message: string;
      type?: string;
      httpStatus: number | null;
      requestId?: string | null;
      error?: ApiErrorObject | null;
    },
    options?: { cause?: unknown },
  ) {
    super(init.message, options);
    const e = init.error ?? null;
    this.code = init.code;
    this.type = init.type ?? e?.type ?? "CLIENT_ERROR";
    this.param = e?.param ?? null;
    this.httpStatus = init.httpStatus;
    this.requestId = init.requestId ?? e?.requestId ?? null;
    this.userFacingMessage = e?.userFacingMessage ?? init.message;
    this.retryable = e?.retryable ?? false;
    this.outcome = e?.outcome ?? "unknown";
    this.details = e?.details ?? {};
    this.fixes = e?.fixes ?? [];
    this.docsUrl = e?.docsUrl ?? null;
    this.integrationCode = e?.integrationCode ?? null;
    this.error = e;
  }

  /** The error of a service answer (`{error: {...}}`), or `UNEXPECTED_RESPONSE`. */
  static fromBody(httpStatus: number | null, body: unknown, requestId: string | null): LedgerBridgeError {
    const error = (body as { error?: unknown } | null)?.error;
    if (isApiError(error)) {
      return new LedgerBridgeError({
        code: error.code,
        message: error.message,
        httpStatus: httpStatus ?? error.httpStatusCode,
        requestId: requestId ?? error.requestId,
        error,
      });
    }
    return new LedgerBridgeError({
      code: "UNEXPECTED_RESPONSE",
      message: `unexpected answer (HTTP ${httpStatus ?? "none"}): ${JSON.stringify(body)?.slice(0, 200) ?? ""}`,
      httpStatus,
      requestId,
    });
  }
}

function isApiError(value: unknown): value is ApiErrorObject {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { code?: unknown }).code === "string" &&
    typeof (value as { message?: unknown }).message === "string"
  );
}
