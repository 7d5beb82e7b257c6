import { ServiceError } from "../errors/service-error.ts";
import type { ConnectionRow } from "../store/connections.ts";
import type { Db } from "../store/database.ts";
import type { RequestRow } from "../store/requests.ts";
import { decodeReport, REPORT_KINDS, type ReportKind } from "./reports.ts";
import type { ResourceAction } from "./resources/catalogue.ts";
import { allResources, type ResourceDefinition } from "./resources/definitions.ts";
import { finishListPage, decodeListPage } from "./typed/lists.ts";
import {
  decodeCustomField,
  decodeDelete,
  decodeMerge,
  decodeRecord,
  decodeVoid,
  firstResponse,
  statusError,
  statusWarnings,
  type RequestWarning,
} from "./typed/actions.ts";
import type { ParsedAnswer } from "./xml/answer.ts";
import type { XmlElement } from "./xml/tree.ts";

/**
 * The operation table (house style §2.2): one entry per operation ID, derived from the resource
 * registry, plus the two hand-written operations (passthrough and the health check). The connector
 * endpoint completes requests on whichever instance holds the session, so the reading of answers is
 * looked up here by `operationId`, never kept in the HTTP handler that created the request.
 */
export const PASSTHROUGH_OPERATION = "endUsers.passthrough";
export const HEALTH_CHECK_OPERATION = "ledger.healthCheck";

/** The health check's round trip: the smallest query every edition answers. */
export const HEALTH_CHECK_MESSAGES = `<CompanyQueryRq requestID="health-check"></CompanyQueryRq>`;

export interface DecodeInput {
  /** The answer, parsed once by the engine (`readAnswer`): decoders read its tree, never its text. */
  answer: ParsedAnswer;
  request: RequestRow;
  /** Present only for operations that declare `usesConnection`. */
  connection: ConnectionRow | null;
  nowMs: number;
}

export type Decoded =
  { ok: true; result: unknown; warnings: RequestWarning[] } | { ok: false; error: ServiceError };

/** What a finishing step may use: the store, the time, and the session that carried the answer. */
export interface FinishContext {
  db: Db;
  nowMs: number;
  ticketHash: string;
}

export interface OperationHandler {
  readonly operationId: string;
  /** Decoding reads the connection row (product, version, company name): loaded only then. */
  readonly usesConnection?: boolean;
  decode(input: DecodeInput): Decoded;
  /**
   * Books what the answer changes outside the Request before it settles (list pages: the cursor),
   * and shapes the final result. Runs on the instance that received the answer.
   */
  finish?(context: FinishContext, request: RequestRow, result: unknown): Promise<Decoded>;
}

/** A typed operation: one action of one resource. */
export interface TypedOperation extends OperationHandler {
  readonly resource: ResourceDefinition;
  readonly action: ResourceAction;
}

function fail(error: unknown): Decoded {
  if (error instanceof ServiceError) return { ok: false, error: error as ServiceError };
  throw error;
}

/** Hands the answer's first response message (from the tree parsed once) to `read`. */
function withFirstResponse(
  input: DecodeInput,
  read: (
    message: NonNullable<ReturnType<typeof firstResponse>>,
    root: XmlElement,
  ) => { result: unknown; warnings: RequestWarning[] },
): Decoded {
  const root = input.answer.root;
  const message = firstResponse(root);
  if (!message) {
    return {
      ok: false,
      error: new ServiceError("LEDGER_RESPONSE_UNREADABLE", {
        message: "The answer holds no response message.",
      }),
    };
  }
  try {
    const { result, warnings } = read(message, root);
    return { ok: true, result, warnings };
  } catch (error) {
    return fail(error);
  }
}

function typedOperation(resource: ResourceDefinition, action: ResourceAction): TypedOperation {
  const operationId = `${resource.operationPrefix}.${action}`;
  return {
    operationId,
    resource,
    action,
    ...(action === "list"
      ? { finish: (context, request, result) => finishListPage(resource, context, request, result) }
      : {}),
    decode: (input) =>
      withFirstResponse(input, (message) => {
        switch (action) {
          case "create":
          case "update":
            return decodeRecord(resource, message, action === "update");
          case "retrieve":
            return decodeRecord(resource, message, true);
          case "list":
            return decodeListPage(resource, message);
          case "delete":
            return decodeDelete(resource, message);
          case "void":
            return decodeVoid(resource, message);
          case "merge":
            return decodeMerge(resource, message);
          case "setCustomField":
            return decodeCustomField(message, {
              operation: message.element.name === "DataExtDelRs" ? "delete" : "update",
              ownerId: "0",
              name: "",
            });
        }
      }),
  };
}

const passthrough: OperationHandler = {
  operationId: PASSTHROUGH_OPERATION,
  // The caller handles the application's statuses itself: a readable answer is a success.
  decode: ({ answer }) => ({ ok: true, result: { xml: answer.xml }, warnings: [] }),
};

const healthCheck: OperationHandler = {
  operationId: HEALTH_CHECK_OPERATION,
  usesConnection: true,
  decode: (input) =>
    withFirstResponse(input, (message) => {
      if (message.statusSeverity === "Error") throw statusError(message);
      const { connection, request, nowMs } = input;
      return {
        result: {
          status: "ok",
          durationMs: nowMs - request.created_at.getTime(),
          ledger: {
            product: connection?.product ?? null,
            xmlVersion: request.xml_version ?? connection?.xml_version ?? null,
            companyName: connection?.company_name ?? null,
          },
        },
        warnings: statusWarnings(message),
      };
    }),
};

/** A report query (`ledger.reports.<kind>`). */
export interface ReportOperation extends OperationHandler {
  readonly report: ReportKind;
}

export function reportOperations(): ReportOperation[] {
  return REPORT_KINDS.map((report) => ({
    operationId: `ledger.reports.${report.name}`,
    report,
    decode: (input: DecodeInput) => withFirstResponse(input, (message) => decodeReport(report, message)),
  }));
}

let table: ReadonlyMap<string, OperationHandler> | null = null;

/** Every typed operation, in registry order. */
export function typedOperations(): TypedOperation[] {
  return allResources().flatMap((resource) =>
    resource.actions.map((action) => typedOperation(resource, action)),
  );
}

/** The whole operation table: typed operations, passthrough and the health check. */
export function operationTable(): ReadonlyMap<string, OperationHandler> {
  if (table) return table;
  const entries: OperationHandler[] = [passthrough, healthCheck, ...typedOperations(), ...reportOperations()];
  table = new Map(entries.map((handler) => [handler.operationId, handler]));
  return table;
}

export function operationHandler(operationId: string): OperationHandler | undefined {
  return operationTable().get(operationId);
}
