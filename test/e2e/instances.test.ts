import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { FakeClock } from "../../src/platform/clock.ts";
import { recoverDeadInstances, INSTANCE_GONE_TEXT } from "../../src/requests/instances.ts";
import type { ApplicationSession } from "../../src/simulator/application.ts";
import { openSessions } from "../../src/store/connector-sessions.ts";
import type { Store } from "../../src/store/database.ts";
import { openTestStore } from "../../src/testing/harness.ts";
import { SoapByHand } from "../../src/testing/soap-by-hand.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { customerAdd, eventually, json, READ, type RequestResource } from "./helpers.ts";

/**
 * Two service instances on one store (issue 8 §2): each test starts instance A with a connector
 * session holding a request `sent`, then a second instance B on the same store and the same
 * FakeClock. Recovery touches only the sessions of an instance whose lease ran out or was released,
 * never a live neighbour's. (Before leases, any instance that started closed every open session
 * and turned every `sent` request into `outcome_unknown`, discarding the answers that then arrived.)
 */
const LEASE_MS = 30_000;
const CONFIG = {
  CONNECTOR_HOLD_MS: "150",
  RATE_LIMIT_MAX: "1000000",
  INSTANCE_LEASE_MS: String(LEASE_MS),
  // The offline window is not under test: jumps of the fake clock must not make the connector look away.
  CONNECTION_OFFLINE_AFTER_MS: "86400000",
  CONNECTOR_TICKET_TTL_MS: "86400000",
  CONNECTOR_IDLE_CLOSE_MS: "86400000",
};

let store: Store;
let drop: () => Promise<void>;
before(async () => {
  ({ store, drop } = await openTestStore());
});
after(async () => {
  await store.close();
  await drop();
});

interface InFlight {
  a: System;
  clock: FakeClock;
  eu: ConnectedEndUser;
  hand: SoapByHand;
  ticket: string;
  requestId: string;
  /** The document instance A handed to the connector. */
  xml: string;
}

let files = 0;
/** Instance A, a connector session on it, and a request handed over (`sent`) on that session. */
async function inFlightOnA(body: string, clock = new FakeClock(Date.now())): Promise<InFlight> {
  const a = await startSystem(null, { store, clock, config: CONFIG });
  files += 1;
  const eu = await a.connectEndUser({ companyName: `Instance Co ${files}` });
  const hand = SoapByHand.for(a, eu);
  const ticket = await hand.ticket();
  assert.equal(await hand.send(ticket, eu.companyFilePath), "", "company file accepted, nothing queued");
  const queued = await a.call("POST", `/v1/end-users/${eu.endUserId}/passthrough/ledger_desktop`, {
    body,
    headers: { prefer: "respond-async" },
  });
  assert.equal(queued.status, 202, await queued.clone().text());
  const requestId = (await json<{ id: string }>(queued)).id;
  const xml = await hand.send(ticket, eu.companyFilePath);
  assert.match(xml, /Rq/, "the request was handed over");
  assert.equal((await status(a, a, requestId)).status, "sent");
  return { a, clock, eu, hand, ticket, requestId, xml };
}

async function status(on: System, owner: System, id: string): Promise<RequestResource> {
  return json<RequestResource>(
    await on.call("GET", `/v1/requests/${id}`, { key: owner.project.keys.secretLive }),
  );
}

async function application(f: InFlight): Promise<ApplicationSession> {
  const opened = await f.a.ledger.beginSession({
    companyFilePath: f.eu.companyFilePath,
    appName: "hand",
    ownerId: "{00000000-0000-0000-0000-000000000001}",
    fileId: "{00000000-0000-0000-0000-000000000002}",
    stampFileId: false,
  });
  assert.ok(opened.ok);
  return opened.session;
}

async function answer(f: InFlight): Promise<string> {
  const result = await (await application(f)).processRequest(f.xml);
  assert.ok(result.ok, JSON.stringify(result));
  return result.response;
}

async function leaseOf(sys: System): Promise<Date> {
  const row = await store.db
    .selectFrom("service_instances")
    .select("lease_expires_at")
    .where("id", "=", sys.deps.instanceId)
    .executeTakeFirstOrThrow();
  return row.lease_expires_at;
}

void describe("instance leases on a shared store", () => {
  it("a second instance starting leaves the first's session and sent write alone; the answer completes it", async () => {
    const f = await inFlightOnA(customerAdd("Neighbour Ltd"));
    const b = await startSystem(null, { store, clock: f.clock, config: CONFIG });
    try {
      assert.ok(!b.instance.startup.instances.includes(f.a.deps.instanceId), "A is alive");
      assert.equal((await status(b, f.a, f.requestId)).status, "sent", "B sees A's request untouched");
      assert.equal((await openSessions(store.db, f.eu.connectionId)).length, 1, "A's session is open");
      const before = f.a.ledger.companyFile(f.eu.companyFilePath).count("Customer");
      assert.equal(await f.hand.receive(f.ticket, await answer(f)), 50, "A accepts the answer");
      const done = await status(b, f.a, f.requestId);
      assert.equal(done.status, "succeeded");
      assert.equal(done.outcome, "applied");
      assert.equal(f.a.ledger.companyFile(f.eu.companyFilePath).count("Customer"), before + 1);
    } finally {
      await b.close();
      await f.a.close();
    }
  });

  it("a renewing instance is never recovered, however long it lives beside another", async () => {
    const f = await inFlightOnA(READ);
    const b = await startSystem(null, { store, clock: f.clock, config: CONFIG });
    try {
      // Ten leases pass in steps of a third of one; each step both instances renew and look for the dead.
      for (let step = 0; step < 30; step++) {
        // Both keepers (and both sweepers) asleep again, so that this step wakes each keeper.
        await f.clock.untilSleepers(4);
        const expected = f.clock.now() + LEASE_MS / 3 + LEASE_MS;
        await f.clock.advance(LEASE_MS / 3);
        await eventually("both leases renewed", async () => {
          const [leaseA, leaseB] = [await leaseOf(f.a), await leaseOf(b)];
          return leaseA.getTime() === expected && leaseB.getTime() === expected;
        });
      }
      assert.equal((await status(b, f.a, f.requestId)).status, "sent");
      assert.equal((await openSessions(store.db, f.eu.connectionId)).length, 1);
    } finally {
      await b.close();
      await f.a.close();
    }
  });

  it("a crashed instance's session is recovered once its lease runs out: write outcome_unknown, ticket dead", async () => {
    const f = await inFlightOnA(customerAdd("Crashed Ltd"));
    await f.a.instance.stop({ release: false });
    const b = await startSystem(null, { store, clock: f.clock, config: CONFIG });
    try {
      assert.ok(!b.instance.startup.instances.includes(f.a.deps.instanceId), "A's lease still runs");
      await f.clock.advance(LEASE_MS / 3);
      assert.equal((await status(b, f.a, f.requestId)).status, "sent", "within the lease: untouched");
      // B's keeper renews after that step and then sleeps again; advancing before it sleeps would put
      // its next wake a third of a lease past the new time, which the test never reaches. A's sweeper
      // and B's keeper and sweeper: three sleepers.
      await f.clock.untilSleepers(3);
      await f.clock.advance(LEASE_MS);
      const unknown = await eventually("A recovered by B", async () => {
        const r = await status(b, f.a, f.requestId);
        return r.status === "outcome_unknown" ? r : null;
      });
      assert.equal(unknown.error?.code, "LEDGER_WRITE_OUTCOME_UNKNOWN");
      assert.equal((await openSessions(store.db, f.eu.connectionId)).length, 0);
      // The connector's next call on the dead session is told to stop, whichever instance it reaches.
      assert.equal(await SoapByHand.for(b, f.eu).send(f.ticket, f.eu.companyFilePath), "");
      assert.equal(await SoapByHand.for(b, f.eu).lastError(f.ticket), INSTANCE_GONE_TEXT);
    } finally {
      await b.close();
      await f.a.close();
    }
  });

  it("a gracefully stopped instance is recovered at the neighbour's next pass; a read fails LEDGER_READ_INTERRUPTED", async () => {
    const f = await inFlightOnA(READ);
    const b = await startSystem(null, { store, clock: f.clock, config: CONFIG });
    try {
      await f.a.instance.stop({ release: true });
      await f.clock.advance(LEASE_MS / 3);
      const failed = await eventually("A recovered by B", async () => {
        const r = await status(b, f.a, f.requestId);
        return r.status === "failed" ? r : null;
      });
      assert.equal(failed.error?.code, "LEDGER_READ_INTERRUPTED");
      assert.equal(failed.outcome, "not_applicable");
    } finally {
      await b.close();
      await f.a.close();
    }
  });

  it("a session whose connector moved to a live instance survives the death of the first", async () => {
    const f = await inFlightOnA(customerAdd("Moved Ltd"));
    const b = await startSystem(null, { store, clock: f.clock, config: CONFIG });
    try {
      // The connector's next call (the answer) reaches B, which now holds the session.
      const before = f.a.ledger.companyFile(f.eu.companyFilePath).count("Customer");
      const onB = SoapByHand.for(b, f.eu);
      await f.a.instance.stop({ release: true });
      assert.equal(await onB.receive(f.ticket, await answer(f)), 50);
      await f.clock.advance(LEASE_MS / 3);
      await eventually("A recovered", async () => {
        const row = await store.db
          .selectFrom("service_instances")
          .select("recovered_at")
          .where("id", "=", f.a.deps.instanceId)
          .executeTakeFirstOrThrow();
        return row.recovered_at !== null;
      });
      assert.equal((await status(b, f.a, f.requestId)).status, "succeeded");
      assert.equal((await openSessions(store.db, f.eu.connectionId)).length, 1, "B's session goes on");
      assert.equal(f.a.ledger.companyFile(f.eu.companyFilePath).count("Customer"), before + 1);
    } finally {
      await b.close();
      await f.a.close();
    }
  });

  it("two instances recovering the same dead one at once: each session and request is handled once", async () => {
    const f = await inFlightOnA(customerAdd("Contended Ltd"));
    await f.a.instance.stop({ release: true });
    const b = await startSystem(null, { store, clock: f.clock, config: CONFIG });
    const c = await startSystem(null, { store, clock: f.clock, config: CONFIG });
    try {
      // B started after A released: its start-up recovery already claimed A; run two more passes at once.
      const [again1, again2] = await Promise.all([
        recoverDeadInstances(b.deps),
        recoverDeadInstances(c.deps),
      ]);
      const claims = [b.instance.startup, c.instance.startup, again1, again2].filter((r) =>
        r.instances.includes(f.a.deps.instanceId),
      );
      assert.equal(claims.length, 1, "exactly one recoverer claimed A");
      const timeline = (await status(b, f.a, f.requestId)) as RequestResource & {
        timeline: { status: string }[];
      };
      assert.equal(timeline.status, "outcome_unknown");
      assert.equal(timeline.timeline.filter((e) => e.status === "outcome_unknown").length, 1);
    } finally {
      await c.close();
      await b.close();
      await f.a.close();
    }
  });
});
