import { catalogue, docsUrlFor } from "./catalogue.ts";
import type { ErrorBody, ServiceError } from "./service-error.ts";

/**
 * Builds the spec's error object for a ServiceError. `requestId` is the `Svc-Request-Id` of the
 * response (or of the request resource the error is stored on). `cause` is a short, safe sentence on
 * where the error came from, never the internal exception.
 */
export function toErrorBody(error: ServiceError, requestId: string, docsBaseUrl: string): ErrorBody {
  const entry = catalogue[error.code];
  return {
    type: entry.type,
    code: error.code,
    message: error.message,
    userFacingMessage: error.userFacingMessage,
    httpStatusCode: entry.httpStatus,
    integrationCode: error.integrationCode,
    requestId,
    cause: causeOf(error),
    fixes: entry.fixes.map((fix) => ({ actor: fix.actor, action: fix.action })),
    docsUrl: docsUrlFor(error.code, docsBaseUrl),
    retryable: error.retryable,
    outcome: error.outcome,
    param: error.param,
    details: error.details,
  };
}

function causeOf(error: ServiceError): string {
  const entry = catalogue[error.code];
  switch (entry.type) {
    case "INVALID_REQUEST_ERROR":
      return "request_validation";
    case "AUTHENTICATION_ERROR":
    case "PERMISSION_ERROR":
      return "authentication";
    case "BILLING_ERROR":
      return "billing";
    case "RATE_LIMIT_ERROR":
      return "rate_limit";
    case "INTEGRATION_CONNECTION_ERROR":
      return "connector";
    case "INTEGRATION_ERROR":
      return "ledger";
    case "OUTCOME_UNKNOWN_ERROR":
      return "connector";
    case "INTERNAL_ERROR":
      return "service";
  }
}
