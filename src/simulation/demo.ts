import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Deps } from "../deps.ts";
import { createProject, type Principal } from "../tenancy/api-keys.ts";
import { createAuthSession, loadSetup } from "../tenancy/auth-sessions.ts";
import { createEndUser } from "../tenancy/end-users.ts";
import { findConnectionForEndUser } from "../store/connections.ts";
import { findProject } from "../store/projects.ts";
import type { SimulationHost } from "./host.ts";

/**
 * Demo data for `npm start`: one project whose keys are kept in `<DATA_DIR>/demo.json` (mode 0600;
 * a dev convenience, so every start shows the same working keys), and one end user whose company
 * file is simulated. The first start sets the simulated Web Connector up through a real auth session
 * (its `.qwc` and password); later starts find it among the simulated end users the host restored,
 * with the company file as it was left.
 *
 * The banner prints the keys only to a terminal (the quick start). Written anywhere else — a
 * container's log, a service manager's journal, a file — it names the key file instead: a log is
 * kept, shipped and read by more people than the key is meant for (issue 23, decision 0033).
 */
interface DemoFile {
  projectId: string;
  organization: string;
  endUserId: string;
  keys: { secretLive: string; secretTest: string; publishableLive: string; publishableTest: string };
}

export interface Demo {
  file: DemoFile;
  /** The absolute path of the key file. */
  keysPath: string;
  /** Whether the simulated end user's first check-in finished. */
  online: boolean;
}

/** Where the demo's keys are kept (a directory of its own with PostgreSQL, shared by design). */
export function demoKeysPath(config: Deps["config"]): string {
  const dir = config.DATABASE_URL ? join(config.DATA_DIR, "postgres-demo") : config.DATA_DIR;
  return resolve(dir, "demo.json");
}

async function loadOrCreate(deps: Deps, path: string): Promise<DemoFile> {
  if (existsSync(path)) {
    const file = JSON.parse(readFileSync(path, "utf8")) as DemoFile;
    if (await findProject(deps.db, file.projectId)) return file;
  }
  const created = await createProject(deps, { name: "Demo project" });
  const endUser = await createEndUser(
    deps,
    { projectId: created.project.id, mode: "live" },
    {
      companyName: "Demo Company",
      sourceId: "demo-1",
      email: null,
    },
  );
  const file: DemoFile = {
    projectId: created.project.id,
    organization: created.project.organization,
    endUserId: endUser.id,
    keys: created.keys,
  };
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(file, null, 2), { mode: 0o600 });
  return file;
}

/** Attaches the demo end user's simulated company file through a fresh auth session, unless it runs already. */
async function connectSimulator(deps: Deps, host: SimulationHost, file: DemoFile): Promise<boolean> {
  const existing = await findConnectionForEndUser(deps.db, file.projectId, file.endUserId);
  // Restored at start: its first check-in is under way. The banner's commands work once it is online.
  if (existing && host.isRunning(existing.id)) return host.waitUntilOnline(existing.id);
  const principal: Principal = {
    projectId: file.projectId,
    organization: file.organization,
    keyId: "demo",
    mode: "live",
    readOnly: false,
  };
  const session = await createAuthSession(deps, principal, {
    publishableKey: file.keys.publishableLive,
    endUserId: file.endUserId,
    linkExpiryMins: 30,
  });
  const setup = await loadSetup(deps, session.id, session.clientSecret);
  if (setup.state !== "waiting") throw new Error(`Demo setup is ${setup.state}`);
  const attached = await host.attach({
    connection: setup.connection,
    password: setup.password,
    companyName: "Demo Company",
  });
  return attached.online;
}

/** Loads or creates the demo project and end user and makes sure its simulated connector runs. */
export async function seedDemo(deps: Deps, host: SimulationHost): Promise<Demo> {
  const keysPath = demoKeysPath(deps.config);
  const file = await loadOrCreate(deps, keysPath);
  const online = await connectSimulator(deps, host, file);
  return { file, keysPath, online };
}

/** A word for the shell: single-quoted, with any single quote closed, escaped and reopened. */
const shellWord = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * The start banner: where the service runs, the demo project and end user, and commands that answer
 * at once. `terminal` (standard output is a TTY) prints the keys in them, as the README's quick start
 * shows; otherwise the commands read the secret key from the key file, and no key is printed.
 */
export function demoBanner(demo: Demo, options: { url: string; engine: string; terminal: boolean }): string {
  const { file, keysPath, online } = demo;
  const { url } = options;
  const key = options.terminal ? file.keys.secretLive : "$KEY";
  const keyLines = options.terminal
    ? [
        `  Secret key        ${file.keys.secretLive}`,
        `  Test secret key   ${file.keys.secretTest}`,
        `  Publishable key   ${file.keys.publishableLive}`,
        `  Test publishable  ${file.keys.publishableTest}`,
      ]
    : [
        `  Keys              ${keysPath}  (readable by this user only; not printed: this output is not a terminal)`,
      ];
  const readKey = options.terminal
    ? []
    : [`  KEY=$(node -p ${shellWord(`require(${JSON.stringify(keysPath)}).keys.secretLive`)})`];
  return `
ledger-bridge is running at ${url}  (store: ${options.engine}, simulator: on)

  Project           ${file.projectId}
${keyLines.join("\n")}
  Demo end user     ${file.endUserId}  (simulated company file "Demo Company"${online ? "" : ", not connected yet"})

Try it:
${readKey.map((line) => `${line}\n`).join("")}  curl -s ${url}/v1/end-users -H "Authorization: Bearer ${key}"
  curl -s ${url}/v1/ledger-desktop/health-check -H "Authorization: Bearer ${key}" -H "Svc-End-User-Id: ${file.endUserId}"
  curl -s "${url}/v1/ledger-desktop/customers?limit=3" -H "Authorization: Bearer ${key}" -H "Svc-End-User-Id: ${file.endUserId}"
  curl -s -X POST ${url}/v1/end-users/${file.endUserId}/passthrough/ledger_desktop \\
       -H "Authorization: Bearer ${key}" -H "Content-Type: application/xml" \\
       --data '<CustomerQueryRq><MaxReturned>3</MaxReturned></CustomerQueryRq>'

API reference: ${url}/docs   OpenAPI: ${url}/openapi.json
`;
}
