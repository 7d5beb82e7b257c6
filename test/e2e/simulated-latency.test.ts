import assert from "node:assert/strict";
import { test } from "node:test";
import { FakeClock } from "../../src/platform/clock.ts";
import { pumpClock } from "../../src/testing/clock-pump.ts";
import { watchApplication } from "../../src/testing/application-watch.ts";
import { startSystem, type System } from "../../src/testing/system.ts";
import { bringOnline } from "./helpers.ts";

/**
 * A simulated end user as slow as its latency profile says (decision 0034), through the whole
 * system: HTTP API → Request → held `sendRequestXML` → connector → application → answer. The
 * simulator's delays run on their own FakeClock, moved from one pending delay to the next, so the
 * time a call takes on it is exactly the delays it went through: nothing sleeps.
 */
/** When each connector call reached the service (the endpoint counts it), on the simulator's clock. */
function connectorArrivals(sys: System, clock: FakeClock): Array<{ method: string; at: number }> {
  const arrivals: Array<{ method: string; at: number }> = [];
  const calls = sys.deps.metrics.connectorCalls;
  const count = calls.inc.bind(calls);
  calls.inc = ((labels: { method: string }) => {
    arrivals.push({ method: labels.method, at: clock.now() });
    count(labels);
  }) as typeof calls.inc;
  return arrivals;
}

test("a sync call's time is the hand-over's leg, the application's work and the answer's leg", async (t) => {
  const latencyClock = new FakeClock();
  const profile = { soapCallMs: 80, messageSetMs: 150, requestMs: 30, recordMs: 2 };
  const sys = await startSystem(t, { latency: { profile, clock: latencyClock } });
  const processed: Array<{ xml: string; startedAt: number; endedAt: number }> = [];
  watchApplication(sys, (xml) => {
    const startedAt = latencyClock.now();
    return () => processed.push({ xml, startedAt, endedAt: latencyClock.now() });
  });
  const arrivals = connectorArrivals(sys, latencyClock);

  const eu = await sys.connectEndUser({ companyName: "Paced Books" });
  const checkInStart = latencyClock.now();
  await pumpClock(latencyClock, bringOnline(sys, eu));
  // The check-in: serverVersion, clientVersion, authenticate, each a whole round trip, then the
  // first sendRequestXML (with the company file report) half of one; it is now held by the service.
  assert.deepEqual(
    arrivals.map((a) => [a.method, a.at - checkInStart]),
    [
      ["serverVersion", 40],
      ["clientVersion", 120],
      ["authenticate", 200],
      ["sendRequestXML", 280],
    ],
  );
  assert.equal(eu.connector.callInFlight, "sendRequestXML");
  assert.equal(latencyClock.sleeperCount, 0, "nothing of the simulator is waiting: the call is held");

  const t0 = latencyClock.now();
  arrivals.length = 0;
  const response = await pumpClock(
    latencyClock,
    sys.call("GET", "/v1/ledger-desktop/customers?limit=3", { endUserId: eu.endUserId }),
  );
  const body = (await response.json()) as { data: unknown[] };
  assert.equal(response.status, 200, JSON.stringify(body));
  assert.equal(body.data.length, 3);

  // One message set with one request returning three records.
  assert.equal(processed.length, 1);
  const [set] = processed;
  assert.ok(set);
  assert.equal((set.xml.match(/<(?!QBXMLMsgsRq)\w+Rq[\s>/]/g) ?? []).length, 1, set.xml);
  // The document reaches the application half a round trip after the service handed it over…
  assert.equal(set.startedAt - t0, 40);
  // …which spends 150 ms on the message set, 30 on the request and 2 on each of its three records…
  assert.equal(set.endedAt - set.startedAt, 150 + 30 + 3 * 2);
  // …and the answer reaches the service half a round trip later: the caller's 266 ms.
  const answered = arrivals.find((a) => a.method === "receiveResponseXML");
  assert.ok(answered, JSON.stringify(arrivals));
  assert.equal(answered.at - t0, 40 + 186 + 40);
});

test("SIMULATOR_LATENCY makes the service's own simulated end users as slow", async (t) => {
  const latencyClock = new FakeClock();
  const sys = await startSystem(t, {
    simulator: true,
    config: { SIMULATOR_LATENCY: "soap:80,messageSet:150,request:30,record:2" },
    latency: { clock: latencyClock },
  });
  const arrivals = connectorArrivals(sys, latencyClock);

  const created = await sys.call("POST", "/v1/end-users", {
    body: { companyName: "Simulated Paced Books", sourceId: "paced-1" },
  });
  const endUserId = ((await created.json()) as { id: string }).id;
  const sessionResponse = await sys.call("POST", "/v1/auth-sessions", {
    body: { publishableKey: sys.project.keys.publishableLive, endUserId },
  });
  const session = (await sessionResponse.json()) as { id: string; clientSecret: string };
  // "Use a simulated company file": the service attaches its own simulated end user and waits for it.
  const attach = `${sys.url}/setup/${session.id}/simulate?clientSecret=${encodeURIComponent(session.clientSecret)}`;
  const attached = await pumpClock(latencyClock, fetch(attach, { method: "POST" }));
  assert.equal(((await attached.json()) as { state: string }).state, "completed");
  assert.equal(arrivals.at(-1)?.method, "sendRequestXML");
  assert.equal(latencyClock.sleeperCount, 0, "the simulated connector's call is held by the service");

  const t0 = latencyClock.now();
  arrivals.length = 0;
  const response = await pumpClock(
    latencyClock,
    sys.call("POST", `/v1/end-users/${endUserId}/passthrough/ledger_desktop`, {
      body: "<CustomerQueryRq><MaxReturned>3</MaxReturned></CustomerQueryRq>",
    }),
  );
  const text = await response.text();
  assert.equal(response.status, 200, text);
  assert.equal((text.match(/<CustomerRet>/g) ?? []).length, 3);
  const answered = arrivals.find((a) => a.method === "receiveResponseXML");
  assert.ok(answered, JSON.stringify(arrivals));
  // Its connector's legs (40 + 40) and its application's message set, request and three records.
  assert.equal(answered.at - t0, 40 + 150 + 30 + 3 * 2 + 40);
});
