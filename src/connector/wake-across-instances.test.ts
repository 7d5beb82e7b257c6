import assert from "node:assert/strict";
import { test } from "node:test";
import { FakeClock } from "../platform/clock.ts";
import { openStore } from "../store/database.ts";
import { openTestStore } from "../testing/harness.ts";
import { SoapByHand } from "../testing/soap-by-hand.ts";
import { startSystem, type System } from "../testing/system.ts";
import { SessionMemory } from "./session/memory.ts";
import { getLastError, sendRequestXML, type ConnectorContext, type SendRequestInput } from "./session.ts";

/**
 * Two service instances on one store (decision 0023): a connector's session is quiet on instance A
 * (its re-ask held from memory, without a store call), and a Request submitted through instance B
 * wakes A's held call, which hands it over. The hold's clock is injected and never moves once the
 * re-ask is held, so only the wake-up can end it.
 */
const HOLD_MS = 100_000;
const CONFIG = { CONNECTOR_HOLD_MS: String(HOLD_MS), RATE_LIMIT_MAX: "1000000" };
const READ = `<?xml version="1.0"?><?qbxml version="16.0"?><QBXML><QBXMLMsgsRq onError="stopOnError"><CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq></QBXMLMsgsRq></QBXML>`;

async function quietCalls(sys: System): Promise<number> {
  return (await sys.deps.metrics.connectorQuietCalls.get()).values[0]?.value ?? 0;
}

test("a quiet session's held call on one instance is woken by a submission on another", async (t) => {
  const opened = await openTestStore();
  // On PostgreSQL, B has a store (pool and LISTEN connection) of its own, as another process would:
  // the wake-up reaches A only through NOTIFY. PGlite serves one process: both share its store.
  const storeB = opened.url ? await openStore({ databaseUrl: opened.url }) : opened.store;
  const a = await startSystem(null, { store: opened.store, config: CONFIG });
  const b = await startSystem(null, { store: storeB, config: CONFIG });
  t.after(async () => {
    await b.close();
    await a.close();
    if (storeB !== opened.store) await storeB.close();
    await opened.store.close();
    await opened.drop();
  });
  const holdClock = new FakeClock();
  const ctx: ConnectorContext = {
    deps: a.deps,
    shutdown: new AbortController().signal,
    held: new Set(),
    memory: new SessionMemory(a.deps.store.notifier),
    holdClock,
  };
  const eu = await a.connectEndUser({ companyName: "Two Instances Co" });
  const ticket = await SoapByHand.for(a, eu).ticket();
  const input: SendRequestInput = {
    ticket,
    hcp: "",
    companyFileName: eu.companyFilePath,
    country: "US",
    major: "16",
    minor: "0",
  };
  // The first hold on A: the company file is accepted, nothing is queued; it ends at the limit.
  const first = sendRequestXML(ctx, input, new AbortController().signal);
  await holdClock.untilSleepers(1);
  await holdClock.advance(HOLD_MS);
  assert.equal(await first, "");
  assert.equal(await getLastError(ctx, ticket), "NoOp");

  // The re-ask is memory: held from memory. B queues a request for the same end user.
  const before = await quietCalls(a);
  const held = sendRequestXML(ctx, input, new AbortController().signal);
  await holdClock.untilSleepers(1);
  assert.equal((await quietCalls(a)) - before, 1, "the re-ask was held without the store");
  const queued = await b.call("POST", `/v1/end-users/${eu.endUserId}/passthrough/ledger_desktop`, {
    key: a.project.keys.secretLive,
    body: READ,
    headers: { prefer: "respond-async" },
  });
  assert.equal(queued.status, 202, await queued.clone().text());
  assert.match(await held, /CustomerQueryRq/, "A's held call handed over the request B queued");
});
