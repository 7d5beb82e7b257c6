import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { sql } from "kysely";
import { loadConfig } from "../config.ts";
import { EMBEDDED_SHARED_BUFFERS_MB, openStore, type Store } from "./database.ts";

/**
 * The embedded store's weight (decision 0024): PGlite runs with a small shared buffer pool instead
 * of its 128 MB default, and a new data directory is created in a child process before the service
 * opens it. These run on PGlite whichever store the suite runs on: they are about PGlite.
 */

async function setting(store: Store, name: string): Promise<string> {
  const { rows } = await sql<{ value: string }>`select current_setting(${name}) as value`.execute(store.db);
  return rows[0]?.value ?? "";
}

test("the embedded store's shared buffer pool is the configuration's, 16 MB unless set", async () => {
  assert.equal(EMBEDDED_SHARED_BUFFERS_MB, 16);
  assert.equal(loadConfig({}).STORE_EMBEDDED_SHARED_BUFFERS_MB, 16);
  assert.equal(loadConfig({ STORE_EMBEDDED_SHARED_BUFFERS_MB: "48" }).STORE_EMBEDDED_SHARED_BUFFERS_MB, 48);
  assert.throws(() => loadConfig({ STORE_EMBEDDED_SHARED_BUFFERS_MB: "0" }));

  const byDefault = await openStore({});
  try {
    assert.equal(await setting(byDefault, "shared_buffers"), "16MB");
  } finally {
    await byDefault.close();
  }
  const larger = await openStore({ sharedBuffersMb: 48 });
  try {
    assert.equal(await setting(larger, "shared_buffers"), "48MB");
    // PGlite's own start parameters are kept.
    assert.equal(await setting(larger, "search_path"), "public");
  } finally {
    await larger.close();
  }
});

test("a new data directory is created, then reopened with its data and settings", async (t) => {
  const dataDir = join(mkdtempSync(join(tmpdir(), "lb-embedded-")), "store");
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));

  const first = await openStore({ dataDir, sharedBuffersMb: 24 });
  try {
    assert.ok(existsSync(join(dataDir, "PG_VERSION")), "the data directory holds a database");
    assert.equal(await setting(first, "shared_buffers"), "24MB");
    await sql`insert into projects (id, name, organization, created_at)
              values ('proj_embedded', 'Kept', 'org_embedded', now())`.execute(first.db);
  } finally {
    await first.close();
  }

  const again = await openStore({ dataDir });
  try {
    assert.equal(await setting(again, "shared_buffers"), "16MB");
    const rows = await again.db.selectFrom("projects").select(["id", "name"]).execute();
    assert.deepEqual(rows, [{ id: "proj_embedded", name: "Kept" }]);
  } finally {
    await again.close();
  }
});
