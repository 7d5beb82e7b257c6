import type { Deps } from "../deps.ts";
import { allSentRequests } from "../store/requests.ts";
import { interruptSent } from "./engine.ts";

/**
 * After a crash (`kill -9`) no session survives: requests that were `sent` lost their answer path.
 * Writes become `outcome_unknown` and are recovered at the connection's next session; reads fail
 * with LEDGER_READ_INTERRUPTED. Nothing is re-sent. Open connector sessions are closed so the
 * connector re-authenticates.
 *
 * With several instances on one PostgreSQL this runs only for sessions no live instance holds; a
 * single instance owns everything, so it runs at every start (see docs/architecture.md).
 */
export async function recoverAfterRestart(deps: Deps): Promise<number> {
  const sent = await allSentRequests(deps.db);
  for (const row of sent)
    await interruptSent(deps, row, "The service restarted while the request was in flight");
  await deps.db
    .updateTable("connector_sessions")
    .set({ state: "closed", closed_at: new Date(deps.clock.now()) })
    .where("state", "=", "open")
    .execute();
  return sent.length;
}
