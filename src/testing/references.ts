import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";

/**
 * `../shared` beside the repository (the spec, the guides and the reference material), resolved
 * from this file so that tests and scripts work in any checkout layout (a worktree included).
 */
export const SHARED_ROOT = fileURLToPath(new URL("../../../shared", import.meta.url));

/**
 * The shared reference material (`../shared/reference`). Research material is read in place, never
 * copied into the repository (the application's schema files are licensed).
 */
export const REFERENCE_ROOT = join(SHARED_ROOT, "reference");

/**
 * A reference file or folder found by name in the folders of the reference root (looked up by name
 * so that no vendor folder name has to appear in our sources), or undefined when it is not there.
 */
export function findReference(name: string, root = REFERENCE_ROOT): string | undefined {
  const folders = existsSync(root) ? readdirSync(root) : [];
  return folders
    .map((folder) => join(root, folder))
    .filter((folder) => statSync(folder).isDirectory())
    .map((folder) => join(folder, name))
    .find((path) => existsSync(path));
}

/** Whether the tests run under CI: `CI` set to anything but empty, `0` or `false` (`.ci/run` sets `CI=true`). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim() ?? "";
  return value !== "" && value !== "0" && value.toLowerCase() !== "false";
}

/**
 * The rule for a check that needs material from outside the repository (the spec, the reference
 * captures and schemas): it runs when the material is there; when it is not, it fails under CI,
 * where a missing reference must never pass silently, and is skipped on a developer's machine.
 */
export function referenceRule(
  present: boolean,
  env: NodeJS.ProcessEnv = process.env,
): "run" | "fail" | "skip" {
  if (present) return "run";
  return inCi(env) ? "fail" : "skip";
}

export interface NeededReference {
  /** What the check needs, for the message: "the SDK's XSDs". */
  what: string;
  /** Where it was looked for; undefined when a search by name found nothing. */
  path: string | undefined;
  /** How to provide it elsewhere: "set LEDGER_SCHEMA_DIR". */
  hint?: string;
}

/**
 * The one way a test needs reference material ({@link referenceRule}): returns the path when it
 * exists; when it does not, throws under CI (the test fails with the message) or skips the test
 * with the message and returns null, so the test returns at once.
 */
export function needReference(
  t: Pick<TestContext, "skip">,
  needed: NeededReference,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  const present = needed.path !== undefined && existsSync(needed.path);
  const rule = referenceRule(present, env);
  if (rule === "run") return needed.path ?? null;
  const where = needed.path ?? `any folder of ${REFERENCE_ROOT}`;
  const message = `${needed.what} not found at ${where}${needed.hint ? ` (${needed.hint})` : ""}`;
  if (rule === "fail") throw new Error(`${message}; under CI (CI=${env.CI ?? ""}) this check must run`);
  t.skip(`${message}; skipped outside CI`);
  return null;
}
