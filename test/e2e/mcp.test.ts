import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, test, type TestContext } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { pino } from "pino";
import { shownMessages } from "../../src/mcp/catalogue.ts";
import { createMcpServer } from "../../src/mcp/server.ts";
import { httpServiceClient } from "../../src/mcp/service.ts";
import { redactedJson } from "../../src/ledger/xml/redact.ts";
import { FakeClock } from "../../src/platform/clock.ts";
import { resourceByPath, type ResourceDefinition } from "../../src/ledger/resources/definitions.ts";
import { createApiKey } from "../../src/tenancy/api-keys.ts";
import { watchApplication } from "../../src/testing/application-watch.ts";
import { TypedFactory, type TypedCall } from "../../src/testing/typed-factory.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { bringOnline, callAsEndUser, countRequests, E2E_CONFIG, eventually } from "./helpers.ts";

/**
 * The MCP server (issue 16 item 5, decision 0022) driven by the SDK's own client against a running
 * service and simulated end user: over real stdio (the CLI spawned as `ledger-bridge mcp`) and, for
 * the rules on the server's clock, over the SDK's in-memory transport.
 */
const ROOT = join(import.meta.dirname, "..", "..");

interface World {
  sys: System;
  eu: ConnectedEndUser;
  /** Every request document the simulated application was handed. */
  received: string[];
}

let shared: World | null = null;
after(() => shared?.sys.close());

/**
 * The service and simulated end user, started once for the file (each start costs seconds); each
 * test counts the application's documents from its own start.
 */
async function world(): Promise<World> {
  if (!shared) {
    const sys = await startSystem(null, E2E_CONFIG);
    const received: string[] = [];
    watchApplication(sys, (xml) => void received.push(xml));
    const eu = await sys.connectEndUser();
    await bringOnline(sys, eu);
    shared = { sys, eu, received };
  }
  shared.received.length = 0;
  return shared;
}

/** How many of the application's documents carry `<name>` (a write's message counted where applied). */
const count = (w: World, name: string): number =>
  w.received.filter((xml) => new RegExp(`<${name}[ >]`).test(xml)).length;

/** Every Request the service holds (nothing queued means this does not move). */
const requestCount = (w: World): Promise<number> => countRequests(w.sys);

/** The CLI's MCP server as a child process over stdio; its stderr (the logs) collected. */
async function stdioClient(
  t: TestContext,
  w: World,
  flags: string[],
  person?: (request: ElicitRequest["params"]) => ElicitResult,
): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      "--import",
      "tsx",
      "src/cli.ts",
      "mcp",
      "--base-url",
      w.sys.url,
      "--end-user",
      w.eu.endUserId,
      ...flags,
    ],
    cwd: ROOT,
    env: { ...(process.env as Record<string, string>), LEDGER_BRIDGE_API_KEY: w.eu.key, LOG_LEVEL: "info" },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client(
    { name: "mcp-test", version: "1.0.0" },
    person ? { capabilities: { elicitation: { form: {} } } } : {},
  );
  if (person) client.setRequestHandler(ElicitRequestSchema, (request) => person(request.params));
  await client.connect(transport);
  t.after(() => client.close());
  return { client, stderr: () => stderr };
}

/** One HTTP call as the service received it. */
interface Received {
  method: string;
  url: string;
  body: string;
}

/**
 * A proxy in front of the service that records every call as an HTTP server receives it (after the
 * client's URL handling): what "the service received" means, checked against what a preview showed.
 */
async function recordingProxy(
  t: TestContext,
  target: string,
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const call = { method: request.method ?? "", url: request.url ?? "", body };
      received.push(call);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === "string" && !["host", "connection", "content-length"].includes(name))
          headers[name] = value;
      }
      void fetch(`${target}${call.url}`, {
        method: call.method,
        headers,
        ...(body === "" ? {} : { body }),
      }).then(async (answer) => {
        const out: Record<string, string> = { "content-type": answer.headers.get("content-type") ?? "" };
        const requestId = answer.headers.get("svc-request-id");
        if (requestId) out["svc-request-id"] = requestId;
        response.writeHead(answer.status, out);
        response.end(await answer.text());
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

async function memoryClient(
  t: TestContext,
  w: World,
  options: {
    clock: FakeClock;
    allowWrites: boolean;
    apiKey?: string;
    baseUrl?: string;
    confirmByPerson?: boolean;
    /** The person behind the client: answers each elicitation (no function: a client that cannot ask). */
    person?: (request: ElicitRequest["params"]) => ElicitResult;
  },
): Promise<Client> {
  const server = createMcpServer({
    service: httpServiceClient({ baseUrl: options.baseUrl ?? w.sys.url, apiKey: options.apiKey ?? w.eu.key }),
    clock: options.clock,
    logger: pino({ level: "silent" }),
    allowWrites: options.allowWrites,
    confirmByPerson: options.confirmByPerson ?? false,
    defaultEndUserId: w.eu.endUserId,
    confirmationTtlMs: 60_000,
    docsBaseUrl: w.sys.url,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const person = options.person;
  const client = new Client(
    { name: "mcp-test", version: "1.0.0" },
    person ? { capabilities: { elicitation: { form: {} } } } : {},
  );
  if (person) client.setRequestHandler(ElicitRequestSchema, (request) => person(request.params));
  await client.connect(clientSide);
  t.after(() => client.close());
  return client;
}

type Json = Record<string, unknown>;

/** Calls a tool and reads its JSON answer. */
async function callTool(client: Client, name: string, args: Json): Promise<{ isError: boolean; body: Json }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const first = result.content[0];
  assert.ok(first && first.type === "text", JSON.stringify(result));
  return { isError: result.isError === true, body: JSON.parse(first.text) as Json };
}

/** The structured lines the server logged for tool calls. */
function toolCallLogs(stderr: string): Json[] {
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Json)
    .filter((line) => line.msg === "tool call");
}

/** The messages inside a document the application was handed (the text between the envelope's tags). */
function messagesOf(document: string): string {
  const match = /<QBXMLMsgsRq[^>]*>\n([\s\S]*)\n<\/QBXMLMsgsRq>/.exec(document);
  assert.ok(match?.[1], document);
  return match[1];
}

const errorOf = (body: Json): { code: string; param: string | null; message: string } =>
  body.error as { code: string; param: string | null; message: string };

test("over stdio, read-only: tools listed, a read answered and logged with its Request, a write and bad input refused with nothing sent", async (t) => {
  const w = await world();
  const { client, stderr } = await stdioClient(t, w, []);

  const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
  assert.deepEqual(tools, [
    "call_operation",
    "describe_operation",
    "get_request",
    "health_check",
    "list_end_users",
    "list_operations",
  ]);

  const index = await callTool(client, "list_operations", {});
  assert.equal(index.body.writesAllowed, false);
  assert.ok(
    (index.body.groups as string[]).some((line) => line.startsWith("customers: list, retrieve, create")),
  );
  const described = await callTool(client, "describe_operation", { operationId: "ledger.customers.create" });
  const input = described.body.input as { properties: { body: { properties: Json } } };
  assert.ok("name" in input.properties.body.properties, "the body's JSON Schema names its fields");

  // A read: answered by the service, with the Request that carried it.
  const read = await callTool(client, "call_operation", {
    operationId: "ledger.customers.list",
    query: { limit: 2 },
  });
  assert.equal(read.isError, false, JSON.stringify(read.body));
  const page = read.body.result as { objectType: string; data: Array<{ objectType: string }> };
  assert.equal(page.objectType, "list");
  assert.equal(page.data.length, 2);
  const requestId = read.body.requestId as string;
  assert.match(requestId, /^req_/);
  assert.equal(count(w, "CustomerQueryRq"), 1);

  const request = await callTool(client, "get_request", { requestId });
  assert.equal((request.body.result as { status: string }).status, "succeeded");
  const health = await callTool(client, "health_check", {});
  assert.equal((health.body.result as { status: string }).status, "ok", JSON.stringify(health.body));
  const endUsers = await callTool(client, "list_end_users", { limit: 5 });
  assert.deepEqual(
    (endUsers.body.result as { data: Array<{ id: string }> }).data.map((endUser) => endUser.id),
    [w.eu.endUserId],
  );

  // A write, in read-only mode: refused before anything is sent.
  const before = await requestCount(w);
  const write = await callTool(client, "call_operation", {
    operationId: "ledger.customers.create",
    body: { name: "Never Written" },
  });
  assert.equal(write.isError, true);
  assert.equal(errorOf(write.body).code, "PERMISSION_DENIED");
  assert.match(errorOf(write.body).message, /read-only/);

  // Bad input: the spec's error with `param`, nothing queued.
  const bad = await callTool(client, "call_operation", {
    operationId: "ledger.customers.list",
    query: { limit: 0 },
  });
  assert.equal(bad.isError, true);
  assert.equal(errorOf(bad.body).code, "INVALID_PARAMETER");
  assert.equal(errorOf(bad.body).param, "limit");
  const unknown = await callTool(client, "call_operation", {
    operationId: "ledger.customers.list",
    query: { colour: "blue" },
  });
  assert.equal(errorOf(unknown.body).code, "UNKNOWN_PARAMETER");
  assert.equal(errorOf(unknown.body).param, "colour");
  const noSuch = await callTool(client, "call_operation", { operationId: "ledger.unicorns.list" });
  assert.equal(errorOf(noSuch.body).param, "operationId");
  assert.equal(await requestCount(w), before, "nothing was queued");
  assert.equal(count(w, "CustomerAddRq"), 0);

  // Every tool call is logged on stderr (stdout is the protocol), a read with its Request ID. The
  // pipe may still hold the last lines: read until all ten have come.
  const logs = await eventually("ten tool calls logged", async () => {
    const lines = toolCallLogs(stderr());
    return lines.length >= 10 && lines;
  });
  assert.equal(logs.length, 10, stderr());
  const readLog = logs.find(
    (line) => line.tool === "call_operation" && line.operationId === "ledger.customers.list",
  );
  assert.equal(readLog?.requestId, requestId);
  const refused = logs.find((line) => line.code === "PERMISSION_DENIED");
  assert.match(String(refused?.requestId), /^call_/);
});

test("over stdio with --allow-writes: a write previewed with its exact message, applied once on confirmation, replayed on a second", async (t) => {
  const w = await world();
  const { client, stderr } = await stdioClient(t, w, ["--allow-writes"]);
  assert.ok((await client.listTools()).tools.some((tool) => tool.name === "confirm_write"));

  const before = await requestCount(w);
  const preview = await callTool(client, "call_operation", {
    operationId: "ledger.customers.create",
    body: { name: "Agent Customer", companyName: "Agent & Co" },
  });
  assert.equal(preview.isError, false, JSON.stringify(preview.body));
  assert.equal(preview.body.applied, false);
  const message = preview.body.message as { messages: string; redactedValues: number };
  assert.match(message.messages, /^<CustomerAddRq>\n {2}<CustomerAdd>\n {4}<Name>Agent Customer<\/Name>/);
  assert.ok(message.messages.includes("<CompanyName>Agent &amp; Co</CompanyName>"), message.messages);
  assert.equal(message.redactedValues, 0);
  const token = preview.body.token as string;
  assert.equal(await requestCount(w), before, "a preview sends nothing");
  assert.equal(count(w, "CustomerAddRq"), 0);

  const applied = await callTool(client, "confirm_write", { token });
  assert.equal(applied.isError, false, JSON.stringify(applied.body));
  const requestId = applied.body.requestId as string;
  assert.match(requestId, /^req_/);
  assert.equal((applied.body.result as { name: string }).name, "Agent Customer");
  assert.equal(count(w, "CustomerAddRq"), 1);
  // The application received exactly the previewed messages.
  const sent = w.received.find((xml) => xml.includes("<Name>Agent Customer</Name>")) ?? "";
  assert.equal(shownMessages(messagesOf(sent)).xml, message.messages, sent);

  const again = await callTool(client, "confirm_write", { token });
  assert.equal(again.isError, false, JSON.stringify(again.body));
  assert.equal(again.body.requestId, requestId, "the second confirmation replays the first Request");
  assert.equal(again.body.confirmation, 2);
  assert.equal(count(w, "CustomerAddRq"), 1, "applied exactly once");

  const named = await callTool(client, "call_operation", {
    operationId: "ledger.customers.list",
    query: { fullNames: ["Agent Customer"] },
  });
  assert.equal(named.isError, false, JSON.stringify(named.body));
  assert.equal((named.body.result as { data: unknown[] }).data.length, 1);

  const confirms = await eventually("both confirmations logged", async () => {
    const lines = toolCallLogs(stderr()).filter((line) => line.tool === "confirm_write");
    return lines.length >= 2 && lines;
  });
  assert.ok(!stderr().includes(token), "the logs never hold a usable token");
  assert.ok(confirms.every((line) => token.startsWith(String(line.token).replace("…", ""))));
  assert.deepEqual(
    confirms.map((line) => [line.requestId, line.confirmation, line.operationId]),
    [
      [requestId, 1, "ledger.customers.create"],
      [requestId, 2, "ledger.customers.create"],
    ],
  );
});

test("a confirmation token expires on the server's clock; bad write input is refused before any preview", async (t) => {
  const w = await world();
  const clock = new FakeClock();
  const client = await memoryClient(t, w, { clock, allowWrites: true });

  const bad = await callTool(client, "call_operation", {
    operationId: "ledger.customers.create",
    body: { name: "X", favouriteColour: "blue" },
  });
  assert.equal(bad.isError, true);
  assert.equal(errorOf(bad.body).code, "UNKNOWN_PARAMETER");
  assert.equal(errorOf(bad.body).param, "favouriteColour");
  assert.equal(bad.body.token, undefined);

  const preview = await callTool(client, "call_operation", {
    operationId: "ledger.customers.create",
    body: { name: "Too Late" },
  });
  const token = preview.body.token as string;
  await clock.advance(60_000);
  const late = await callTool(client, "confirm_write", { token });
  assert.equal(late.isError, true);
  assert.equal(errorOf(late.body).code, "INVALID_PARAMETER");
  assert.equal(errorOf(late.body).param, "token");
  assert.equal(count(w, "CustomerAddRq"), 0, "an expired token writes nothing");

  const fresh = await callTool(client, "call_operation", {
    operationId: "ledger.customers.create",
    body: { name: "In Time" },
  });
  await clock.advance(59_999);
  const applied = await callTool(client, "confirm_write", { token: fresh.body.token });
  assert.equal(applied.isError, false, JSON.stringify(applied.body));
  assert.equal(count(w, "CustomerAddRq"), 1);
});

test("with a read-only key the service itself refuses the confirmed write", async (t) => {
  const w = await world();
  const readOnly = await createApiKey(w.sys.deps, w.sys.project.project.id, {
    kind: "secret",
    mode: "live",
    readOnly: true,
  });
  const client = await memoryClient(t, w, {
    clock: new FakeClock(),
    allowWrites: true,
    apiKey: readOnly.secret,
  });
  const preview = await callTool(client, "call_operation", {
    operationId: "ledger.customers.create",
    body: { name: "Read Only" },
  });
  const refused = await callTool(client, "confirm_write", { token: preview.body.token });
  assert.equal(refused.isError, true);
  assert.equal(errorOf(refused.body).code, "API_KEY_READ_ONLY");
  assert.equal(count(w, "CustomerAddRq"), 0);
});

test("a partial line update is previewed with the lines it keeps, read from the record, and sent as previewed", async (t) => {
  const w = await world();
  const call: TypedCall = (method, path, body) => callAsEndUser(w.sys, w.eu, method, path, body);
  const factory = new TypedFactory(call);
  const group = (path: string): ResourceDefinition => {
    const resource = resourceByPath(path);
    assert.ok(resource, path);
    return resource;
  };
  const itemGroup = await factory.create(group("item-groups"));
  const item = await factory.create(group("service-items"));
  const customer = await factory.create(group("customers"));
  const created = await call("POST", "/v1/ledger-desktop/invoices", {
    customerId: customer.id,
    lines: [{ itemId: item.id, quantity: 1, rate: "10.00" }],
    lineGroups: [{ itemGroupId: itemGroup.id, quantity: 1 }],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const invoice = created.body;
  const groupId = (invoice.lineGroups as Json[])[0]?.id as string;
  const [first] = invoice.lines as Json[];
  assert.ok(first && groupId);

  const client = await memoryClient(t, w, { clock: new FakeClock(), allowWrites: true });
  const preview = await callTool(client, "call_operation", {
    operationId: "ledger.invoices.update",
    id: invoice.id,
    body: {
      revisionNumber: invoice.revisionNumber,
      lines: [{ id: first.id }, { id: "-1", itemId: item.id, quantity: 5, rate: "1.00" }],
    },
  });
  assert.equal(preview.isError, false, JSON.stringify(preview.body));
  const readFirst = preview.body.readFirst as { keptLines: Json; recordRequestId: string };
  assert.deepEqual(readFirst.keptLines, { lineGroups: [groupId] });
  assert.match(readFirst.recordRequestId, /^req_/);
  const messages = (preview.body.message as { messages: string }).messages;
  assert.ok(messages.includes(`<TxnLineID>${groupId}</TxnLineID>`), messages);
  // Sent with the kept group named: the service needs no read of its own, and sends these messages.
  const sentBody = (preview.body.request as { body: Json }).body;
  assert.deepEqual(sentBody.lineGroups, [{ id: groupId }]);
  const updatesBefore = count(w, "InvoiceModRq");
  const retrievesBefore = count(w, "InvoiceQueryRq");

  const applied = await callTool(client, "confirm_write", { token: preview.body.token });
  assert.equal(applied.isError, false, JSON.stringify(applied.body));
  const result = applied.body.result as { lines: Json[]; lineGroups: Json[] };
  assert.deepEqual(
    result.lines.map((line) => line.quantity),
    [1, 5],
  );
  assert.deepEqual(
    result.lineGroups.map((line) => line.id),
    [groupId],
  );
  assert.equal(count(w, "InvoiceModRq") - updatesBefore, 1);
  assert.equal(count(w, "InvoiceQueryRq"), retrievesBefore, "no second read at apply time");
  const sent = w.received.findLast((xml) => xml.includes("<InvoiceModRq>")) ?? "";
  assert.equal(shownMessages(messagesOf(sent)).xml, messages, sent);
});

test("IDs that are not the application's or the service's forms are refused, and nothing reaches the service", async (t) => {
  const w = await world();
  const proxy = await recordingProxy(t, w.sys.url);
  const client = await memoryClient(t, w, { clock: new FakeClock(), allowWrites: true, baseUrl: proxy.url });
  const before = await requestCount(w);
  // `.` and `..` are dot segments: URL normalisation would have sent `POST …/customers/..` as
  // `POST /v1/ledger-desktop/` (another route than the preview showed).
  for (const id of [".", "..", "a/b", "a?b", "a#b", "%2e%2e", "a b", "a\u0000b"]) {
    for (const [operationId, body] of [
      ["ledger.customers.retrieve", undefined],
      ["ledger.customers.update", { revisionNumber: "1", name: "Moved" }],
      ["ledger.customers.delete", undefined],
      ["ledger.invoices.void", {}],
    ] as const) {
      const refused = await callTool(client, "call_operation", {
        operationId,
        id,
        ...(body ? { body } : {}),
      });
      assert.equal(refused.isError, true, `${operationId} ${JSON.stringify(id)}`);
      assert.deepEqual(
        [errorOf(refused.body).code, errorOf(refused.body).param],
        ["INVALID_PARAMETER", "id"],
        `${operationId} ${JSON.stringify(id)}`,
      );
      assert.equal(refused.body.token, undefined);
    }
  }
  const request = await callTool(client, "get_request", { requestId: ".." });
  assert.deepEqual(
    [errorOf(request.body).code, errorOf(request.body).param],
    ["INVALID_PARAMETER", "requestId"],
  );
  const endUser = await callTool(client, "call_operation", {
    operationId: "ledger.customers.list",
    endUserId: "eu_../..",
  });
  assert.deepEqual(
    [errorOf(endUser.body).code, errorOf(endUser.body).param],
    ["INVALID_PARAMETER", "endUserId"],
  );
  assert.equal(proxy.received.length, 0, "nothing reached the service");
  assert.equal(await requestCount(w), before);
});

test("the service receives the previewed method, path and body; the preview masks the card number", async (t) => {
  const w = await world();
  const proxy = await recordingProxy(t, w.sys.url);
  const client = await memoryClient(t, w, { clock: new FakeClock(), allowWrites: true, baseUrl: proxy.url });
  const card = "4111111111111111";
  const given = {
    name: "Card Holder",
    creditCard: { number: card, expirationMonth: 12, expirationYear: 2031, name: "C Holder" },
  };
  const preview = await callTool(client, "call_operation", {
    operationId: "ledger.customers.create",
    body: given,
  });
  assert.equal(preview.isError, false, JSON.stringify(preview.body));
  const shown = JSON.stringify(preview.body);
  assert.ok(!shown.includes(card) && !shown.includes(card.slice(0, 12)), shown);
  const message = preview.body.message as { messages: string; redactedValues: number };
  assert.match(message.messages, /<CreditCardNumber>•{12}1111<\/CreditCardNumber>/);
  assert.equal(message.redactedValues, 1);
  const request = preview.body.request as {
    method: string;
    path: string;
    body: Json;
    redactedValues: number;
  };
  assert.equal((request.body.creditCard as Json).number, "••••••••••••1111");
  assert.equal(request.redactedValues, 1);
  assert.equal(proxy.received.length, 0, "a preview sends nothing");

  const applied = await callTool(client, "confirm_write", { token: preview.body.token });
  assert.equal(applied.isError, false, JSON.stringify(applied.body));
  assert.equal(proxy.received.length, 1);
  const [sent] = proxy.received;
  assert.ok(sent);
  assert.deepEqual([sent.method, sent.url], [request.method, request.path]);
  assert.deepEqual(JSON.parse(sent.body), given, "the body as given, card number and all");
  assert.deepEqual(redactedJson(JSON.parse(sent.body)).value, request.body, "the previewed body, masked");
  // The application was handed the real number, in the previewed message.
  const document = w.received.find((xml) => xml.includes("<Name>Card Holder</Name>")) ?? "";
  assert.ok(document.includes(`<CreditCardNumber>${card}</CreditCardNumber>`), document);
  assert.equal(shownMessages(messagesOf(document)).xml, message.messages);

  // A write whose path names the record: the ID is one encoded segment, sent as previewed.
  const customer = applied.body.result as { id: string; revisionNumber: string };
  const update = await callTool(client, "call_operation", {
    operationId: "ledger.customers.update",
    id: customer.id,
    body: { revisionNumber: customer.revisionNumber, companyName: "Renamed & Co" },
  });
  assert.equal(update.isError, false, JSON.stringify(update.body));
  const updateRequest = update.body.request as { method: string; path: string; body: Json };
  assert.equal(updateRequest.path, `/v1/ledger-desktop/customers/${encodeURIComponent(customer.id)}`);
  const updated = await callTool(client, "confirm_write", { token: update.body.token });
  assert.equal(updated.isError, false, JSON.stringify(updated.body));
  const last = proxy.received.at(-1);
  assert.deepEqual(
    [last?.method, last?.url, JSON.parse(last?.body ?? "null")],
    [updateRequest.method, updateRequest.path, updateRequest.body],
  );
});

test("--confirm-by-person: the person accepts in the client and the write is applied once; a decline writes nothing", async (t) => {
  const w = await world();
  const asked: Array<ElicitRequest["params"]> = [];
  let answer: ElicitResult = { action: "accept", content: { apply: true } };
  const client = await memoryClient(t, w, {
    clock: new FakeClock(),
    allowWrites: true,
    confirmByPerson: true,
    person: (params) => {
      asked.push(params);
      return answer;
    },
  });
  const tools = (await client.listTools()).tools;
  assert.match(tools.find((tool) => tool.name === "confirm_write")?.description ?? "", /Asks the user/);

  const card = "5500005555555559";
  const preview = await callTool(client, "call_operation", {
    operationId: "ledger.customers.create",
    body: { name: "Person Accepted", creditCard: { number: card } },
  });
  assert.match(String(preview.body.next), /asked in their MCP client/);
  assert.equal(asked.length, 0, "the preview asks no one");
  const applied = await callTool(client, "confirm_write", { token: preview.body.token });
  assert.equal(applied.isError, false, JSON.stringify(applied.body));
  assert.equal(count(w, "CustomerAddRq"), 1);
  // The person saw what the preview showed: the operation, the route, the message; the card masked.
  assert.equal(asked.length, 1);
  const question = asked[0] as { message: string; requestedSchema: { properties: Json } };
  assert.match(question.message, /ledger\.customers\.create/);
  assert.match(question.message, /POST \/v1\/ledger-desktop\/customers/);
  assert.match(question.message, /<Name>Person Accepted<\/Name>/);
  assert.match(question.message, /•{12}5559/);
  assert.ok(!question.message.includes(card));
  assert.deepEqual(Object.keys(question.requestedSchema.properties), ["apply"]);
  // Once accepted, confirming again replays the same Request without asking again.
  const again = await callTool(client, "confirm_write", { token: preview.body.token });
  assert.equal(again.body.requestId, applied.body.requestId);
  assert.equal(asked.length, 1);
  assert.equal(count(w, "CustomerAddRq"), 1);

  // Declined (or accepted without ticking "apply", or dismissed): nothing sent, the token is void.
  for (const refusal of [
    { action: "decline" },
    { action: "accept", content: { apply: false } },
    { action: "cancel" },
  ] as ElicitResult[]) {
    answer = refusal;
    const before = await requestCount(w);
    const declined = await callTool(client, "call_operation", {
      operationId: "ledger.customers.create",
      body: { name: "Person Declined" },
    });
    const refused = await callTool(client, "confirm_write", { token: declined.body.token });
    assert.equal(refused.isError, true, JSON.stringify(refusal));
    assert.equal(errorOf(refused.body).code, "PERMISSION_DENIED");
    assert.match(errorOf(refused.body).message, /did not accept/);
    const retried = await callTool(client, "confirm_write", { token: declined.body.token });
    assert.equal(errorOf(retried.body).param, "token", "the token is void");
    assert.equal(await requestCount(w), before, "nothing was sent");
  }
  assert.equal(count(w, "CustomerAddRq"), 1);
});

test("--confirm-by-person with a client that cannot ask the person: writes are refused, nothing sent", async (t) => {
  const w = await world();
  const client = await memoryClient(t, w, {
    clock: new FakeClock(),
    allowWrites: true,
    confirmByPerson: true,
  });
  const before = await requestCount(w);
  const preview = await callTool(client, "call_operation", {
    operationId: "ledger.customers.create",
    body: { name: "Nobody Asked" },
  });
  const refused = await callTool(client, "confirm_write", { token: preview.body.token });
  assert.equal(refused.isError, true);
  assert.equal(errorOf(refused.body).code, "PERMISSION_DENIED");
  assert.match(errorOf(refused.body).message, /does not support elicitation/);
  assert.equal(await requestCount(w), before);
  assert.equal(count(w, "CustomerAddRq"), 0);
});

test("over stdio with --allow-writes --confirm-by-person: the person is asked, and their decline writes nothing", async (t) => {
  const w = await world();
  const asked: string[] = [];
  const { client, stderr } = await stdioClient(t, w, ["--allow-writes", "--confirm-by-person"], (params) => {
    asked.push(params.message);
    return { action: "decline" };
  });
  const before = await requestCount(w);
  const preview = await callTool(client, "call_operation", {
    operationId: "ledger.customers.create",
    body: { name: "Declined Over Stdio" },
  });
  const refused = await callTool(client, "confirm_write", { token: preview.body.token });
  assert.equal(errorOf(refused.body).code, "PERMISSION_DENIED");
  assert.equal(asked.length, 1);
  assert.match(asked[0] ?? "", /<Name>Declined Over Stdio<\/Name>/);
  assert.equal(await requestCount(w), before);
  assert.equal(count(w, "CustomerAddRq"), 0);
  const logged = await eventually("the confirmation logged", async () =>
    toolCallLogs(stderr()).find((line) => line.tool === "confirm_write"),
  );
  assert.deepEqual(
    [logged.confirmedBy, logged.personAnswer, logged.code],
    ["person", "decline", "PERMISSION_DENIED"],
  );
});

test("reads with maxStalenessSeconds are answered from the end user's mirror (dataAsOf, no Request), without it live; a write refuses it", async (t) => {
  const sys = await startSystem(t, { ...E2E_CONFIG, mirror: true });
  const clock = sys.fakeClock;
  assert.ok(clock);
  const eu = await sys.connectEndUser({ companyName: "MCP Mirror Co", application: { clock } });
  await bringOnline(sys, eu);
  const w: World = { sys, eu, received: [] };
  const put = await sys.call("PUT", `/v1/end-users/${eu.endUserId}/mirror`, {
    body: { resources: ["customers"] },
  });
  assert.equal(put.status, 200);
  const asOf = await eventually("customers mirrored", async () => {
    const mirror = (await (await sys.call("GET", `/v1/end-users/${eu.endUserId}/mirror`)).json()) as {
      resources: { state: string; asOf: string | null }[];
    };
    return mirror.resources[0]?.state === "ready" && mirror.resources[0].asOf;
  });
  const client = await memoryClient(t, w, { clock: new FakeClock(), allowWrites: true });
  const before = await countRequests(sys);
  const mirrored = await callTool(client, "call_operation", {
    operationId: "ledger.customers.list",
    query: { limit: 2 },
    maxStalenessSeconds: 3600,
  });
  assert.equal(mirrored.isError, false, JSON.stringify(mirrored.body));
  assert.equal(mirrored.body.dataAsOf, asOf);
  assert.doesNotMatch(String(mirrored.body.requestId), /^req_/, "no Request");
  assert.equal((mirrored.body.result as Json).source, "mirror");
  assert.equal(await countRequests(sys), before);
  const live = await callTool(client, "call_operation", {
    operationId: "ledger.customers.list",
    query: { limit: 2 },
  });
  assert.equal((live.body.result as Json).source, "live");
  assert.equal(live.body.dataAsOf, undefined);
  assert.deepEqual((live.body.result as Json).data, (mirrored.body.result as Json).data);
  const write = await callTool(client, "call_operation", {
    operationId: "ledger.customers.create",
    body: { name: "Never Sent" },
    maxStalenessSeconds: 60,
  });
  assert.deepEqual(
    [errorOf(write.body).code, errorOf(write.body).param],
    ["INVALID_PARAMETER", "maxStalenessSeconds"],
  );
  const tooOld = (await client.callTool({
    name: "call_operation",
    arguments: { operationId: "ledger.customers.list", query: { limit: 2 }, maxStalenessSeconds: 86_401 },
  })) as CallToolResult;
  assert.equal(tooOld.isError, true, "the tool's schema bounds it as the header does");
  assert.match(JSON.stringify(tooOld.content), /maxStalenessSeconds/);
});
