import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The shared reference material (`../shared/reference` beside the repository), resolved from this
 * file so that tests work in any checkout layout. Research material is read in place, never copied
 * into the repository.
 */
export const REFERENCE_ROOT = fileURLToPath(new URL("../../../shared/reference", import.meta.url));

/**
 * The path of a reference file found by name in the folders of the reference root (files are
 * looked up by name so that no vendor folder name has to appear in our sources); throws with a
 * clear message when the reference material is absent.
 */
export function referenceFile(name: string): string {
  const folders = existsSync(REFERENCE_ROOT) ? readdirSync(REFERENCE_ROOT) : [];
  const found = folders.map((folder) => join(REFERENCE_ROOT, folder, name)).find((path) => existsSync(path));
  if (!found) throw new Error(`reference file ${name} not found under ${REFERENCE_ROOT}`);
  return found;
}
