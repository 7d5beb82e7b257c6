import { sql } from "kysely";
import type { Db } from "../../src/store/database.ts";

/**
 * Every table of the store, every row, as JSON text: what a dump of the store holds (decision 0032's
 * tests grep it for secrets).
 */
export async function storeDump(db: Db): Promise<string> {
  const tables = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`.execute(db);
  const parts: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await sql<{
      row: string;
    }>`select row_to_json(t)::text as row from ${sql.table(name)} t`.execute(db);
    parts.push(`-- ${name}`, ...rows.rows.map((r) => r.row));
  }
  return parts.join("\n");
}
