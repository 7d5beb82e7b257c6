import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { openTestStore } from "../testing/harness.ts";
import type { ObservedQuery } from "./database.ts";

/**
 * The store's query observer (issue 8: the bench's SQL profile) sees every statement the service
 * runs, prepared ones included, on whichever store the suite runs on, with its duration and failures.
 */
test("the query observer reports each statement's SQL, duration and failure", async (t) => {
  const seen: ObservedQuery[] = [];
  const { store, drop } = await openTestStore({ onQuery: (query) => seen.push(query) });
  t.after(async () => {
    await store.close();
    await drop();
  });
  seen.length = 0;
  const rows = await store.db.selectFrom("projects").select("id").where("id", "=", "proj_none").execute();
  assert.deepEqual(rows, []);
  await sql`select 1 + ${41} as answer`.execute(store.db);
  await assert.rejects(sql`select * from no_such_table where id = ${1}`.execute(store.db));

  assert.equal(seen.length, 3);
  assert.match(seen[0]?.sql ?? "", /^select "id" from "projects" where "id" = \$1$/);
  assert.equal(seen[1]?.sql, "select 1 + $1 as answer");
  assert.deepEqual(
    seen.map((q) => q.failed),
    [false, false, true],
  );
  for (const query of seen) assert.ok(query.durationMs >= 0 && Number.isFinite(query.durationMs));
});
