import { parseArgs } from "node:util";
import { pino } from "pino";
import { loadConfig } from "./config.ts";
import type { Deps } from "./deps.ts";
import { systemClock } from "./platform/clock.ts";
import { openStore } from "./store/database.ts";
import { listApiKeys, listProjects, revokeApiKey } from "./store/projects.ts";
import { createApiKey, createProject } from "./tenancy/api-keys.ts";

/**
 * Operator CLI: `ledger-bridge projects create|list`, `ledger-bridge keys create|list|revoke`.
 * Secrets are printed once and never stored in clear.
 */
const USAGE = `Usage:
  ledger-bridge projects create --name NAME [--organization ORG]
  ledger-bridge projects list
  ledger-bridge keys create --project PROJECT_ID [--kind secret|publishable] [--mode live|test] [--read-only]
  ledger-bridge keys list --project PROJECT_ID
  ledger-bridge keys revoke --project PROJECT_ID --key KEY_ID`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: "string" },
      organization: { type: "string" },
      project: { type: "string" },
      kind: { type: "string", default: "secret" },
      mode: { type: "string", default: "live" },
      "read-only": { type: "boolean", default: false },
      key: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [noun, verb] = positionals;
  if (values.help || !noun || !verb) {
    console.log(USAGE);
    return values.help ? 0 : 1;
  }
  const config = loadConfig();
  const store = await openStore({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  const deps: Deps = { config, store, db: store.db, clock: systemClock, logger: pino({ level: "silent" }) };
  try {
    if (noun === "projects" && verb === "create") {
      if (!values.name) throw new Error("--name is required");
      const created = await createProject(deps, {
        name: values.name,
        ...(values.organization ? { organization: values.organization } : {}),
      });
      console.log(JSON.stringify({ project: created.project, keys: created.keys }, null, 2));
      console.error("Store these keys now: they are shown once.");
    } else if (noun === "projects" && verb === "list") {
      console.log(JSON.stringify(await listProjects(deps.db), null, 2));
    } else if (noun === "keys" && verb === "create") {
      if (!values.project) throw new Error("--project is required");
      if (values.kind !== "secret" && values.kind !== "publishable")
        throw new Error("--kind must be secret or publishable");
      if (values.mode !== "live" && values.mode !== "test") throw new Error("--mode must be live or test");
      const created = await createApiKey(deps, values.project, {
        kind: values.kind,
        mode: values.mode,
        readOnly: values["read-only"],
      });
      console.log(
        JSON.stringify({ id: created.key.id, key: created.secret, readOnly: created.key.readOnly }, null, 2),
      );
      console.error("Store this key now: it is shown once.");
    } else if (noun === "keys" && verb === "list") {
      if (!values.project) throw new Error("--project is required");
      console.log(JSON.stringify(await listApiKeys(deps.db, values.project), null, 2));
    } else if (noun === "keys" && verb === "revoke") {
      if (!values.project || !values.key) throw new Error("--project and --key are required");
      const done = await revokeApiKey(deps.db, values.project, values.key, new Date(systemClock.now()));
      console.log(done ? "revoked" : "no such active key");
      if (!done) return 1;
    } else {
      console.log(USAGE);
      return 1;
    }
    return 0;
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
