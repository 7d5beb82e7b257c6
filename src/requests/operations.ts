import type { ServiceError } from "../errors/service-error.ts";
import type { ResponseSummary } from "../ledger/xml/message-set.ts";
import type { ConnectionRow } from "../store/connections.ts";
import type { RequestRow } from "../store/requests.ts";

/**
 * How each operation turns the application's answer into a result. The connector endpoint
 * completes requests on whichever instance holds the session, so decoding is looked up by
 * `operationId` here instead of living in the HTTP handler that created the request.
 */
export interface DecodeInput {
  responseXml: string;
  summary: ResponseSummary;
  request: RequestRow;
  /** Present only for handlers that declare `usesConnection`. */
  connection: ConnectionRow | null;
  nowMs: number;
}

export type Decoded = { ok: true; result: unknown; warnings: unknown[] } | { ok: false; error: ServiceError };

export interface OperationHandler {
  /** Decoding reads the connection row (product, version, company name): loaded only then. */
  usesConnection?: boolean;
  decode(input: DecodeInput): Decoded;
}

const handlers = new Map<string, OperationHandler>();

export function registerOperation(operationId: string, handler: OperationHandler): void {
  handlers.set(operationId, handler);
}

export function operationHandler(operationId: string): OperationHandler | undefined {
  return handlers.get(operationId);
}
