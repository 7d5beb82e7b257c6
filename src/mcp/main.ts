import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { pino } from "pino";
import { systemClock } from "../platform/clock.ts";
import { isId } from "../platform/ids.ts";
import { createMcpServer, DEFAULT_CONFIRMATION_TTL_MS, DEFAULT_TIMEOUT_SECONDS } from "./server.ts";
import { httpServiceClient } from "./service.ts";

/**
 * `ledger-bridge mcp`: the MCP server over stdio (decision 0022). Stdout carries the protocol only;
 * logs (one structured line per tool call, with its Request IDs) go to stderr.
 */
export const MCP_USAGE = `Usage:
  ledger-bridge mcp [--base-url URL] [--end-user END_USER_ID] [--allow-writes [--confirm-by-person]]
                    [--confirm-ttl-seconds N] [--timeout-seconds N]

An MCP server over stdio, a client of a running ledger-bridge service.
  --base-url URL           the service (default: LEDGER_BRIDGE_BASE_URL, else http://localhost:8080)
  --end-user ID            the end user of calls that name none (default: LEDGER_BRIDGE_END_USER_ID)
  --allow-writes           offer writes (previewed, applied only when confirmed); without it the
                           server is read-only. The key must also be allowed to write.
  --confirm-by-person      with --allow-writes: each write must also be accepted by the person in
                           the MCP client (an elicitation the model cannot answer); a client that
                           cannot ask is refused writes
  --confirm-ttl-seconds N  how long a write's confirmation token lives (default ${DEFAULT_CONFIRMATION_TTL_MS / 1000})
  --timeout-seconds N      sync wait of application calls, 1 to 300 (default ${DEFAULT_TIMEOUT_SECONDS}: MCP clients
                           give up on a tool after 60 s); a call still running is a Request for get_request
Environment: LEDGER_BRIDGE_API_KEY (required: a secret key, sk_live_… or sk_test_…; a read-only
key keeps the server read-only whatever the flags), LOG_LEVEL (default info).`;

export class McpUsageError extends Error {}

export interface McpSettings {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly endUserId: string | undefined;
  readonly allowWrites: boolean;
  readonly confirmByPerson: boolean;
  readonly confirmationTtlMs: number;
  readonly timeoutSeconds: number;
}

const FLAGS = {
  "base-url": { type: "string" },
  "end-user": { type: "string" },
  "allow-writes": { type: "boolean", default: false },
  "confirm-by-person": { type: "boolean", default: false },
  "confirm-ttl-seconds": { type: "string" },
  "timeout-seconds": { type: "string" },
} as const;

function parseFlags(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: false });
  } catch (error) {
    // node:util's parseArgs says what is wrong with the flags (ERR_PARSE_ARGS_*).
    throw new McpUsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Reads the flags and the environment; a problem is a McpUsageError. */
export function mcpSettings(argv: string[], env: NodeJS.ProcessEnv): McpSettings {
  const { values } = parseFlags(argv);
  const apiKey = env.LEDGER_BRIDGE_API_KEY;
  if (!apiKey) throw new McpUsageError("LEDGER_BRIDGE_API_KEY is required (a secret key of the project)");
  const baseUrl = values["base-url"] ?? env.LEDGER_BRIDGE_BASE_URL ?? "http://localhost:8080";
  if (!/^https?:\/\/[^/]/.test(baseUrl)) throw new McpUsageError("--base-url must be an http(s) URL");
  if (values["confirm-by-person"] && !values["allow-writes"]) {
    throw new McpUsageError(
      "--confirm-by-person needs --allow-writes (without it the server writes nothing)",
    );
  }
  const endUserId = values["end-user"] ?? env.LEDGER_BRIDGE_END_USER_ID ?? undefined;
  if (endUserId !== undefined && !isId("endUser", endUserId)) {
    throw new McpUsageError("--end-user must be an end user ID (eu_ + 26 characters)");
  }
  const ttl = values["confirm-ttl-seconds"];
  if (ttl !== undefined && !/^[1-9]\d{0,5}$/.test(ttl)) {
    throw new McpUsageError("--confirm-ttl-seconds must be a whole number of seconds, 1 to 999999");
  }
  const timeout = values["timeout-seconds"];
  if (timeout !== undefined && !(/^[1-9]\d{0,2}$/.test(timeout) && Number(timeout) <= 300)) {
    throw new McpUsageError("--timeout-seconds must be a whole number of seconds, 1 to 300");
  }
  return {
    baseUrl,
    apiKey,
    endUserId,
    allowWrites: values["allow-writes"],
    confirmByPerson: values["confirm-by-person"],
    confirmationTtlMs: ttl === undefined ? DEFAULT_CONFIRMATION_TTL_MS : Number(ttl) * 1000,
    timeoutSeconds: timeout === undefined ? DEFAULT_TIMEOUT_SECONDS : Number(timeout),
  };
}

/** Serves MCP on stdin/stdout until stdin closes. */
export async function runMcp(argv: string[]): Promise<void> {
  // Stdout is the protocol: anything printed by accident goes to stderr instead.
  console.log = console.error;
  console.info = console.error;
  const settings = mcpSettings(argv, process.env);
  const logger = pino(
    { level: process.env.LOG_LEVEL ?? "info", base: { service: "ledger-bridge-mcp" } },
    pino.destination(2),
  );
  const server = createMcpServer({
    service: httpServiceClient({ baseUrl: settings.baseUrl, apiKey: settings.apiKey }),
    clock: systemClock,
    logger,
    allowWrites: settings.allowWrites,
    confirmByPerson: settings.confirmByPerson,
    defaultEndUserId: settings.endUserId,
    confirmationTtlMs: settings.confirmationTtlMs,
    timeoutSeconds: settings.timeoutSeconds,
    docsBaseUrl: settings.baseUrl,
  });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  logger.info(
    {
      baseUrl: settings.baseUrl,
      allowWrites: settings.allowWrites,
      confirmByPerson: settings.confirmByPerson,
      endUserId: settings.endUserId ?? null,
    },
    "MCP server ready on stdio",
  );
  await closed;
  await server.close();
}
