import { ServiceError } from "../errors/service-error.ts";
import type { ConnectionRow } from "../store/connections.ts";
import type { RequestDocument } from "./xml/message-set.ts";
import type { Db } from "../store/database.ts";
import type { RequestRow } from "../store/requests.ts";
import {
  actionSpecOf,
  REPORT_ACTION,
  RESOURCE_ACTIONS,
  unsupportedError,
  type ActionInputs,
  type ActionName,
  type ActionSpec,
  type CallInput,
  type MessageContext,
  type ReadFirst,
  type ResourceActionName,
} from "./action-table.ts";
import { REPORT_KINDS, type ReportKind } from "./reports.ts";
import { allResources, type ResourceDefinition } from "./resources/definitions.ts";
import type { JsonSchema } from "./resources/json-schema.ts";
import type { Shape } from "./resources/shape.ts";
import {
  firstResponse,
  statusError,
  statusWarnings,
  type RequestWarning,
  type ResponseMessage,
} from "./typed/actions.ts";
import { batchHandler } from "./batch.ts";
import type { ParsedAnswer } from "./xml/answer.ts";
import { maskSecretsInText } from "./xml/redact.ts";
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
  /** The service's public base URL (error objects' `docsUrl`, for batch members' errors). */
  publicUrl: string;
  request: RequestRow;
  /** Present only for operations that declare `usesConnection`. */
  connection: ConnectionRow | null;
  nowMs: number;
}

export type Decoded =
  | {
      ok: true;
      result: unknown;
      warnings: RequestWarning[];
      /** False when the answer shows that no write was applied (a batch whose write members all failed). */
      applied?: boolean;
      /**
       * A Request of several message sets (decision 0046) is not done: this set's answer decided the
       * next one. `result` is then ignored; the Request goes back to the head of its queue.
       */
      next?: NextStep;
    }
  | { ok: false; error: ServiceError };

/**
 * The next message set of a Request of several (decision 0046), decided by its operation's finishing
 * step from the answer of the previous one (live, or recovered from the application's stored answer).
 */
export interface NextStep {
  readonly document: RequestDocument;
  /** What the operation keeps until the next answer (stored in `requests.program`). */
  readonly program: unknown;
  /** The existing records the next set changes (write spacing); null when none. */
  readonly writeTargets: readonly string[] | null;
  /** The timeline's words for the step just answered. */
  readonly detail: string;
}

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

/**
 * One typed operation: an action of the action table bound to what it acts on (a resource group or a
 * report kind). Everything downstream — routes, OpenAPI, the typed-call core, batch, the change feed —
 * uses this bound form and never looks at the action's name to decide what to do.
 */
export interface TypedOperation extends OperationHandler {
  readonly action: ActionName;
  readonly access: "read" | "write";
  readonly http: {
    readonly method: "GET" | "POST" | "PUT" | "DELETE";
    readonly status: 200 | 201;
    readonly path: string;
  };
  readonly summary: string;
  /** The group (resource operations) or null (reports). */
  readonly resource: ResourceDefinition | null;
  readonly report: ReportKind | null;
  /** Set for an action the market offers that the application cannot do: every call is refused. */
  readonly unsupported: ServiceError | null;
  inputs(): ActionInputs;
  /** Lists: whether the call pages with an application cursor; null for every other action. */
  paging(input: CallInput): "cursor" | "single" | null;
  readFirst(input: CallInput): ReadFirst | null;
  /** An operation of several message sets (upsert): its Request's program to start with, else null. */
  program(input: CallInput): unknown;
  message(input: CallInput, context: MessageContext): XmlElement;
  fingerprint(input: CallInput): unknown;
  /** The body's record shape (create/update), for the connection gate's field names. */
  bodyShape(): Shape | null;
  response(components: Record<string, JsonSchema>): JsonSchema;
  /** Reads this operation's response message (batch members' responses are read one by one). */
  decodeMessage(
    message: ResponseMessage,
    request: RequestRow,
  ): { result: unknown; warnings: RequestWarning[] };
}

/** A resource group's operation. */
export type ResourceOperation = TypedOperation & { readonly resource: ResourceDefinition };

function bind<S>(
  operationId: string,
  spec: ActionSpec<S>,
  subject: S,
  owner: { resource: ResourceDefinition | null; report: ReportKind | null },
  unsupported: ServiceError | null = null,
): TypedOperation {
  let inputs: ActionInputs | undefined;
  return {
    operationId,
    action: spec.name,
    access: spec.access,
    http: { ...spec.http, path: spec.path(subject) },
    summary: unsupported
      ? "Not supported by the application (answers LEDGER_OPERATION_UNSUPPORTED)"
      : spec.summary(subject),
    ...owner,
    unsupported,
    // Derived on first use: building every shape's schema at start-up costs about a second.
    inputs: () => (inputs ??= spec.inputs(subject)),
    paging: (input) => spec.paging?.(subject, input) ?? null,
    readFirst: (input) => spec.readFirst?.(subject, input) ?? null,
    program: (input) => spec.program?.(subject, input) ?? null,
    message: (input, context) => spec.message(subject, input, context),
    fingerprint: (input) => spec.fingerprint(input),
    bodyShape: () => spec.bodyShape?.(subject) ?? null,
    response: (components) => spec.response(subject, components),
    decodeMessage: (message, request) => spec.decode(subject, message, request),
    decode: (input) => withFirstResponse(input, (message) => spec.decode(subject, message, input.request)),
    ...(spec.finish
      ? {
          finish: (context: FinishContext, request: RequestRow, result: unknown) =>
            (spec.finish as NonNullable<ActionSpec<S>["finish"]>)(subject, context, request, result),
        }
      : {}),
  };
}

function resourceOperation(resource: ResourceDefinition, action: ResourceActionName): ResourceOperation {
  return bind(`${resource.operationPrefix}.${action}`, actionSpecOf(resource, action), resource, {
    resource,
    report: null,
  }) as ResourceOperation;
}

const passthrough: OperationHandler = {
  operationId: PASSTHROUGH_OPERATION,
  // The caller handles the application's statuses itself: a readable answer is a success. Its
  // secrets are masked like a typed record's (decision 0032), as text: only an answer that holds a
  // secret element is rewritten.
  decode: ({ answer }) => ({ ok: true, result: { xml: maskSecretsInText(answer.xml) }, warnings: [] }),
};

const healthCheck: OperationHandler = {
  operationId: HEALTH_CHECK_OPERATION,
  usesConnection: true,
  decode: (input) =>
    withFirstResponse(input, (message) => {
      if (message.statusSeverity === "Error") throw statusError(message);
      const { connection, request, nowMs } = input;
      const durationMs = nowMs - request.created_at.getTime();
      return {
        result: {
          status: "ok",
          // The market's clients read `duration` (issue 25, item 6); ours read `durationMs`.
          duration: durationMs,
          durationMs,
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
export type ReportOperation = TypedOperation & { readonly report: ReportKind };

let reports: ReportOperation[] | null = null;

export function reportOperations(): ReportOperation[] {
  reports ??= REPORT_KINDS.map(
    (report) =>
      bind(`ledger.reports.${report.name}`, REPORT_ACTION, report, {
        resource: null,
        report,
      }) as ReportOperation,
  );
  return reports;
}

let table: ReadonlyMap<string, OperationHandler> | null = null;

let resourceOps: ResourceOperation[] | null = null;

/** Every typed operation of the resource groups, in registry order. */
export function typedOperations(): ResourceOperation[] {
  resourceOps ??= allResources().flatMap((resource) =>
    resource.actions.map((action) => resourceOperation(resource, action)),
  );
  return resourceOps;
}

/**
 * The actions the market offers for a group that the application cannot do: operations whose every
 * call is refused with LEDGER_OPERATION_UNSUPPORTED (naming what the group can do instead).
 */
export function unsupportedOperations(): TypedOperation[] {
  return allResources().flatMap((resource) =>
    resource.unsupported
      .filter((action): action is ResourceActionName => action in RESOURCE_ACTIONS)
      .map((action) =>
        bind(
          `${resource.operationPrefix}.${action}`,
          actionSpecOf(resource, action),
          resource,
          { resource, report: null },
          unsupportedError(resource, action),
        ),
      ),
  );
}

let typedTable: ReadonlyMap<string, TypedOperation> | null = null;

/** Every typed operation by ID (resource actions, reports, and the unsupported ones). */
export function typedOperation(operationId: string): TypedOperation | undefined {
  typedTable ??= new Map(
    [...typedOperations(), ...reportOperations(), ...unsupportedOperations()].map((op) => [
      op.operationId,
      op,
    ]),
  );
  return typedTable.get(operationId);
}

/** The whole operation table: typed operations, passthrough and the health check. */
export function operationTable(): ReadonlyMap<string, OperationHandler> {
  if (table) return table;
  const entries: OperationHandler[] = [
    passthrough,
    healthCheck,
    batchHandler,
    ...typedOperations(),
    ...reportOperations(),
  ];
  table = new Map(entries.map((handler) => [handler.operationId, handler]));
  return table;
}

export function operationHandler(operationId: string): OperationHandler | undefined {
  return operationTable().get(operationId);
}
