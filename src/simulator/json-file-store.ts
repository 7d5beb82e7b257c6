import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { CompanyFileStore } from "./ledger/persisted-application.ts";
import type { CompanyFileSnapshot } from "./ledger/snapshot.ts";

/**
 * A company file kept as one JSON file on disk (the standalone simulator's `--file`). Each save
 * writes a temporary file and renames it over the old one, so a crash leaves the previous or the
 * new version, never half of one.
 */
export class JsonFileStore implements CompanyFileStore {
  constructor(readonly path: string) {}

  /** The stored snapshot data, or null when the file does not exist yet. */
  load(): unknown {
    try {
      return JSON.parse(readFileSync(this.path, "utf8")) as unknown;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  }

  async save(snapshot: CompanyFileSnapshot): Promise<void> {
    mkdirSync(dirname(this.path), { recursive: true });
    const temp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(snapshot), { mode: 0o600 });
    renameSync(temp, this.path);
  }
}
