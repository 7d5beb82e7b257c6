import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { z } from "zod";
import { toErrorBody } from "../errors/render.ts";
import { ServiceError } from "../errors/service-error.ts";
import type { CallInput } from "../ledger/action-table.ts";
import { redactedJson } from "../ledger/xml/redact.ts";
import { typedOperation, type TypedOperation } from "../ledger/operations.ts";
import type { Clock } from "../platform/clock.ts";
import { newId } from "../platform/ids.ts";
import {
  describeOperation,
  findOperation,
  groupOf,
  mcpOperations,
  operationIndex,
  readFirstOf,
  renderMessages,
  routeOf,
  shownMessages,
  summaryOf,
  validateCall,
  type ToolCallInput,
} from "./catalogue.ts";
import { Confirmations, type PendingWrite } from "./confirmations.ts";
import { checkPlatformId } from "./ids.ts";
import type { ServiceAnswer, ServiceCall, ServiceClient } from "./service.ts";

/**
 * The agent-safe MCP server (issue 16, decision 0022): a client of a running ledger-bridge over its
 * public HTTP API. Seven generic tools instead of one per operation (376 operations whose body
 * schemas alone are half a megabyte of JSON): `list_operations` → `describe_operation` →
 * `call_operation`, plus `list_end_users`, `get_request` and `health_check`; `confirm_write` only
 * when writes are allowed.
 *
 * - Read-only unless started with `allowWrites` (the CLI's `--allow-writes`); a read-only secret key
 *   is refused writes by the service as well (403 API_KEY_READ_ONLY).
 * - A write is answered with a preview: the request messages the service will send to the
 *   application, rendered by the same functions from the same input, the exact HTTP call (shown
 *   from the very object that is sent), secrets masked, and a confirmation token. Only
 *   `confirm_write` with that token sends it, with an `Idempotency-Key` fixed at preview time, so a
 *   repeated confirmation replays the first Request.
 * - With `confirmByPerson` (`--confirm-by-person`) the token is not enough: `confirm_write` asks the
 *   person through the client (MCP elicitation, which the model does not answer), and a client that
 *   cannot ask is refused the write (decision 0033).
 * - Every ID that enters a URL is one of the forms the service means (mcp/ids.ts): no dot segment
 *   or separator can make the call reach another route than the preview showed.
 * - Every call's input is validated with the core's validator first: a refusal is the spec's error
 *   object (`code`, `param`) and nothing is sent.
 * - Every tool call is logged (the logger writes to stderr: stdout is the protocol) with the
 *   Request IDs of the service's answers.
 */
export interface McpServerOptions {
  readonly service: ServiceClient;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Writes are previewed and confirmed only when true (else refused with PERMISSION_DENIED). */
  readonly allowWrites: boolean;
  /**
   * Each write must be accepted by the person in the client (an `elicitation/create` request), not
   * only confirmed with the token the model holds; a client without elicitation is refused writes.
   */
  readonly confirmByPerson?: boolean;
  /** The end user of calls that name none. */
  readonly defaultEndUserId?: string | undefined;
  /** How long a confirmation token lives (default 10 minutes). */
  readonly confirmationTtlMs?: number;
  /**
   * The sync wait of application operations (`Svc-Timeout-Seconds`, default 45): below the 60 s an
   * MCP client waits for a tool by default. A call still unanswered then is a Request to read with
   * get_request (a write not yet sent is canceled: nothing was written).
   */
  readonly timeoutSeconds?: number;
  /** Base of the error objects' `docsUrl` (the service's public URL). */
  readonly docsBaseUrl: string;
}

export const DEFAULT_CONFIRMATION_TTL_MS = 10 * 60 * 1000;
export const DEFAULT_TIMEOUT_SECONDS = 45;

type Json = Record<string, unknown>;

/** What one tool call logs besides its name and duration. */
interface CallLog {
  operationId?: string;
  endUserId?: string;
  requestIds: string[];
  httpStatus?: number;
  code?: string;
  /** The start of a write's confirmation token (never the whole token). */
  token?: string;
  confirmation?: number;
  /** Who let a write go: the agent's token alone, or the person in the client. */
  confirmedBy?: "agent" | "person";
  /** The person's answer to the elicitation (`accept`, `decline`, `cancel`, or why none came). */
  personAnswer?: string;
  /** get_request: the Request read (`requestId` is the read's own `call_…`). */
  readsRequestId?: string;
}

/** A token as the logs show it: enough to match a preview with its confirmations, not to use it. */
function tokenHint(token: string): string {
  return `${token.slice(0, 9)}…`;
}

function text(value: unknown, isError = false): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(value, null, 2) }],
    ...(isError ? { isError: true } : {}),
  };
}

type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The longest question put to the person (a client shows it in a dialog); longer ones are cut. */
const QUESTION_LIMIT_CHARS = 12_000;

const END_USER_ARG = z
  .string()
  .optional()
  .describe("The end user (`eu_…`) whose company file is used; default: the server's --end-user.");

export function createMcpServer(options: McpServerOptions): McpServer {
  const { service, clock, logger, allowWrites } = options;
  const confirmByPerson = allowWrites && options.confirmByPerson === true;
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  const confirmations = new Confirmations(clock, options.confirmationTtlMs ?? DEFAULT_CONFIRMATION_TTL_MS);
  const server = new McpServer(
    { name: "ledger-bridge", version: "0.1.0" },
    {
      instructions: [
        "Tools over a ledger-bridge service: typed operations on an end user's company file.",
        "Find an operation with list_operations, read its input schema with describe_operation, run it with call_operation.",
        !allowWrites
          ? "This server is read-only: write operations are refused."
          : confirmByPerson
            ? "Writes are not applied by call_operation: it answers a preview of the exact message and a token; confirm_write with the token asks the person to accept it in the client, and applies it once only if they do."
            : "Writes are not applied by call_operation: it answers a preview of the exact message and a token; confirm_write with the token applies it once.",
      ].join(" "),
    },
  );

  /** Runs a tool: logs it, and turns a ServiceError into the spec's error object. */
  const run = <A>(
    name: string,
    body: (args: A, log: CallLog, extra: ToolExtra) => Promise<CallToolResult>,
  ) => {
    return async (args: A, extra: ToolExtra): Promise<CallToolResult> => {
      const started = clock.now();
      const log: CallLog = { requestIds: [] };
      let result: CallToolResult;
      try {
        result = await body(args, log, extra);
      } catch (error) {
        const refusal: ServiceError =
          error instanceof ServiceError
            ? (error as ServiceError)
            : new ServiceError("INTERNAL_ERROR", { cause: error, message: "The MCP server failed." });
        if (!(error instanceof ServiceError)) logger.error({ err: error, tool: name }, "tool failed");
        const callId = newId("call");
        log.requestIds.push(callId);
        log.code = refusal.code;
        result = text({ error: toErrorBody(refusal, callId, options.docsBaseUrl) }, true);
      }
      logger.info(
        {
          tool: name,
          ...log,
          requestId: log.requestIds.at(-1) ?? null,
          isError: result.isError === true,
          durationMs: clock.now() - started,
        },
        "tool call",
      );
      return result;
    };
  };

  /** Sends a call to the service; the answer's Request ID is logged. */
  const send = async (call: ServiceCall, log: CallLog): Promise<ServiceAnswer> => {
    let answer: ServiceAnswer;
    try {
      answer = await service.call(call);
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      throw new ServiceError("SERVICE_UNAVAILABLE", {
        cause: error,
        message: `The ledger-bridge service could not be reached: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
    if (answer.requestId) log.requestIds.push(answer.requestId);
    log.httpStatus = answer.status;
    const errorBody = (answer.body as { error?: { code?: string } } | null)?.error;
    if (answer.status >= 400 && errorBody?.code) log.code = errorBody.code;
    return answer;
  };

  /** A service answer as a tool result: the body with its Request ID; an error status is an error. */
  const answerResult = (answer: ServiceAnswer, extra: Json = {}): CallToolResult => {
    const ok = answer.status < 400;
    return text(
      ok
        ? { requestId: answer.requestId, httpStatus: answer.status, ...extra, result: answer.body }
        : { requestId: answer.requestId, httpStatus: answer.status, ...extra, ...(answer.body as Json) },
      !ok,
    );
  };

  const endUserOf = (given: string | undefined): string => {
    const endUserId = given ?? options.defaultEndUserId;
    if (!endUserId) {
      throw new ServiceError("END_USER_ID_MISSING", {
        param: "endUserId",
        message: "Name the end user (`endUserId`, `eu_…`), or start the server with --end-user.",
      });
    }
    // It travels in a header: an ID of the service's form, nothing else.
    checkPlatformId("endUser", endUserId, "endUserId");
    return endUserId;
  };

  server.registerTool(
    "list_operations",
    {
      title: "List operations",
      description:
        "Without arguments: every group of typed operations with its actions (e.g. `invoices: list, retrieve, create…`). With `group`: that group's operations (operationId, read/write, HTTP route, summary).",
      inputSchema: {
        group: z.string().optional().describe("A group from the index, e.g. `invoices` or `reports`."),
        access: z.enum(["read", "write"]).optional().describe("Only reads or only writes."),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    run<{ group?: string | undefined; access?: "read" | "write" | undefined }>(
      "list_operations",
      async (args) => {
        if (args.group === undefined) {
          const index = operationIndex();
          return text({
            writesAllowed: allowWrites,
            groups: index.map(({ group, actions }) => `${group}: ${actions.join(", ")}`),
            next: "describe_operation with `ledger.<group>.<action>` (reports: `ledger.reports.<kind>`).",
          });
        }
        const operations = mcpOperations()
          .filter((op) => groupOf(op.operationId) === args.group)
          .filter((op) => args.access === undefined || op.access === args.access)
          .map(summaryOf);
        if (
          operations.length === 0 &&
          !mcpOperations().some((op) => groupOf(op.operationId) === args.group)
        ) {
          throw new ServiceError("INVALID_PARAMETER", {
            param: "group",
            message: `No group \`${args.group}\`: call list_operations without arguments for the groups.`,
          });
        }
        return text({ writesAllowed: allowWrites, operations });
      },
    ),
  );

  server.registerTool(
    "describe_operation",
    {
      title: "Describe an operation",
      description:
        "The JSON Schema of an operation's input for call_operation (`id` of the record, `query` parameters, `body`), with example bodies.",
      inputSchema: { operationId: z.string().describe("e.g. `ledger.customers.create`") },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    run<{ operationId: string }>("describe_operation", async (args, log) => {
      log.operationId = args.operationId;
      return text(describeOperation(findOperation(args.operationId)));
    }),
  );

  server.registerTool(
    "call_operation",
    {
      title: "Call an operation",
      description: allowWrites
        ? "Runs a typed operation on an end user's company file. A read is run and answered. A write is NOT applied: the answer is a preview of the exact message the application would receive and a `token`; call confirm_write with it to apply the write once."
        : "Runs a typed read operation on an end user's company file. This server is read-only: writes are refused.",
      inputSchema: {
        operationId: z.string().describe("e.g. `ledger.invoices.list`; see list_operations"),
        endUserId: END_USER_ARG,
        id: z.string().optional().describe("The record's ID, for operations whose path names one."),
        query: z
          .record(z.string(), z.unknown())
          .optional()
          .describe("Query parameters as JSON values (an array for a repeated parameter)."),
        body: z.record(z.string(), z.unknown()).optional().describe("The JSON body (writes)."),
        maxStalenessSeconds: z
          .number()
          .int()
          .min(0)
          .max(86_400)
          .optional()
          .describe(
            "Reads only: the answer may come from the end user's mirror when it is at most this many seconds old (works while the PC is off; the answer's `dataAsOf` says as of when). Absent: always live.",
          ),
      },
      annotations: { readOnlyHint: !allowWrites, destructiveHint: false, openWorldHint: false },
    },
    run<
      ToolCallInput & {
        operationId: string;
        endUserId?: string | undefined;
        maxStalenessSeconds?: number | undefined;
      }
    >("call_operation", async (args, log) => {
      log.operationId = args.operationId;
      const operation = findOperation(args.operationId);
      const input = validateCall(operation, args);
      if (operation.access === "write" && !allowWrites) {
        throw new ServiceError("PERMISSION_DENIED", {
          message: `\`${operation.operationId}\` writes, and this MCP server is read-only: nothing was sent. Writes need the server started with --allow-writes and a secret key that may write.`,
        });
      }
      const endUserId = endUserOf(args.endUserId);
      log.endUserId = endUserId;
      if (operation.access === "read") {
        const { maxStalenessSeconds } = args;
        const answer = await send(
          {
            method: operation.http.method,
            path: routeOf(operation, args),
            endUserId,
            timeoutSeconds,
            ...(maxStalenessSeconds === undefined ? {} : { maxStalenessSeconds }),
          },
          log,
        );
        return answerResult(answer, answer.dataAsOf ? { dataAsOf: answer.dataAsOf } : {});
      }
      if (args.maxStalenessSeconds !== undefined) {
        throw new ServiceError("INVALID_PARAMETER", {
          param: "maxStalenessSeconds",
          message: "`maxStalenessSeconds` applies to reads only: a write always goes to the application.",
        });
      }
      return preview(operation, input, args, endUserId, log);
    }),
  );

  /** A write's preview: the messages, the exact HTTP call, and a token to confirm it. */
  const preview = async (
    operation: TypedOperation,
    input: CallInput,
    args: ToolCallInput,
    endUserId: string,
    log: CallLog,
  ): Promise<CallToolResult> => {
    const bodyRule = operation.inputs().body;
    let body: Json | undefined = bodyRule.type === "json" ? (args.body ?? {}) : undefined;
    let rendered = renderMessages(operation, input);
    let readFirst: Json | null = null;
    const lines = readFirstOf(operation, input);
    if (lines) {
      // Spec "Update", rule 5: the lines of the arrays left out are kept. The record is read now,
      // and the body sent names the lines to keep, so the service sends the message shown here.
      const retrieve = operation.resource
        ? typedOperation(`${operation.resource.operationPrefix}.retrieve`)
        : undefined;
      if (!retrieve) throw new ServiceError("INTERNAL_ERROR", { message: "No retrieve for the read first." });
      const answer = await send(
        { method: "GET", path: routeOf(retrieve, { id: args.id }), endUserId, timeoutSeconds },
        log,
      );
      if (answer.status >= 400)
        return answerResult(answer, { during: "reading the record before the update" });
      const record = answer.body as Json;
      const kept = Object.fromEntries(
        lines.arrays.map(({ input: name, output }) => [
          name,
          ((record[output] ?? []) as Array<{ id: string }>).map((line) => line.id),
        ]),
      );
      rendered = renderMessages(operation, input, kept);
      const explicit: Json = { ...(args.body ?? {}) };
      for (const [name, ids] of Object.entries(kept)) explicit[name] = ids.map((id) => ({ id }));
      // Sent with the kept lines named, when that body is valid and writes the same message;
      // otherwise the body as given, and the service reads the record again when it applies it.
      let same = false;
      try {
        const explicitInput = validateCall(operation, { ...args, body: explicit });
        same =
          readFirstOf(operation, explicitInput) === null &&
          renderMessages(operation, explicitInput).messagesXml === rendered.messagesXml;
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
      }
      if (same) body = explicit;
      readFirst = {
        recordRequestId: answer.requestId,
        keptLines: kept,
        sentAs: same
          ? "the body names the kept lines: the service sends exactly these messages"
          : "the body as given: the service reads the record again when the write is applied",
      };
    }
    // The call is stored (a frozen copy) and the preview shows that stored object: what is shown
    // and what confirm_write sends are one value.
    const messages = shownMessages(rendered.messagesXml);
    const write = confirmations.add(
      operation.operationId,
      {
        method: operation.http.method,
        path: routeOf(operation, args),
        endUserId,
        ...(body === undefined ? {} : { body }),
        idempotencyKey: `mcp-${randomUUID()}`,
        timeoutSeconds,
      },
      { summary: operation.summary, messages: messages.xml },
    );
    log.token = tokenHint(write.token);
    return text({
      preview: true,
      applied: false,
      token: write.token,
      expiresAt: new Date(write.expiresAtMs).toISOString(),
      operationId: operation.operationId,
      summary: operation.summary,
      endUserId,
      request: requestView(write),
      message: {
        onError: rendered.onError,
        messages: messages.xml,
        redactedValues: messages.redactedValues,
        envelope:
          "Sent inside the application's message-set envelope, whose version is the connection's and whose message set ID is assigned when the connector is handed it.",
      },
      ...(readFirst ? { readFirst } : {}),
      next: confirmByPerson
        ? "Show this to the user. To apply it, call confirm_write with this token: the user is then asked in their MCP client to accept it, and it is applied once only if they do."
        : "Show this to the user. To apply it, call confirm_write with this token (once applied, confirming again replays the same Request).",
    });
  };

  /** What a preview and the person's question show of the HTTP call: the stored call, secrets masked. */
  const requestView = (write: PendingWrite): Json => {
    const { call } = write;
    const body = call.body === undefined ? null : redactedJson(call.body);
    return {
      method: call.method,
      path: call.path,
      idempotencyKey: call.idempotencyKey,
      ...(body === null ? {} : { body: body.value }),
      ...(body !== null && body.redactedValues > 0 ? { redactedValues: body.redactedValues } : {}),
    };
  };

  /**
   * `--confirm-by-person`: asks the person, through the client, to accept the write (MCP
   * elicitation: the request goes from this server to the client, which shows it to the person; the
   * model neither sees nor answers it). True only for an explicit acceptance.
   */
  const askPerson = async (write: PendingWrite, log: CallLog, extra: ToolExtra): Promise<boolean> => {
    if (server.server.getClientCapabilities()?.elicitation?.form === undefined) {
      log.personAnswer = "client cannot ask";
      throw new ServiceError("PERMISSION_DENIED", {
        param: "token",
        message:
          "This MCP server was started with --confirm-by-person: every write must be accepted by the person in their MCP client, and this client cannot ask them (it does not support elicitation). Nothing was sent. Use a client that supports elicitation, or ask the operator to start the server without --confirm-by-person.",
      });
    }
    const body = requestView(write);
    const lines = [
      "An AI agent asks to write to a company file through ledger-bridge. Apply this write?",
      "",
      `Operation: ${write.operationId} (${write.shown.summary})`,
      `End user: ${write.call.endUserId ?? "(none)"}`,
      `Request: ${write.call.method} ${write.call.path}`,
      ...(body.body === undefined ? [] : ["Body:", JSON.stringify(body.body, null, 2)]),
      "Message to the application:",
      write.shown.messages,
    ];
    const message = lines.join("\n");
    let answer;
    try {
      answer = await server.server.elicitInput(
        {
          mode: "form",
          message:
            message.length > QUESTION_LIMIT_CHARS ? `${message.slice(0, QUESTION_LIMIT_CHARS)}\n…` : message,
          requestedSchema: {
            type: "object",
            properties: {
              apply: {
                type: "boolean",
                title: "Apply this write",
                description: "Tick to let ledger-bridge send this write to the company file, once.",
                default: false,
              },
            },
            required: ["apply"],
          },
        },
        { signal: extra.signal, timeout: Math.max(1, write.expiresAtMs - clock.now()) },
      );
    } catch (error) {
      log.personAnswer = "no answer";
      throw new ServiceError("PERMISSION_DENIED", {
        param: "token",
        cause: error,
        message: `The person was asked to accept this write and no answer came (${error instanceof Error ? error.message : String(error)}). Nothing was sent; the token stays valid until it expires.`,
      });
    }
    log.personAnswer = answer.action;
    return answer.action === "accept" && answer.content?.apply === true;
  };

  if (allowWrites) {
    server.registerTool(
      "confirm_write",
      {
        title: "Confirm a write",
        description: confirmByPerson
          ? "Asks the user, in their MCP client, to accept a write previewed by call_operation; applies it exactly as previewed only if they accept. The token is fixed to one Idempotency-Key: confirming it again replays the first Request and never writes twice. Tokens expire (see `expiresAt`)."
          : "Applies a write previewed by call_operation, exactly as previewed. The token is fixed to one Idempotency-Key: confirming it again replays the first Request and never writes twice. Tokens expire (see `expiresAt`).",
        inputSchema: { token: z.string().describe("The `token` of the preview.") },
        annotations: {
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      run<{ token: string }>("confirm_write", async (args, log, extra) => {
        const write = confirmations.find(args.token);
        log.operationId = write.operationId;
        log.token = tokenHint(write.token);
        if (write.call.endUserId) log.endUserId = write.call.endUserId;
        log.confirmedBy = confirmByPerson ? "person" : "agent";
        if (confirmByPerson && !write.acceptedByPerson) {
          if (!(await askPerson(write, log, extra))) {
            confirmations.forget(write);
            throw new ServiceError("PERMISSION_DENIED", {
              param: "token",
              message:
                "The person did not accept this write in their MCP client: nothing was sent, and this token is void. Do not ask again unless they say so.",
            });
          }
          // Expired while the person decided: refused like any expired token.
          confirmations.find(write.token);
          write.acceptedByPerson = true;
        }
        write.confirmations++;
        log.confirmation = write.confirmations;
        const answer = await send(write.call, log);
        return answerResult(answer, {
          operationId: write.operationId,
          confirmation: write.confirmations,
          idempotencyKey: write.call.idempotencyKey,
        });
      }),
    );
  }

  server.registerTool(
    "list_end_users",
    {
      title: "List end users",
      description: "The project's end users (`eu_…`) and their connections' status, newest first.",
      inputSchema: {
        limit: z.number().int().min(1).max(100).optional(),
        cursor: z.string().optional().describe("The `nextCursor` of the previous page."),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    run<{ limit?: number | undefined; cursor?: string | undefined }>("list_end_users", async (args, log) => {
      const search = new URLSearchParams();
      if (args.limit !== undefined) search.set("limit", String(args.limit));
      if (args.cursor !== undefined) search.set("cursor", args.cursor);
      const query = search.toString();
      return answerResult(
        await send({ method: "GET", path: `/v1/end-users${query ? `?${query}` : ""}` }, log),
      );
    }),
  );

  server.registerTool(
    "get_request",
    {
      title: "Get a Request",
      description:
        "A Request (`req_…`): its status, outcome, result or error, timeline and, while it waits, why. `waitSeconds` waits up to that long for it to finish.",
      inputSchema: {
        requestId: z.string().describe("`req_…`"),
        waitSeconds: z.number().int().min(0).max(60).optional(),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    run<{ requestId: string; waitSeconds?: number | undefined }>("get_request", async (args, log) => {
      log.readsRequestId = args.requestId;
      checkPlatformId("request", args.requestId, "requestId");
      const wait = args.waitSeconds === undefined ? "" : `?waitSeconds=${args.waitSeconds}`;
      return answerResult(
        await send({ method: "GET", path: `/v1/requests/${encodeURIComponent(args.requestId)}${wait}` }, log),
      );
    }),
  );

  server.registerTool(
    "health_check",
    {
      title: "Health check",
      description: "A round trip to the end user's application: whether it answers, its product and version.",
      inputSchema: { endUserId: END_USER_ARG },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    run<{ endUserId?: string | undefined }>("health_check", async (args, log) => {
      const endUserId = endUserOf(args.endUserId);
      log.endUserId = endUserId;
      return answerResult(
        await send(
          { method: "GET", path: "/v1/ledger-desktop/health-check", endUserId, timeoutSeconds },
          log,
        ),
      );
    }),
  );

  return server;
}
