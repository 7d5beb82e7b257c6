import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Deps } from "./deps.ts";
import { createProject } from "./tenancy/api-keys.ts";
import { createEndUser } from "./tenancy/end-users.ts";
import { findProject } from "./store/projects.ts";

/**
 * Demo data for `npm start`: one project whose keys are kept in `<DATA_DIR>/demo.json` (a dev
 * convenience, so every start prints the same working keys) and one end user.
 */
interface DemoFile {
  projectId: string;
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
  const endUser = await createEndUser(deps, created.project.id, {
    companyName: "Demo Company",
    sourceId: "demo-1",
    email: null,
  });
  const file: DemoFile = { projectId: created.project.id, endUserId: endUser.id, keys: created.keys };
  mkdirSync(dir, { recursive: true });
  writeFileSync(path, JSON.stringify(file, null, 2), { mode: 0o600 });
  return file;
}

export async function seedDemo(deps: Deps): Promise<Demo> {
  const file = await loadOrCreate(deps);
  const url = deps.config.publicUrl;
  const banner = `
ledger-bridge is running at ${url}  (store: ${deps.store.engine})

  Project           ${file.projectId}
  Secret key        ${file.keys.secretLive}
  Test secret key   ${file.keys.secretTest}
  Publishable key   ${file.keys.publishableLive}
  Demo end user     ${file.endUserId}

Try it:
  curl -s ${url}/v1/end-users -H "Authorization: Bearer ${file.keys.secretLive}"

API reference: ${url}/docs   OpenAPI: ${url}/openapi.json
`;
  return { file, banner, stop: async () => {} };
}
