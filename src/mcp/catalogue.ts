import { messageOf, upsertProgramOf } from "../ledger/typed/upsert.ts";
import { z } from "zod";
import { ServiceError } from "../errors/service-error.ts";
import type { CallInput, ReadFirst } from "../ledger/action-table.ts";
import {
  reportOperations,
  typedOperation,
  typedOperations,
  unsupportedOperations,
  type TypedOperation,
} from "../ledger/operations.ts";
import { paramJsonSchema } from "../ledger/typed/filters.ts";
import { messageSet, storedMessageSet } from "../ledger/xml/message-set.ts";
import { redactedDocument } from "../ledger/xml/redact.ts";
import { validateTypedInput } from "../requests/typed-call.ts";
import { checkRecordId, RECORD_ID_PATTERN } from "./ids.ts";

/**
 * What the MCP server knows of the typed operations (decision 0022): the same operation table the
 * service routes, validates and writes messages with (ledger/operations.ts). The server lists and
 * describes operations from it, validates a call's input with the core's own validator before
 * anything reaches the service (errors in the spec's shape, with `param`), and renders a write's
 * request message locally for the preview — the service renders the same message from the same
 * input with the same functions.
 */

type Json = Record<string, unknown>;

/** One operation as `list_operations` shows it. */
export interface OperationSummary {
  readonly operationId: string;
  readonly access: "read" | "write";
  readonly method: string;
  readonly path: string;
  readonly summary: string;
}

let all: TypedOperation[] | null = null;

/** Every typed operation, in registry order (resource actions, reports, unsupported ones last). */
export function mcpOperations(): readonly TypedOperation[] {
  all ??= [...typedOperations(), ...reportOperations(), ...unsupportedOperations()];
  return all;
}

/** The operation, or INVALID_PARAMETER naming `operationId`. */
export function findOperation(operationId: string): TypedOperation {
  const operation = typedOperation(operationId);
  if (!operation) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: "operationId",
      message: `No operation \`${operationId}\`: call list_operations for the operation IDs.`,
    });
  }
  return operation;
}

export function summaryOf(operation: TypedOperation): OperationSummary {
  return {
    operationId: operation.operationId,
    access: operation.access,
    method: operation.http.method,
    path: operation.http.path,
    summary: operation.summary,
  };
}

/** The group of an operation ID: `ledger.invoices.create` → `invoices`, reports → `reports`. */
export function groupOf(operationId: string): string {
  return operationId.split(".")[1] ?? operationId;
}

/** The groups and their actions, one line each: the compact index an agent starts from. */
export function operationIndex(): Array<{ group: string; actions: string[] }> {
  const groups = new Map<string, string[]>();
  for (const operation of mcpOperations()) {
    const group = groupOf(operation.operationId);
    const actions = groups.get(group) ?? [];
    actions.push(operation.operationId.split(".").slice(2).join(".") || operation.action);
    groups.set(group, actions);
  }
  return [...groups].map(([group, actions]) => ({ group, actions }));
}

function bodySchema(operation: TypedOperation): Json | null {
  const rule = operation.inputs().body;
  switch (rule.type) {
    case "none":
      return null;
    case "empty":
      return { type: "object", additionalProperties: false, maxProperties: 0 };
    case "json": {
      const schema = z.toJSONSchema(rule.schema(), { io: "input", unrepresentable: "any" }) as Json;
      delete schema.$schema;
      return schema;
    }
  }
}

/**
 * The JSON Schema of `call_operation`'s `id`, `query` and `body` for this operation: the path's
 * record ID, the query parameters (each with its kind's schema, as in openapi.json) and the body.
 */
export function describeOperation(operation: TypedOperation): Json {
  const inputs = operation.inputs();
  const properties: Json = {};
  const required: string[] = [];
  if (inputs.path.includes("id")) {
    properties.id = {
      type: "string",
      minLength: 1,
      maxLength: 36,
      pattern: RECORD_ID_PATTERN,
      description: "The record's ID.",
    };
    required.push("id");
  }
  if (inputs.query.length > 0) {
    const query: Json = {};
    const requiredQuery: string[] = [];
    for (const param of inputs.query) {
      query[param.name] = { ...paramJsonSchema(param), description: param.description };
      if (param.required) requiredQuery.push(param.name);
    }
    properties.query = {
      type: "object",
      additionalProperties: false,
      properties: query,
      ...(requiredQuery.length > 0 ? { required: requiredQuery } : {}),
    };
    if (requiredQuery.length > 0) required.push("query");
  }
  const body = bodySchema(operation);
  if (body) properties.body = body;
  const example = inputs.body.type === "json" ? inputs.body.examples() : null;
  return {
    ...summaryOf(operation),
    ...(operation.unsupported ? { unsupported: operation.unsupported.message } : {}),
    input: {
      type: "object",
      additionalProperties: false,
      properties,
      ...(required.length > 0 ? { required } : {}),
    },
    ...(example ? { bodyExamples: example } : {}),
  };
}

/** A call's input as the agent gives it (JSON values: a query's arrays are arrays). */
export interface ToolCallInput {
  readonly id?: string | undefined;
  readonly query?: Json | undefined;
  readonly body?: Json | undefined;
}

/**
 * Validates a call's input: the record ID as one of the application's ID forms (it becomes a path
 * segment: mcp/ids.ts), then everything with the core's validator. Errors name the parameter,
 * nothing is sent.
 */
export function validateCall(operation: TypedOperation, input: ToolCallInput): CallInput {
  checkRecordId(input.id, "id");
  return validateTypedInput(operation, {
    pathParams: input.id === undefined ? {} : { id: input.id },
    query: input.query ?? {},
    body: input.body,
  });
}

/** The lines an update must read first (spec "Update", rule 5), or null. */
export function readFirstOf(operation: TypedOperation, input: CallInput): ReadFirst | null {
  return operation.readFirst(input);
}

/**
 * The request messages of a write, rendered as the service stores them (the compact text inside
 * `QBXMLMsgsRq`), with the lines kept by a partial update. Writes never page, so no cursor enters.
 */
export function renderMessages(
  operation: TypedOperation,
  input: CallInput,
  kept: Readonly<Record<string, readonly string[]>> = {},
): { messagesXml: string; onError: string } {
  const message = operation.message(input, { page: null, kept });
  // An upsert (decision 0046) runs several sets: the preview shows its find and both writes it may
  // send (the Mod with the found record's ID and revision, which only the find can read).
  const program = upsertProgramOf(operation.program(input));
  const messages =
    program && operation.resource
      ? [
          message,
          messageOf(operation.resource, { ...program, phase: "create" }),
          messageOf(
            operation.resource,
            { ...program, phase: "update" },
            {
              id: "FOUND-RECORD-ID",
              revisionNumber: "FOUND-REVISION",
              externalId: null,
            },
          ),
        ]
      : [message];
  const stored = storedMessageSet(messageSet(messages));
  return { messagesXml: stored.messagesXml, onError: stored.onError };
}

/**
 * Messages as a preview shows them (issue 23): indented, card numbers and the other secret values
 * masked by the console's own redaction (ledger/xml/redact.ts). A write holds one message, a
 * well-formed element; the XML declaration the redaction writes is left out, since the message sits
 * inside the message-set envelope.
 */
export function shownMessages(messagesXml: string): { xml: string; redactedValues: number } {
  const single = redactedDocument(messagesXml);
  if (single) {
    return { xml: single.xml.replace(/^<\?xml[^>]*\?>\n/, ""), redactedValues: single.redactedValues };
  }
  // Several messages (an upsert's sets): read inside one wrapper, shown one after the other.
  const wrapped = redactedDocument(`<Messages>${messagesXml}</Messages>`);
  if (!wrapped) {
    throw new ServiceError("INTERNAL_ERROR", { message: "The preview's message could not be read back." });
  }
  const lines = wrapped.xml.replace(/^<\?xml[^>]*\?>\n/, "").split("\n");
  const inner = lines.filter((line) => line !== "<Messages>" && line !== "</Messages>" && line !== "");
  const indent = Math.min(...inner.map((line) => line.length - line.trimStart().length));
  return {
    xml: inner.map((line) => line.slice(indent)).join("\n"),
    redactedValues: wrapped.redactedValues,
  };
}

/**
 * The route of a call: the path with the record's ID as one encoded segment (an ID validated by
 * {@link validateCall}, so no dot segment), and the query string (arrays repeat the key). The
 * service client refuses to send a route that URL normalisation would change (mcp/service.ts).
 */
export function routeOf(operation: TypedOperation, input: ToolCallInput): string {
  const path = operation.http.path
    .split("/")
    .map((segment) => (segment === ":id" ? encodeURIComponent(input.id ?? "") : segment))
    .join("/");
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(input.query ?? {})) {
    for (const item of Array.isArray(value) ? (value as unknown[]) : [value]) {
      search.append(name, typeof item === "string" ? item : JSON.stringify(item));
    }
  }
  const query = search.toString();
  return query === "" ? path : `${path}?${query}`;
}
