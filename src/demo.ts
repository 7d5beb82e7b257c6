import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Deps } from "./deps.ts";
import { SimulatedLedgerApplication } from "./simulator/ledger/index.ts";
import { SimulatedWebConnector } from "./simulator/web-connector.ts";
import { createProject, type Principal } from "./tenancy/api-keys.ts";
import { createAuthSession, loadSetup, qwcForSetup } from "./tenancy/auth-sessions.ts";
import { createEndUser } from "./tenancy/end-users.ts";
import { findProject } from "./store/projects.ts";

/**
 * Demo data for `npm start`: one project whose keys are kept in `<DATA_DIR>/demo.json` (a dev
 * convenience, so every start prints the same working keys), and one end user whose company file
 * is simulated: a simulated Web Connector is set up through a real auth session (its `.qwc` and
 * password) and checks in over HTTP like the real one.
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
  stop: () => Promise<void>;
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

/** Connects the demo end user's simulated company file through a fresh auth session. */
async function connectSimulator(deps: Deps, file: DemoFile): Promise<SimulatedWebConnector> {
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
  const ledger = new SimulatedLedgerApplication({ xmlVersion: "16.0" });
  ledger.createCompanyFile("C:\\Company Files\\Demo Company.qbw", {
    companyName: "Demo Company",
    seed: "sample",
  });
  const connector = new SimulatedWebConnector({
    qwc: qwcForSetup(deps, setup.connection, "Demo Company"),
    password: setup.password,
    application: ledger,
  });
  connector.start();
  return connector;
}

export async function seedDemo(deps: Deps): Promise<Demo> {
  const file = await loadOrCreate(deps);
  const connector = await connectSimulator(deps, file);
  const url = deps.config.publicUrl;
  const key = file.keys.secretLive;
  const banner = `
ledger-bridge is running at ${url}  (store: ${deps.store.engine}, simulator: on)

  Project           ${file.projectId}
  Secret key        ${key}
  Test secret key   ${file.keys.secretTest}
  Publishable key   ${file.keys.publishableLive}
  Demo end user     ${file.endUserId}  (simulated company file "Demo Company")

Try it:
  curl -s ${url}/v1/end-users -H "Authorization: Bearer ${key}"
  curl -s ${url}/v1/ledger-desktop/health-check -H "Authorization: Bearer ${key}" -H "Svc-End-User-Id: ${file.endUserId}"
  curl -s -X POST ${url}/v1/end-users/${file.endUserId}/passthrough/ledger_desktop \\
       -H "Authorization: Bearer ${key}" -H "Content-Type: application/xml" \\
       --data '<CustomerQueryRq><MaxReturned>3</MaxReturned></CustomerQueryRq>'

API reference: ${url}/docs   OpenAPI: ${url}/openapi.json
`;
  return { file, banner, stop: () => connector.stop() };
}
