import { Migrator, type Kysely, type Migration, type MigrationProvider } from "kysely";
import * as m0001 from "./migrations/0001-initial.ts";
import * as m0002 from "./migrations/0002-sweep-indexes.ts";
import * as m0003 from "./migrations/0003-key-mode-scope.ts";
import * as m0004 from "./migrations/0004-connector-session-protocol.ts";
import * as m0005 from "./migrations/0005-simulated-company-files.ts";
import * as m0006 from "./migrations/0006-webhooks.ts";
import * as m0008 from "./migrations/0008-instance-leases.ts";
import * as m0010 from "./migrations/0010-ledger-cursors.ts";
import * as m0011 from "./migrations/0011-change-feed.ts";
import * as m0012 from "./migrations/0012-record-write-spacing.ts";
import * as m0013 from "./migrations/0013-connection-evidence-and-retention.ts";
import * as m0014 from "./migrations/0014-batch-members.ts";
import * as m0015 from "./migrations/0015-simulated-application-edition.ts";
import * as m0016 from "./migrations/0016-request-messages.ts";
import * as m0017 from "./migrations/0017-project-standing-and-usage.ts";
import * as m0020 from "./migrations/0020-check-in-history.ts";
import * as m0021 from "./migrations/0021-connection-history-and-answers.ts";
import * as m0032 from "./migrations/0032-request-secrets.ts";
import * as m0033 from "./migrations/0033-connector-session-phases.ts";
import * as m0034 from "./migrations/0034-message-sets.ts";
import * as m0035 from "./migrations/0035-connector-interruption-evidence.ts";
import * as m0036 from "./migrations/0036-mirrors.ts";
import * as m0037 from "./migrations/0037-request-programs.ts";

/** The one ordered set of migrations, shared by PGlite and PostgreSQL. */
const migrations: Record<string, Migration> = {
  "0001-initial": m0001,
  "0002-sweep-indexes": m0002,
  "0003-key-mode-scope": m0003,
  "0004-connector-session-protocol": m0004,
  "0005-simulated-company-files": m0005,
  "0006-webhooks": m0006,
  "0008-instance-leases": m0008,
  "0010-ledger-cursors": m0010,
  "0011-change-feed": m0011,
  "0012-record-write-spacing": m0012,
  "0013-connection-evidence-and-retention": m0013,
  "0014-batch-members": m0014,
  "0015-simulated-application-edition": m0015,
  "0016-request-messages": m0016,
  "0017-project-standing-and-usage": m0017,
  "0020-check-in-history": m0020,
  "0021-connection-history-and-answers": m0021,
  "0032-request-secrets": m0032,
  "0033-connector-session-phases": m0033,
  "0034-message-sets": m0034,
  "0035-connector-interruption-evidence": m0035,
  "0036-mirrors": m0036,
  "0037-request-programs": m0037,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Applies pending migrations; throws with the failing migration's name. */
export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: "schema_migrations",
    migrationLockTableName: "schema_migrations_lock",
    // Features land in parallel with their own numbered migrations; an existing data directory may
    // already hold a later number when an earlier one arrives. Each migration is independent.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(`Migration ${failed} failed`, { cause: error });
  }
}
