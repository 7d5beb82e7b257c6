import assert from "node:assert/strict";
import { join } from "node:path";
import { after, test, type TestContext } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { pino } from "pino";
import { createMcpServer } from "../../src/mcp/server.ts";
import { httpServiceClient } from "../../src/mcp/service.ts";
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
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  await client.connect(transport);
  t.after(() => client.close());
  return { client, stderr: () => stderr };
}

async function memoryClient(
  t: TestContext,
  w: World,
  options: { clock: FakeClock; allowWrites: boolean; apiKey?: string },
): Promise<Client> {
  const server = createMcpServer({
    service: httpServiceClient({ baseUrl: w.sys.url, apiKey: options.apiKey ?? w.eu.key }),
    clock: options.clock,
    logger: pino({ level: "silent" }),
    allowWrites: options.allowWrites,
    defaultEndUserId: w.eu.endUserId,
    confirmationTtlMs: 60_000,
    docsBaseUrl: w.sys.url,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
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
  const message = preview.body.message as { messages: string };
  assert.match(message.messages, /^<CustomerAddRq><CustomerAdd><Name>Agent Customer<\/Name>/);
  assert.ok(message.messages.includes("<CompanyName>Agent &amp; Co</CompanyName>"), message.messages);
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
  assert.ok(sent.includes(`>\n${message.messages}\n</QBXMLMsgsRq>`), sent);

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
  assert.ok(sent.includes(`>\n${messages}\n</QBXMLMsgsRq>`), sent);
});
