import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Deps } from "../deps.ts";
import { createProject, type Principal } from "../tenancy/api-keys.ts";
import { createAuthSession, loadSetup } from "../tenancy/auth-sessions.ts";
import { createEndUser } from "../tenancy/end-users.ts";
import { findConnectionForEndUser } from "../store/connections.ts";
import { findProject } from "../store/projects.ts";
import type { SimulationHost } from "./host.ts";

/**
 * Demo data for `npm start`: one project whose keys are kept in `<DATA_DIR>/demo.json` (a dev
 * convenience, so every start prints the same working keys), and one end user whose company file
 * is simulated. The first start sets the simulated Web Connector up through a real auth session
 * (its `.qwc` and password); later starts find it among the simulated end users the host restored,
 * with the company file as it was left.
 */
interface DemoFile {
  projectId: string;
  organization: string;
  endUserId: string;
  keys: { secretLive: string; secretTest: string; publishableLive: string; publishableTest: string };
}

export interface Demo {
  file: DemoFile;
  banner: string;
}

async function loadOrCreate(deps: Deps): Promise<DemoFile> {
  const dir = deps.config.DATABASE_URL ? join(deps.config.DATA_DIR, "postgres-demo") : deps.config.DATA_DIR;
  const path = join(dir, "demo.json");
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
  mkdirSync(dir, { recursive: true });
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
  const file = await loadOrCreate(deps);
  const online = await connectSimulator(deps, host, file);
  const url = deps.config.publicUrl;
  const key = file.keys.secretLive;
  const banner = `
ledger-bridge is running at ${url}  (store: ${deps.store.engine}, simulator: on)

  Project           ${file.projectId}
  Secret key        ${key}
  Test secret key   ${file.keys.secretTest}
  Publishable key   ${file.keys.publishableLive}
  Test publishable  ${file.keys.publishableTest}
  Demo end user     ${file.endUserId}  (simulated company file "Demo Company"${online ? "" : ", not connected yet"})

Try it:
  curl -s ${url}/v1/end-users -H "Authorization: Bearer ${key}"
  curl -s ${url}/v1/ledger-desktop/health-check -H "Authorization: Bearer ${key}" -H "Svc-End-User-Id: ${file.endUserId}"
  curl -s "${url}/v1/ledger-desktop/customers?limit=3" -H "Authorization: Bearer ${key}" -H "Svc-End-User-Id: ${file.endUserId}"
  curl -s -X POST ${url}/v1/end-users/${file.endUserId}/passthrough/ledger_desktop \\
       -H "Authorization: Bearer ${key}" -H "Content-Type: application/xml" \\
       --data '<CustomerQueryRq><MaxReturned>3</MaxReturned></CustomerQueryRq>'

API reference: ${url}/docs   OpenAPI: ${url}/openapi.json
`;
  return { file, banner };
}
