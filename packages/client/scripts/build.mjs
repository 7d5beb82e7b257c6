#!/usr/bin/env node
/**
 * `npm run build` in packages/client (or `npm run build:client` at the root): compiles `src/` to
 * `dist/` (JavaScript and declarations) with the repository's TypeScript, then copies the generated
 * declaration files (`openapi.d.ts`, `resources.d.ts`), which tsc reads but does not emit. Plain JavaScript: it needs only `typescript`.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc");
const started = performance.now();
rmSync(join(HERE, "dist"), { recursive: true, force: true });
const result = spawnSync(process.execPath, [tsc, "-p", join(HERE, "tsconfig.build.json")], {
  cwd: HERE,
  stdio: "inherit",
});
if (result.status !== 0) {
  process.stderr.write(`tsc failed (exit ${result.status ?? result.signal})\n`);
  process.exit(1);
}
mkdirSync(join(HERE, "dist", "generated"), { recursive: true });
for (const name of ["openapi.d.ts", "resources.d.ts"]) {
  copyFileSync(join(HERE, "src", "generated", name), join(HERE, "dist", "generated", name));
}
process.stderr.write(
  `Compiled packages/client to dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
);
