#!/usr/bin/env node
// The operator CLI, compiled (dist/cli.js), as `npm start` runs the compiled service. In a checkout
// it first rebuilds dist/ if the sources changed (scripts/build.mjs); an image has no sources and
// runs its dist/ as built. `npm run cli -- …` runs the sources through tsx instead.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const builder = join(root, "scripts", "build.mjs");
if (existsSync(builder)) {
  const { buildIfStale } = await import(pathToFileURL(builder).href);
  try {
    buildIfStale();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
await import(pathToFileURL(join(root, "dist", "cli.js")).href);
