import { parseArgs } from "node:util";
import { openAdmin } from "./admin/connect.ts";
import type { AdminOperations } from "./admin/operations.ts";
import { loadConfig } from "./config.ts";

/**
 * Operator CLI. Commands run inside the running service when there is one (over its admin channel),
 * otherwise on the store directly (admin/connect.ts, decision 0005). Results are JSON on stdout;
 * notes for the operator go to stderr. Secrets are printed once and never stored in clear.
 */
const USAGE = `Usage:
  ledger-bridge projects create --name NAME [--organization ORG]
  ledger-bridge projects list
  ledger-bridge projects usage --project PROJECT_ID
  ledger-bridge projects set-quota --project PROJECT_ID --monthly-requests N|none
  ledger-bridge projects set-billing --project PROJECT_ID --payment failed|ok
  ledger-bridge projects disable --project PROJECT_ID [--reason TEXT]
  ledger-bridge projects enable --project PROJECT_ID
  ledger-bridge keys create --project PROJECT_ID [--kind secret|publishable] [--mode live|test] [--read-only]
  ledger-bridge keys list --project PROJECT_ID
  ledger-bridge keys revoke --project PROJECT_ID --key KEY_ID
  ledger-bridge end-users simulate --project PROJECT_ID --end-user END_USER_ID [--xml-version 13.0|14.0|15.0|16.0] [--country US|CA|UK]
  ledger-bridge end-users mirror --project PROJECT_ID --end-user END_USER_ID [--resources customers,invoices | --off]
  ledger-bridge support-bundle --end-user END_USER_ID [--since 2h|ISO] [--until ISO] [--project PROJECT_ID] > bundle.json
  ledger-bridge replay bundle.json [--timing recorded]
  ledger-bridge secrets reseal
  ledger-bridge mcp [--base-url URL] [--end-user END_USER_ID] [--allow-writes]   (ledger-bridge mcp --help)

Runs inside the service when one runs on this DATA_DIR (or DATABASE_URL); otherwise opens the store.
Billing (decision 0019): a project's live application Requests are counted per calendar month (UTC),
a batch as its members; past 'set-quota' a live call is refused with 402 BILLING_REQUIRED, after
'set-billing --payment failed' with 402 PAYMENT_FAILED; a disabled project's keys get 403
PERMISSION_DENIED on every call.
'end-users simulate' attaches a simulated Web Connector and company file (needs a running service
with SIMULATOR=on); its application speaks 16.0 as a US edition unless told otherwise (kept with the
company file). Environment: DATA_DIR, DATABASE_URL, as for the service.
'end-users mirror' (issue 26) prints the end user's mirror: each mirrored group with its state
(filling, ready, paused, error), records, as of and last change applied. With --resources it first
makes the mirrored groups exactly those named (comma-separated typed groups, e.g. customers,invoices);
--off or --resources '' turns the mirror off and deletes the copy. As PUT/GET /v1/end-users/{id}/mirror,
in the end user's own mode.
'support-bundle' (issue 28) prints the end user's support bundle: its connection (status history,
check-in evidence, company file), every Request of the window with its input, message and answer
(secrets masked), timeline and error, the connector sessions and the webhook deliveries; as GET
/v1/end-users/{id}/support-bundle in the end user's own mode. --since/--until take an ISO 8601 time
or a duration before now (30m, 2h, 7d); the default window is the last day. SUPPORT_BUNDLE_MAX_BYTES
bounds it (the oldest Requests are left out first, and 'truncated' says so).
'replay' (issue 28) runs a bundle's calls again against a fresh in-memory service on this machine
whose simulated Web Connector answers with the bundle's answers and faults, in order, with the
connection's recorded outages (offline, the application closed), and prints how each Request ended
(status, outcome, code, timeline, waiting reasons, webhook event types) beside how it ended then,
and every divergence (a message the bundle does not hold, answered by the simulator); it exits 1
when anything differs. --timing recorded spends the application's recorded time on each answer
on the replay's service clock. (npm run simulator -- --replay bundle.json does
the same against a service you run and call yourself.)
'secrets reseal' (decision 0032) seals every stored secret again under the current SECRETS_KEY:
after a rotation (old key moved to SECRETS_KEY_PREVIOUS, new one in SECRETS_KEY, service restarted),
or once after a key is first set (values stored in clear). It runs in the running service with its
keys, or on the store with this environment's; it exits 1 if any value opened with no key.`;

class UsageError extends Error {}

const options = {
  name: { type: "string" },
  organization: { type: "string" },
  project: { type: "string" },
  kind: { type: "string", default: "secret" },
  mode: { type: "string", default: "live" },
  "read-only": { type: "boolean", default: false },
  key: { type: "string" },
  "end-user": { type: "string" },
  "xml-version": { type: "string" },
  country: { type: "string" },
  "monthly-requests": { type: "string" },
  payment: { type: "string" },
  reason: { type: "string" },
  resources: { type: "string" },
  off: { type: "boolean", default: false },
  since: { type: "string" },
  until: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>["values"];

function required(
  values: Values,
  name: "name" | "project" | "key" | "end-user" | "monthly-requests" | "payment",
): string {
  const value = values[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

function mode(values: Values): "live" | "test" {
  if (values.mode !== "live" && values.mode !== "test") throw new UsageError("--mode must be live or test");
  return values.mode;
}

/** The command, or null when `noun verb` is not one. */
function command(
  noun: string,
  verb: string,
  values: Values,
): ((ops: AdminOperations) => Promise<number>) | null {
  const print = (value: unknown): void => console.log(JSON.stringify(value, null, 2));
  switch (`${noun} ${verb}`) {
    case "projects create": {
      const name = required(values, "name");
      return async (ops) => {
        print(await ops.createProject({ name, organization: values.organization }));
        console.error("Store these keys now: they are shown once.");
        return 0;
      };
    }
    case "projects list":
      return async (ops) => (print(await ops.listProjects()), 0);
    case "projects usage": {
      const projectId = required(values, "project");
      return async (ops) => (print(await ops.usage(projectId)), 0);
    }
    case "projects set-quota": {
      const projectId = required(values, "project");
      const text = required(values, "monthly-requests");
      if (text !== "none" && !/^\d{1,12}$/.test(text))
        throw new UsageError("--monthly-requests must be a whole number, or none");
      const monthlyRequests = text === "none" ? null : Number(text);
      return async (ops) => (print(await ops.setQuota({ projectId, monthlyRequests })), 0);
    }
    case "projects set-billing": {
      const projectId = required(values, "project");
      const payment = required(values, "payment");
      if (payment !== "failed" && payment !== "ok") throw new UsageError("--payment must be failed or ok");
      return async (ops) => (print(await ops.setPayment({ projectId, payment })), 0);
    }
    case "projects disable":
    case "projects enable": {
      const projectId = required(values, "project");
      const disabled = verb === "disable";
      const reason = values.reason;
      return async (ops) => (print(await ops.setDisabled({ projectId, disabled, reason })), 0);
    }
    case "keys create": {
      const projectId = required(values, "project");
      if (values.kind !== "secret" && values.kind !== "publishable")
        throw new UsageError("--kind must be secret or publishable");
      const kind = values.kind;
      const keyMode = mode(values);
      return async (ops) => {
        print(await ops.createKey({ projectId, kind, mode: keyMode, readOnly: values["read-only"] }));
        console.error("Store this key now: it is shown once.");
        return 0;
      };
    }
    case "keys list": {
      const projectId = required(values, "project");
      return async (ops) => (print(await ops.listKeys(projectId)), 0);
    }
    case "keys revoke": {
      const projectId = required(values, "project");
      const keyId = required(values, "key");
      return async (ops) => {
        const revoked = await ops.revokeKey(projectId, keyId);
        console.log(revoked ? "revoked" : "no such active key");
        return revoked ? 0 : 1;
      };
    }
    case "end-users simulate": {
      const projectId = required(values, "project");
      const endUserId = required(values, "end-user");
      const application = {
        ...(values["xml-version"] === undefined ? {} : { xmlVersion: values["xml-version"] }),
        ...(values.country === undefined ? {} : { country: values.country }),
      };
      const input = { projectId, endUserId, ...(Object.keys(application).length > 0 ? { application } : {}) };
      return async (ops) => (print(await ops.simulateEndUser(input)), 0);
    }
    case "end-users mirror": {
      const projectId = required(values, "project");
      const endUserId = required(values, "end-user");
      if (values.off && values.resources !== undefined)
        throw new UsageError("--off and --resources cannot be used together");
      const resources = values.off
        ? []
        : values.resources === undefined
          ? null
          : values.resources
              .split(",")
              .map((name) => name.trim())
              .filter((name) => name !== "");
      return async (ops) => {
        print(
          resources === null
            ? await ops.getMirror({ projectId, endUserId })
            : await ops.setMirror({ projectId, endUserId, resources }),
        );
        return 0;
      };
    }
    case "support-bundle ": {
      const endUserId = required(values, "end-user");
      const input = { endUserId, projectId: values.project, since: values.since, until: values.until };
      return async (ops) => (print(await ops.supportBundle(input)), 0);
    }
    case "secrets reseal":
      return async (ops) => {
        const report = await ops.resealSecrets();
        print(report);
        if (report.unreadablePlaces.length > 0) {
          console.error(
            "Some values open with no configured key: put the key that sealed them back in SECRETS_KEY_PREVIOUS and run this again.",
          );
          return 1;
        }
        console.error(
          report.olderFingerprints.count === 0
            ? `Everything is sealed under key ${report.keyId}: SECRETS_KEY_PREVIOUS can be emptied.`
            : `Everything is sealed under key ${report.keyId}. Keep SECRETS_KEY_PREVIOUS until ${report.olderFingerprints.expireBy ?? "?"}: ${report.olderFingerprints.count} idempotency keys still match retries with it.`,
        );
        return 0;
      };
    default:
      return null;
  }
}

/** `ledger-bridge mcp`: the MCP server over stdio, a client of a running service (decision 0022). */
async function mcp(argv: string[]): Promise<number> {
  const { runMcp, McpUsageError, MCP_USAGE } = await import("./mcp/main.ts");
  if (argv.includes("--help") || argv.includes("-h")) return (console.error(MCP_USAGE), 0);
  try {
    await runMcp(argv);
    return 0;
  } catch (error) {
    if (!(error instanceof McpUsageError)) throw error;
    console.error(`${error.message}\n\n${MCP_USAGE}`);
    return 2;
  }
}

/** `ledger-bridge replay bundle.json`: needs no service and no store (decision 0049). */
async function replay(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { timing: { type: "string" } },
  });
  const [path] = positionals;
  if (!path) throw new UsageError("replay needs the bundle's file: ledger-bridge replay bundle.json");
  if (values.timing !== undefined && values.timing !== "recorded")
    throw new UsageError("--timing must be recorded");
  const { readFile } = await import("node:fs/promises");
  const { replayBundle } = await import("./simulation/replay.ts");
  const { readBundle } = await import("./simulator/replay.ts");
  const bundle = readBundle(await readFile(path, "utf8"));
  const report = await replayBundle(bundle, { recordedTiming: values.timing === "recorded" });
  console.log(JSON.stringify(report, null, 2));
  console.error(
    report.ok
      ? `Replayed ${report.requests.length} Requests: each ended as recorded.`
      : `Replayed ${report.requests.length} Requests: ${report.requests.filter((r) => !r.same).length} ended otherwise, ${report.divergences.length} divergence(s).`,
  );
  return report.ok ? 0 : 1;
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === "mcp") return mcp(argv.slice(1));
  if (argv[0] === "replay") return replay(argv.slice(1));
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options });
  const [noun, verb] = positionals;
  if (values.help) return (console.log(USAGE), 0);
  const run = noun ? command(noun, verb ?? "", values) : null;
  if (!run) return (console.error(USAGE), 1);
  const session = await openAdmin(loadConfig());
  try {
    console.error(`(using ${session.via})`);
    return await run(session.ops);
  } finally {
    await session.close();
  }
}

// On a pipe stdout is written asynchronously: exit once what was printed has left (a support
// bundle is megabytes), as the empty write's callback runs after the writes before it.
main(process.argv.slice(2)).then(
  (code) => process.stdout.write("", () => process.exit(code)),
  (error: unknown) => {
    console.error(
      error instanceof UsageError
        ? `${error.message}\n\n${USAGE}`
        : error instanceof Error
          ? error.message
          : error,
    );
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
