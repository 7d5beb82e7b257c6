import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSoapCall } from "../connector/call-reader.ts";
import { soapResponse, type SoapMethod, type SoapResult } from "../connector/soap.ts";
import { FakeClock, type Clock } from "../platform/clock.ts";
import { ZERO_LATENCY, type LatencyProfile } from "../platform/latency-profile.ts";
import { pumpClock } from "../testing/clock-pump.ts";
import type { ApplicationSession, ProcessResult, SimulatedApplication } from "./application.ts";
import { simulatedLatency, soapLegsMs } from "./latency.ts";
import { SimulatedLedgerApplication } from "./ledger/application.ts";
import { SimulatedWebConnector } from "./web-connector.ts";

/**
 * The latency profile (decision 0034) is spent where the real delays are: each connector call's
 * round trip around the service's work, the application's time per message set, per request in the
 * set's order and per record returned. Every delay runs on a FakeClock: nothing sleeps.
 */

const START = Date.UTC(2026, 0, 15, 12, 0, 0);

/** A FakeClock that also records every delay asked of it. */
class RecordingClock implements Clock {
  readonly fake = new FakeClock(START);
  readonly sleeps: number[] = [];
  now(): number {
    return this.fake.now();
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    return this.fake.sleep(ms, signal);
  }
}

/** A clock that must never be asked to wait. */
const noTimers: Clock = {
  now: () => START,
  sleep: () => {
    throw new Error("a zero latency set a timer");
  },
};

const profile = (values: Partial<LatencyProfile>): LatencyProfile => ({ ...ZERO_LATENCY, ...values });

function document(onError: string, body: string, attrs = ""): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n<?qbxml version="16.0"?>\n<QBXML><QBXMLMsgsRq onError="${onError}"${attrs}>${body}</QBXMLMsgsRq></QBXML>`;
}

const add = (id: string, name: string): string =>
  `<CustomerAddRq requestID="${id}"><CustomerAdd><Name>${name}</Name></CustomerAdd></CustomerAddRq>`;
const query = (id: string, max: number): string =>
  `<CustomerQueryRq requestID="${id}"><MaxReturned>${max}</MaxReturned></CustomerQueryRq>`;

/** A session on a sample company file of an application with `latency` on `clock` (also its time). */
async function ledgerSession(
  clock: Clock,
  values: Partial<LatencyProfile>,
): Promise<{ ledger: SimulatedLedgerApplication; session: ApplicationSession; path: string }> {
  const ledger = new SimulatedLedgerApplication({
    xmlVersion: "16.0",
    clock,
    latency: simulatedLatency(profile(values), clock),
  });
  const path = "C:\\Company Files\\Paced.qbw";
  ledger.createCompanyFile(path, { companyName: "Paced", seed: "sample" });
  const begun = await ledger.beginSession({
    companyFilePath: path,
    appName: "test",
    ownerId: "{11111111-2222-3333-4444-555555555555}",
    fileId: "{66666666-7777-8888-9999-000000000000}",
    stampFileId: false,
  });
  assert.ok(begun.ok);
  return { ledger, session: begun.session, path };
}

function responseOf(result: ProcessResult): string {
  assert.ok(result.ok, result.ok ? "" : result.message);
  return result.response;
}

const editSequenceOf = (ledger: SimulatedLedgerApplication, path: string, name: string): number => {
  const record = ledger
    .companyFile(path)
    .recordsOf("Customer")
    .find((r) => r.fields.some((f) => f.name === "Name" && f.text === name));
  assert.ok(record, name);
  return Number(record.editSequence);
};

void describe("the application's latency", () => {
  void it("spends the message set's time, then each request's before it runs and its records' after, in order", async () => {
    const clock = new RecordingClock();
    const { ledger, session, path } = await ledgerSession(clock, {
      messageSetMs: 1000,
      requestMs: 2000,
      recordMs: 500,
    });
    const xml = document(
      "continueOnError",
      add("1", "First Paced") + query("2", 3) + add("3", "Second Paced"),
    );
    const result = await pumpClock(clock.fake, session.processRequest(xml));
    const response = responseOf(result);
    assert.equal((response.match(/<CustomerRet>/g) ?? []).length, 5, "one + three + one records");
    // The set (1000), Add 1 (2000) and its record (500), the query (2000) and its three (1500),
    // Add 2 (2000) and its record (500): each step's time, in the order the application takes them.
    assert.deepEqual(clock.sleeps, [1000, 2000, 500, 2000, 1500, 2000, 500]);
    assert.equal(clock.now() - START, 9500);
    // A request runs when the application reaches it: Add 1 after 3 s, Add 2 after 9 s (its
    // revision number is the second it was changed in), not both at the start or both at the end.
    assert.equal(editSequenceOf(ledger, path, "First Paced"), START / 1000 + 3);
    assert.equal(editSequenceOf(ledger, path, "Second Paced"), START / 1000 + 9);
  });

  void it("spends nothing on requests stopOnError does not run, on records not returned, or beyond a refused set", async () => {
    const clock = new RecordingClock();
    const { session } = await ledgerSession(clock, { messageSetMs: 100, requestMs: 10, recordMs: 1 });
    // "Globex Inc" exists: the Add fails (3100, no record returned) and the query after it never runs.
    const stopped = document("stopOnError", add("1", "Globex Inc") + query("2", 3));
    assert.match(
      responseOf(await pumpClock(clock.fake, session.processRequest(stopped))),
      /statusCode="3100"/,
    );
    assert.deepEqual(clock.sleeps, [100, 10]);

    clock.sleeps.length = 0;
    // responseData="includeNone": the query runs and returns no record.
    const none = document("continueOnError", query("1", 3), ' responseData="includeNone"');
    assert.doesNotMatch(responseOf(await pumpClock(clock.fake, session.processRequest(none))), /CustomerRet/);
    assert.deepEqual(clock.sleeps, [100, 10]);

    clock.sleeps.length = 0;
    // A set the application cannot read is refused whole after it was taken in: no request runs.
    const refused = await pumpClock(
      clock.fake,
      session.processRequest(document("continueOnError", "<NoSuchRq/>")),
    );
    assert.equal(refused.ok, false);
    assert.deepEqual(clock.sleeps, [100]);
  });

  void it("answers a recovery query from the saved set: the message set and the records it returns", async () => {
    const clock = new RecordingClock();
    const { session } = await ledgerSession(clock, { messageSetMs: 100, requestMs: 10, recordMs: 1 });
    const written = document("continueOnError", add("1", "Saved Paced"), ' newMessageSetID="SET-1"');
    responseOf(await pumpClock(clock.fake, session.processRequest(written)));
    clock.sleeps.length = 0;
    const recovery = document("continueOnError", "", ' oldMessageSetID="SET-1" newMessageSetID="SET-1"');
    assert.match(responseOf(await pumpClock(clock.fake, session.processRequest(recovery))), /Saved Paced/);
    assert.deepEqual(clock.sleeps, [100, 1]);
  });

  void it("with the zero profile answers at once and sets no timer", async () => {
    const { session } = await ledgerSession(noTimers, {});
    const result = await session.processRequest(
      document("continueOnError", query("1", 3) + add("2", "Instant")),
    );
    assert.match(responseOf(result), /Instant/);
  });
});

// ---- the connector's network -------------------------------------------------------------------

const QWC =
  `<?xml version="1.0"?><QBWCXML><AppName>Ledger Bridge</AppName><AppID></AppID><AppURL>http://127.0.0.1:9/connector</AppURL>` +
  `<AppDescription>test</AppDescription><AppSupport>http://127.0.0.1:9/support</AppSupport><UserName>alice</UserName>` +
  `<OwnerID>{11111111-2222-3333-4444-555555555555}</OwnerID><FileID>{66666666-7777-8888-9999-000000000000}</FileID>` +
  `<QBType>QBFS</QBType></QBWCXML>`;
const QUERY = document("stopOnError", query("1", 1));

/** A service that answers at once, noting on `clock` when each call reached it. */
function instantService(clock: Clock): { fetch: typeof fetch; arrivals: Array<[SoapMethod, number]> } {
  const arrivals: Array<[SoapMethod, number]> = [];
  const replies: Partial<Record<SoapMethod, SoapResult>> = {
    serverVersion: "1.0.0",
    clientVersion: "",
    authenticate: ["TICKET", ""],
    sendRequestXML: QUERY,
    receiveResponseXML: 100,
    closeConnection: "OK",
  };
  const serve = (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const body = init?.body;
    assert.equal(typeof body, "string", "the connector sends its envelope as text");
    const call = parseSoapCall(body as string);
    arrivals.push([call.method, clock.now() - START]);
    const reply = replies[call.method];
    assert.ok(reply !== undefined, call.method);
    return Promise.resolve(new Response(soapResponse(call.method, reply), { status: 200 }));
  };
  return { fetch: serve, arrivals };
}

/** An application that answers at once, noting on `clock` when each document reached it. */
function instantApplication(clock: Clock): SimulatedApplication & { processedAt: number[] } {
  const processedAt: number[] = [];
  return {
    processedAt,
    beginSession: () => {
      const session: ApplicationSession = {
        companyFilePath: "C:\\Company Files\\Instant.qbw",
        country: "US",
        xmlVersion: { major: 16, minor: 0 },
        hostCompanyPreferencesXml: () => "",
        processRequest: () => {
          processedAt.push(clock.now() - START);
          return Promise.resolve({
            ok: true,
            response: '<?xml version="1.0" ?>\n<QBXML><QBXMLMsgsRs/></QBXML>',
          });
        },
        end: () => undefined,
      };
      return Promise.resolve({ ok: true, session });
    },
  };
}

void describe("the connector's network latency", () => {
  void it("spends half of each call's round trip before the service has the call, half after its answer left", async () => {
    const clock = new RecordingClock();
    const service = instantService(clock);
    const application = instantApplication(clock);
    const connector = new SimulatedWebConnector({
      qwc: QWC,
      password: "pw",
      application,
      fetch: service.fetch,
      latency: simulatedLatency(profile({ soapCallMs: 100 }), clock),
    });
    const report = await pumpClock(clock.fake, connector.runSession());
    assert.equal(report.outcome, "completed");
    // One call after the other, each reaching the service 50 ms after the previous answer was used.
    assert.deepEqual(service.arrivals, [
      ["serverVersion", 50],
      ["clientVersion", 150],
      ["authenticate", 250],
      ["sendRequestXML", 350],
      ["receiveResponseXML", 450],
      ["closeConnection", 550],
    ]);
    // The document reaches the application when the answer carrying it arrived, 50 ms after it left.
    assert.deepEqual(application.processedAt, [400]);
    assert.equal(clock.now() - START, 600, "the last answer is used a whole round trip after its call left");
    assert.deepEqual(clock.sleeps, Array<number>(12).fill(50));
  });

  void it("splits an odd round trip with the smaller half first", () => {
    assert.deepEqual(soapLegsMs(profile({ soapCallMs: 81 })), { out: 40, back: 41 });
    assert.deepEqual(soapLegsMs(profile({ soapCallMs: 1 })), { out: 0, back: 1 });
    assert.deepEqual(soapLegsMs(ZERO_LATENCY), { out: 0, back: 0 });
  });

  void it("with the zero profile calls at once and sets no timer", async () => {
    const service = instantService(noTimers);
    const application = instantApplication(noTimers);
    const connector = new SimulatedWebConnector({
      qwc: QWC,
      password: "pw",
      application,
      fetch: service.fetch,
      latency: simulatedLatency(ZERO_LATENCY, noTimers),
    });
    assert.equal((await connector.runSession()).outcome, "completed");
    assert.equal(service.arrivals.length, 6);
    assert.ok(service.arrivals.every(([, at]) => at === 0));
  });

  void it("stops during a leg when the connector is stopped", async () => {
    const clock = new RecordingClock();
    const service = instantService(clock);
    const connector = new SimulatedWebConnector({
      qwc: QWC,
      password: "pw",
      application: instantApplication(clock),
      fetch: service.fetch,
      latency: simulatedLatency(profile({ soapCallMs: 1_000_000 }), clock),
    });
    const session = connector.runSession();
    await clock.fake.untilSleepers(1);
    await connector.stop();
    assert.equal((await session).outcome, "aborted");
    assert.deepEqual(service.arrivals, [], "the first call never reached the service");
  });
});
