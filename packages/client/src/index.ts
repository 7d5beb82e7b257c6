export { LedgerBridge, type ClientOptions } from "./client.ts";
export { LedgerBridgeError, type ClientErrorCode } from "./errors.ts";
export {
  ERROR_CODES,
  OPERATIONS,
  type ErrorCode,
  type OperationName,
  type OperationRow,
} from "./generated/operations.ts";
export type * from "./generated/resources.js";
export type { components, operations, paths } from "./generated/openapi.js";
export { PagePromise } from "./pagination.ts";
export type {
  ApiErrorObject,
  AsyncOptions,
  BodyOf,
  CallOptions,
  ItemOf,
  OperationId,
  QueryOf,
  RequestResource,
  ResultOf,
} from "./types.ts";
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyOptions,
  type WebhookEvent,
} from "./webhooks.ts";
