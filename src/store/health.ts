import { sql } from "kysely";
import type { Db } from "./database.ts";

/** Runs the cheapest statement on the store: it answers only if the store can serve queries. */
export async function pingStore(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
