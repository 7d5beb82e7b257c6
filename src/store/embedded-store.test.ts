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

/**
 * Values bound to the embedded store's prepared statements (decision 0035: the dialect writes the
 * Bind message itself) arrive exactly as given: every kind the service binds, multi-byte text,
 * empty strings, nulls, and a value of megabytes.
 */
test("values bound to prepared statements arrive as given", async () => {
  const store = await openStore({});
  try {
    const large = "x€😀\n".repeat(300_000);
    const at = new Date("2026-11-02T10:00:00.123Z");
    const { rows } = await sql<{
      text: string;
      empty: string;
      none: string | null;
      n: number;
      flag: boolean;
      at: Date;
      doc: unknown;
      length: number;
    }>`select ${"héllo ✓ 😀"}::text as text, ${""}::text as empty, ${null}::text as none,
        ${42}::integer as n, ${true}::boolean as flag, ${at}::timestamptz as at,
        ${JSON.stringify({ a: ["b", 1, null] })}::json as doc, length(${large}::text) as length`.execute(
      store.db,
    );
    assert.deepEqual(rows[0], {
      text: "héllo ✓ 😀",
      empty: "",
      none: null,
      n: 42,
      flag: true,
      at,
      doc: { a: ["b", 1, null] },
      length: [...large].length,
    });
  } finally {
    await store.close();
  }
});
