import assert from "node:assert/strict";
import { parseSoapCall } from "../connector/call-reader.ts";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { soapResponse, type SoapCall, type SoapMethod, type SoapResult } from "../connector/soap.ts";
import type {
  ApplicationSession,
  BeginSessionOptions,
  BeginSessionResult,
  HResultFailure,
  ProcessResult,
  SimulatedApplication,
} from "./application.ts";
import {
  POINT_OF_SALE_HCP_TEXT,
  SimulatedWebConnector,
  type SimulatedWebConnectorOptions,
  type Sleep,
} from "./web-connector.ts";

// ---- a tiny scripted SOAP server -------------------------------------------------------------

type Reply = SoapResult | { hang: true } | { status: number; body: string };
type Script = (call: SoapCall) => Reply;

interface ScriptedServer {
  url: string;
  calls: SoapCall[];
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

const servers: ScriptedServer[] = [];
after(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function startServer(script: Script): Promise<ScriptedServer> {
  const calls: SoapCall[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const call = parseSoapCall(Buffer.concat(chunks).toString("utf8"));
      calls.push(call);
      headers.push(req.headers);
      const reply = script(call);
      if (typeof reply === "object" && !Array.isArray(reply) && "hang" in reply) return;
      const isRaw = typeof reply === "object" && !Array.isArray(reply);
      res.writeHead(isRaw ? reply.status : 200, { "Content-Type": "text/xml; charset=utf-8" });
      res.end(isRaw ? reply.body : soapResponse(call.method, reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const scripted: ScriptedServer = {
    url: `http://127.0.0.1:${port}/connector`,
    calls,
    headers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(scripted);
  return scripted;
}

/** Default answers of a service with work to do; `overrides` replace them per method. */
function script(overrides: Partial<Record<SoapMethod, (call: SoapCall) => Reply>> = {}): Script {
  const defaults: Record<SoapMethod, Reply> = {
    serverVersion: "1.0.0",
    clientVersion: "",
    authenticate: ["TICKET", ""],
    sendRequestXML: QUERY,
    receiveResponseXML: 100,
    connectionError: "done",
    getLastError: "Something failed",
    closeConnection: "OK",
    getInteractiveURL: "https://example.test/interactive",
    interactiveDone: "Done",
    interactiveRejected: "Rejected",
    getServerVersion: "1.0.0",
  };
  return (call) => overrides[call.method]?.(call) ?? defaults[call.method];
}

/** Answers from a list, repeating the last one. */
function sequence(...replies: Reply[]): () => Reply {
  let index = 0;
  return () => {
    const reply = replies[Math.min(index, replies.length - 1)];
    index += 1;
    if (reply === undefined) throw new Error("empty sequence");
    return reply;
  };
}

const QUERY =
  '<?xml version="1.0" encoding="utf-8"?>\n<?qbxml version="13.0"?>\n<QBXML><QBXMLMsgsRq onError="stopOnError"><CustomerQueryRq requestID="1" /></QBXMLMsgsRq></QBXML>';
const ADD =
  '<?xml version="1.0" encoding="utf-8"?>\n<?qbxml version="13.0"?>\n<QBXML><QBXMLMsgsRq onError="stopOnError"><CustomerAddRq requestID="2"><CustomerAdd><Name>A &amp; "B"</Name></CustomerAdd></CustomerAddRq></QBXMLMsgsRq></QBXML>';
const HCP =
  '<?xml version="1.0" ?>\n<QBXML><QBXMLMsgsRs><HostQueryRs statusCode="0" /></QBXMLMsgsRs></QBXML>\n';
const OPEN_FILE = "C:\\Company Files\\Open & Co.QBW";

// ---- a small fake application ---------------------------------------------------------------

interface FakeApplication extends SimulatedApplication {
  begins: BeginSessionOptions[];
  processed: string[];
  ended: number;
}

function fakeApplication(
  options: { beginFailures?: number; process?: (xml: string) => ProcessResult } = {},
): FakeApplication {
  let failuresLeft = options.beginFailures ?? 0;
  const app: FakeApplication = {
    begins: [],
    processed: [],
    ended: 0,
    beginSession(begin: BeginSessionOptions): Promise<BeginSessionResult> {
      app.begins.push(begin);
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        const failure: HResultFailure = {
          ok: false,
          hresult: "0x80040408",
          message: "Could not start the application.",
        };
        return Promise.resolve(failure);
      }
      const session: ApplicationSession = {
        companyFilePath: begin.companyFilePath === "" ? OPEN_FILE : begin.companyFilePath,
        country: "US",
        xmlVersion: { major: 13, minor: 0 },
        hostCompanyPreferencesXml: () => HCP,
        processRequest: (xml: string) => {
          app.processed.push(xml);
          return Promise.resolve(
            options.process?.(xml) ?? { ok: true, response: `<Rs for="${app.processed.length}">&quot;</Rs>` },
          );
        },
        end: () => {
          app.ended += 1;
        },
      };
      return Promise.resolve({ ok: true, session });
    },
  };
  return app;
}

function qwc(url: string, extra = "", qbType = "QBFS"): string {
  return (
    `<?xml version="1.0"?><QBWCXML><AppName>Ledger Bridge</AppName><AppID></AppID><AppURL>${url}</AppURL>` +
    `<AppDescription>test</AppDescription><AppSupport>${url}</AppSupport><UserName>alice</UserName>` +
    `<OwnerID>{11111111-2222-3333-4444-555555555555}</OwnerID><FileID>{66666666-7777-8888-9999-000000000000}</FileID>` +
    `<QBType>${qbType}</QBType>${extra}</QBWCXML>`
  );
}

function connector(
  server: ScriptedServer,
  app: SimulatedApplication,
  options: Partial<SimulatedWebConnectorOptions> = {},
): SimulatedWebConnector {
  return new SimulatedWebConnector({
    qwc: qwc(server.url),
    password: "s3cret&<>",
    application: app,
    ...options,
  });
}

const methods = (calls: readonly SoapCall[]): SoapMethod[] => calls.map((call) => call.method);

/** A sleep that records requested delays and returns at once, until `blockAfter` calls. */
function recordingSleep(blockAfter = Number.POSITIVE_INFINITY): Sleep & { delays: number[] } {
  const delays: number[] = [];
  const sleep = (ms: number, signal: AbortSignal): Promise<void> => {
    delays.push(ms);
    if (delays.length < blockAfter || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  };
  return Object.assign(sleep, { delays });
}

async function until(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

// ---- tests ----------------------------------------------------------------------------------

void describe("SimulatedWebConnector.runSession", () => {
  void it("follows the observed call order with the connector's HTTP framing", async () => {
    const server = await startServer(script());
    const app = fakeApplication();
    const report = await connector(server, app).runSession();
    assert.equal(report.outcome, "completed");
    assert.equal(report.message, "OK");
    assert.equal(report.requestsProcessed, 1);
    assert.deepEqual(methods(server.calls), [
      "serverVersion",
      "clientVersion",
      "authenticate",
      "sendRequestXML",
      "receiveResponseXML",
      "closeConnection",
    ]);
    assert.deepEqual(server.calls[1], { method: "clientVersion", strVersion: "2.3.0.215" });
    assert.deepEqual(server.calls[2], {
      method: "authenticate",
      strUserName: "alice",
      strPassword: "s3cret&<>",
    });
    assert.deepEqual(server.calls[3], {
      method: "sendRequestXML",
      ticket: "TICKET",
      strHCPResponse: HCP,
      strCompanyFileName: OPEN_FILE,
      qbXMLCountry: "US",
      qbXMLMajorVers: "13",
      qbXMLMinorVers: "0",
    });
    assert.deepEqual(server.calls[4], {
      method: "receiveResponseXML",
      ticket: "TICKET",
      response: '<Rs for="1">&quot;</Rs>',
      hresult: "",
      message: "",
    });
    assert.equal(server.headers[0]?.["content-type"], "text/xml; charset=utf-8");
    assert.equal(server.headers[3]?.["soapaction"], '"http://developer.intuit.com/sendRequestXML"');
    assert.deepEqual(app.processed, [QUERY]);
    assert.equal(app.ended, 1);
    assert.deepEqual(app.begins[0], {
      companyFilePath: "",
      appName: "Ledger Bridge",
      ownerId: "{11111111-2222-3333-4444-555555555555}",
      fileId: "{66666666-7777-8888-9999-000000000000}",
      stampFileId: true,
    });
  });

  void it("stamps the FileID only the first time a file is opened", async () => {
    const server = await startServer(script());
    const app = fakeApplication();
    const simulated = connector(server, app);
    await simulated.runSession();
    await simulated.runSession();
    assert.deepEqual(
      app.begins.map((begin) => begin.stampFileId),
      [true, false],
    );
    assert.equal(simulated.hasStampedFileId, true);
  });

  void it("opens the company file named by authenticate", async () => {
    const path = "C:\\Data\\Other.QBW";
    const server = await startServer(script({ authenticate: () => ["T", path] }));
    const app = fakeApplication();
    await connector(server, app).runSession();
    assert.equal(app.begins[0]?.companyFilePath, path);
    const send = server.calls[3];
    assert.ok(send?.method === "sendRequestXML" && send.strCompanyFileName === path);
  });

  void it("sends the host/company/preferences document only on the first sendRequestXML", async () => {
    const server = await startServer(
      script({ sendRequestXML: sequence(QUERY, ADD), receiveResponseXML: sequence(50, 100) }),
    );
    const app = fakeApplication();
    const report = await connector(server, app).runSession();
    const sends = server.calls.filter((call) => call.method === "sendRequestXML");
    assert.equal(sends.length, 2);
    assert.ok(sends[0]?.method === "sendRequestXML" && sends[0].strHCPResponse === HCP);
    assert.ok(sends[1]?.method === "sendRequestXML" && sends[1].strHCPResponse === "");
    assert.deepEqual(app.processed, [QUERY, ADD]);
    assert.equal(report.requestsProcessed, 2);
    assert.equal(methods(server.calls).at(-1), "closeConnection");
  });

  void it("sends the point-of-sale HCP text for QBPOS registrations", async () => {
    const server = await startServer(script());
    const simulated = new SimulatedWebConnector({
      qwc: qwc(server.url, "", "QBPOS"),
      password: "p",
      application: fakeApplication(),
    });
    await simulated.runSession();
    const send = server.calls[3];
    assert.ok(send?.method === "sendRequestXML" && send.strHCPResponse === POINT_OF_SALE_HCP_TEXT);
  });

  void it("pauses after NoOp, then sends again", async () => {
    const server = await startServer(
      script({ sendRequestXML: sequence("", QUERY), getLastError: () => "NoOp" }),
    );
    const sleep = recordingSleep();
    const report = await connector(server, fakeApplication(), { sleep }).runSession();
    assert.equal(report.outcome, "completed");
    assert.deepEqual(methods(server.calls).slice(3), [
      "sendRequestXML",
      "getLastError",
      "sendRequestXML",
      "receiveResponseXML",
      "closeConnection",
    ]);
    assert.deepEqual(sleep.delays, [5000]);
  });

  void it("closes the connection when getLastError returns an error text", async () => {
    const server = await startServer(
      script({ sendRequestXML: () => "", getLastError: () => "Queue broken" }),
    );
    const app = fakeApplication();
    const report = await connector(server, app).runSession();
    assert.equal(report.outcome, "closed_with_error");
    assert.equal(report.message, "Queue broken");
    assert.deepEqual(methods(server.calls).slice(3), ["sendRequestXML", "getLastError", "closeConnection"]);
    assert.equal(app.ended, 1);
  });

  void it("runs a minimal interactive mode", async () => {
    const server = await startServer(
      script({
        sendRequestXML: () => "",
        getLastError: () => "Interactive mode",
        interactiveDone: sequence("", "Done"),
      }),
    );
    const report = await connector(server, fakeApplication(), { sleep: recordingSleep() }).runSession();
    assert.equal(report.outcome, "interactive");
    assert.deepEqual(methods(server.calls).slice(4), [
      "getLastError",
      "getInteractiveURL",
      "interactiveDone",
      "closeConnection",
    ]);
  });

  void it("stops on nvu and none without opening the application", async () => {
    for (const [status, outcome] of [
      ["nvu", "invalid_user"],
      ["NONE", "no_work"],
      ["busy", "busy"],
    ] as const) {
      const server = await startServer(script({ authenticate: () => ["T", status] }));
      const app = fakeApplication();
      const report = await connector(server, app).runSession();
      assert.equal(report.outcome, outcome);
      assert.deepEqual(methods(server.calls), ["serverVersion", "clientVersion", "authenticate"]);
      assert.equal(app.begins.length, 0);
    }
  });

  void it("stops on E: and O: clientVersion replies, continues on W:", async () => {
    for (const reply of ["E:too old", "O:2.3.0.300"]) {
      const server = await startServer(script({ clientVersion: () => reply }));
      const report = await connector(server, fakeApplication()).runSession();
      assert.equal(report.outcome, "version_rejected");
      assert.equal(report.message, reply);
      assert.deepEqual(methods(server.calls), ["serverVersion", "clientVersion"]);
    }
    const server = await startServer(script({ clientVersion: () => "W:please upgrade" }));
    assert.equal((await connector(server, fakeApplication()).runSession()).outcome, "completed");
  });

  void it("retries the open through connectionError, capped at two retries", async () => {
    const server = await startServer(
      script({ connectionError: sequence("", "C:\\Other.QBW", "C:\\Third.QBW") }),
    );
    const app = fakeApplication({ beginFailures: 10 });
    const report = await connector(server, app).runSession();
    assert.equal(report.outcome, "connection_failed");
    assert.deepEqual(
      app.begins.map((begin) => begin.companyFilePath),
      ["", "", "C:\\Other.QBW"],
    );
    assert.deepEqual(server.calls.slice(3), [
      {
        method: "connectionError",
        ticket: "TICKET",
        hresult: "0x80040408",
        message: "Could not start the application.",
      },
      {
        method: "connectionError",
        ticket: "TICKET",
        hresult: "0x80040408",
        message: "Could not start the application.",
      },
      {
        method: "connectionError",
        ticket: "TICKET",
        hresult: "0x80040408",
        message: "Could not start the application.",
      },
    ]);
    assert.equal(app.ended, 0);
  });

  void it("stops at once when connectionError answers done, and recovers when a retry succeeds", async () => {
    const done = await startServer(script({ connectionError: () => "done" }));
    const failing = fakeApplication({ beginFailures: 10 });
    assert.equal((await connector(done, failing).runSession()).outcome, "connection_failed");
    assert.equal(failing.begins.length, 1);
    assert.deepEqual(methods(done.calls).slice(3), ["connectionError"]);

    const retry = await startServer(script({ connectionError: () => "C:\\Right.QBW" }));
    const flaky = fakeApplication({ beginFailures: 1 });
    const report = await connector(retry, flaky).runSession();
    assert.equal(report.outcome, "completed");
    assert.deepEqual(methods(retry.calls).slice(3), [
      "connectionError",
      "sendRequestXML",
      "receiveResponseXML",
      "closeConnection",
    ]);
    assert.deepEqual(
      flaky.begins.map((begin) => [begin.companyFilePath, begin.stampFileId]),
      [
        ["", true],
        ["C:\\Right.QBW", true],
      ],
    );
  });

  void it("calls getLastError then closeConnection after a negative receiveResponseXML", async () => {
    const server = await startServer(
      script({ receiveResponseXML: () => -101, getLastError: () => "Bad response" }),
    );
    const report = await connector(server, fakeApplication()).runSession();
    assert.equal(report.outcome, "closed_with_error");
    assert.equal(report.message, "Bad response");
    assert.deepEqual(methods(server.calls).slice(4), [
      "receiveResponseXML",
      "getLastError",
      "closeConnection",
    ]);
  });

  void it("reports an application failure as hresult/message with an empty response", async () => {
    const server = await startServer(script());
    const app = fakeApplication({
      process: () => ({ ok: false, hresult: "0x80040400", message: "error when parsing the provided XML" }),
    });
    await connector(server, app).runSession();
    assert.deepEqual(server.calls[4], {
      method: "receiveResponseXML",
      ticket: "TICKET",
      response: "",
      hresult: "0x80040400",
      message: "error when parsing the provided XML",
    });
  });

  void it("ends the session on a SOAP fault or HTTP error without further calls", async () => {
    const server = await startServer(
      script({
        sendRequestXML: () => ({
          status: 500,
          body: '<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><soap:Fault><faultcode>soap:Server</faultcode><faultstring>boom</faultstring></soap:Fault></soap:Body></soap:Envelope>',
        }),
      }),
    );
    const app = fakeApplication();
    const simulated = connector(server, app);
    const report = await simulated.runSession();
    assert.equal(report.outcome, "transport_error");
    assert.match(report.message, /sendRequestXML failed: boom/);
    assert.equal(methods(server.calls).at(-1), "sendRequestXML");
    assert.equal(app.ended, 1);
    assert.equal(simulated.calls.at(-1)?.type, "call_failed");

    const notFound = await startServer(script({ serverVersion: () => ({ status: 404, body: "nope" }) }));
    const lost = await connector(notFound, fakeApplication()).runSession();
    assert.equal(lost.outcome, "transport_error");
    assert.match(lost.message, /HTTP 404/);
  });
});

void describe("SimulatedWebConnector faults", () => {
  void it("lose_answer_after_write processes the write, drops its answer, then clears itself", async () => {
    const server = await startServer(
      script({ sendRequestXML: sequence(QUERY, ADD, QUERY), receiveResponseXML: sequence(50, 100) }),
    );
    const app = fakeApplication();
    const simulated = connector(server, app);
    simulated.setFault({ kind: "lose_answer_after_write" });
    const report = await simulated.runSession();
    assert.equal(report.outcome, "answer_lost");
    assert.deepEqual(app.processed, [QUERY, ADD]);
    assert.deepEqual(methods(server.calls).slice(3), [
      "sendRequestXML",
      "receiveResponseXML",
      "sendRequestXML",
    ]);
    assert.equal(app.ended, 1);
    const events = simulated.events.map((event) => event.type);
    assert.deepEqual(events.slice(-3), ["request_processed", "answer_dropped", "session_ended"]);

    server.calls.length = 0;
    const next = await simulated.runSession();
    assert.equal(next.outcome, "completed");
    assert.deepEqual(methods(server.calls).slice(3), [
      "sendRequestXML",
      "receiveResponseXML",
      "closeConnection",
    ]);
  });

  void it("send_again_without_answer processes the document, asks for the next one instead of answering, then clears", async () => {
    const server = await startServer(
      script({ sendRequestXML: sequence(QUERY, ADD, QUERY), receiveResponseXML: sequence(50, 100) }),
    );
    const app = fakeApplication();
    const simulated = connector(server, app);
    simulated.setFault({ kind: "send_again_without_answer", match: "write" });
    const report = await simulated.runSession();
    assert.equal(report.outcome, "completed");
    assert.deepEqual(app.processed, [QUERY, ADD, QUERY]);
    assert.deepEqual(methods(server.calls).slice(3), [
      "sendRequestXML",
      "receiveResponseXML",
      "sendRequestXML",
      "sendRequestXML",
      "receiveResponseXML",
      "closeConnection",
    ]);
    assert.equal(simulated.events.filter((event) => event.type === "answer_dropped").length, 1);
  });

  void it("offline makes no HTTP calls at all", async () => {
    const server = await startServer(script());
    const app = fakeApplication();
    const simulated = connector(server, app);
    simulated.setFault({ kind: "offline" });
    assert.equal((await simulated.runSession()).outcome, "offline");
    assert.equal(server.calls.length, 0);
    assert.equal(app.begins.length, 0);
    simulated.setFault(null);
    assert.equal((await simulated.runSession()).outcome, "completed");
  });
});

void describe("SimulatedWebConnector scheduling and stop", () => {
  void it("stop() aborts an in-flight HTTP exchange promptly and ends the application session", async () => {
    const server = await startServer(script({ sendRequestXML: () => ({ hang: true }) }));
    const app = fakeApplication();
    const simulated = connector(server, app);
    const reports: string[] = [];
    simulated.start();
    await until(() => server.calls.some((call) => call.method === "sendRequestXML"));
    const startedAt = Date.now();
    const session = simulated.runSession().then((report) => reports.push(report.outcome));
    await simulated.stop();
    await session;
    assert.ok(Date.now() - startedAt < 1000, "stop took too long");
    assert.deepEqual(reports, ["aborted"]);
    assert.equal(app.ended, 1);
  });

  void it("stop() aborts a NoOp pause promptly", async () => {
    const server = await startServer(script({ sendRequestXML: () => "", getLastError: () => "NoOp" }));
    const simulated = connector(server, fakeApplication(), { noOpPauseMs: 60_000 });
    const session = simulated.runSession();
    await until(() => server.calls.some((call) => call.method === "getLastError"));
    const startedAt = Date.now();
    await simulated.stop();
    assert.equal((await session).outcome, "aborted");
    assert.ok(Date.now() - startedAt < 1000, "stop took too long");
    assert.equal(server.calls.filter((call) => call.method === "sendRequestXML").length, 1);
  });

  void it("runs sessions every RunEveryNSeconds and honours postpone and minimum run-every", async () => {
    const server = await startServer(
      script({
        authenticate: sequence(["T", "none"], ["T", "none", "120"], ["T", "none", "", "300"], ["T", "none"]),
      }),
    );
    const sleep = recordingSleep(4);
    const simulated = new SimulatedWebConnector({
      qwc: qwc(server.url, "<Scheduler><RunEveryNSeconds>30</RunEveryNSeconds></Scheduler>"),
      password: "p",
      application: fakeApplication(),
      sleep,
    });
    simulated.start();
    await until(() => sleep.delays.length === 4);
    await simulated.stop();
    // 30 s interval; postponed 120 s; next at +300 s and the interval raised to 300 s.
    assert.deepEqual(sleep.delays, [30_000, 120_000, 300_000, 300_000]);
    assert.equal(simulated.intervalSeconds, 300);
    assert.equal(server.calls.filter((call) => call.method === "authenticate").length, 4);
  });

  void it("checks in only on demand when the .qwc has no schedule", async () => {
    const server = await startServer(script());
    const sleep = recordingSleep(1);
    const simulated = connector(server, fakeApplication(), { sleep });
    simulated.start();
    await until(() => sleep.delays.length === 1);
    assert.equal(sleep.delays[0], Number.POSITIVE_INFINITY);
    const before = server.calls.length;
    const report = await simulated.checkInNow();
    assert.equal(report.outcome, "completed");
    assert.equal(server.calls.length, before + 6);
    await simulated.stop();
  });

  void it("checkInNow works without the scheduler and joins a running session", async () => {
    const server = await startServer(script());
    const simulated = connector(server, fakeApplication());
    const first = simulated.checkInNow();
    const joined = simulated.runSession();
    assert.equal(first, joined);
    assert.equal((await first).outcome, "completed");
    assert.equal(server.calls.filter((call) => call.method === "serverVersion").length, 1);
  });
});
