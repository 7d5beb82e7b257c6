import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { FakeClock } from "../../src/platform/clock.ts";
import { SOAP_CONTENT_TYPE, parseSoapResponse, soapRequest } from "../../src/connector/soap.ts";
import { bearer, buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { SoapByHand } from "../../src/testing/soap-by-hand.ts";
import { startSystem, type System } from "../../src/testing/system.ts";

/**
 * What anyone on the internet can make the service do before it has seen credentials is bounded
 * (issue 23, decision 0031): a body that is not a connector call is refused at its first wrong
 * element, a call without a live session's ticket is read up to a small limit, a body that does not
 * arrive in time is cut, unknown routes read no body, setup routes take 1 KiB, connections are
 * capped, and failed attempts are counted per address.
 */
const UNAUTHENTICATED_LIMIT = 64 * 1024;
const SOAP_OPEN =
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>';

/** A body made as it is read: `prefix`, then `unit` repeated up to `totalBytes`; counts what was pulled. */
function lazyBody(
  prefix: string,
  unit: string,
  totalBytes: number,
): { stream: Readable; pulled: () => number } {
  const chunk = Buffer.from(unit.repeat(Math.max(1, Math.floor(16_384 / unit.length))));
  let pulled = 0;
  const stream = new Readable({
    read() {
      if (pulled === 0) {
        pulled += Buffer.byteLength(prefix);
        this.push(Buffer.from(prefix));
      } else if (pulled >= totalBytes) this.push(null);
      else {
        pulled += chunk.length;
        this.push(chunk);
      }
    },
  });
  return { stream, pulled: () => pulled };
}

function faultText(body: string): string {
  try {
    parseSoapResponse("getLastError", body);
  } catch (error) {
    return (error as Error).message;
  }
  return assert.fail(`not a fault: ${body}`);
}

/** A raw connection to the service, to send a request a piece at a time and see the socket close. */
class RawCall {
  private received = "";
  readonly closed: Promise<void>;
  constructor(readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => (this.received += text));
    socket.on("error", () => undefined);
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
  }
  static async open(url: string): Promise<RawCall> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    return new RawCall(socket);
  }
  send(text: string): void {
    this.socket.write(text);
  }
  get response(): string {
    return this.received;
  }
  get isClosed(): boolean {
    return this.socket.destroyed || this.socket.readableEnded;
  }
}

/** Lets the service's event loop run (the socket's bytes reach it) before the test looks. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
}

void describe("the connector endpoint before credentials", () => {
  let sys: System | undefined;
  before(async () => {
    sys = await startSystem(null);
  });
  after(() => sys?.close());

  void it("refuses a 16 MB junk body at its first wrong element, having read a few KiB of it", async () => {
    assert.ok(sys);
    const junk = lazyBody(
      `${SOAP_OPEN}<authenticate xmlns="http://developer.intuit.com/">`,
      "<x/>",
      16 * 1024 * 1024,
    );
    const res = await sys.app.inject({
      method: "POST",
      url: "/connector",
      headers: { "content-type": SOAP_CONTENT_TYPE, "content-length": String(16 * 1024 * 1024) },
      payload: junk.stream,
    });
    assert.equal(res.statusCode, 500, res.body);
    assert.match(faultText(res.body), /More than one <x> in authenticate/);
    assert.equal(res.headers.connection, "close", "the unread rest is never received");
    assert.ok(junk.pulled() < 64 * 1024, `read ${junk.pulled()} bytes of 16 MB`);
  });

  void it("refuses an element-free flood of text at the unauthenticated limit", async () => {
    assert.ok(sys);
    const flood = lazyBody(
      `${SOAP_OPEN}<authenticate xmlns="http://developer.intuit.com/"><strUserName>`,
      "a",
      16 * 1024 * 1024,
    );
    const res = await sys.app.inject({
      method: "POST",
      url: "/connector",
      headers: { "content-type": SOAP_CONTENT_TYPE, "transfer-encoding": "chunked" },
      payload: flood.stream,
    });
    assert.equal(res.statusCode, 500, res.body);
    assert.match(
      faultText(res.body),
      new RegExp(
        `without a live session's ticket may hold at most ${UNAUTHENTICATED_LIMIT} bytes \\(this is authenticate\\)`,
      ),
    );
    assert.ok(flood.pulled() < UNAUTHENTICATED_LIMIT + 64 * 1024, `read ${flood.pulled()} bytes`);
  });

  void it("lets a live session's answer grow past the limit, and no other ticket's", async () => {
    assert.ok(sys);
    const eu = await sys.connectEndUser({ companyName: "Large Answers" });
    await eu.connector.stop();
    const hand = SoapByHand.for(sys, eu);
    const ticket = await hand.ticket();
    const large = `<QBXML><QBXMLMsgsRs>${"<x>pad</x>".repeat(20_000)}</QBXMLMsgsRs></QBXML>`;
    assert.ok(large.length > 2 * UNAUTHENTICATED_LIMIT);
    // Nothing was handed over: the answer is unexpected (-2), which shows it was read whole.
    assert.equal(await hand.receive(ticket, large), -2);
    for (const other of ["", "not-a-ticket", ticket.slice(1)]) {
      const res: LightMyRequestResponse = await sys.app.inject({
        method: "POST",
        url: "/connector",
        headers: { "content-type": SOAP_CONTENT_TYPE },
        payload: soapRequest({
          method: "receiveResponseXML",
          ticket: other,
          response: large,
          hresult: "",
          message: "",
        }),
        remoteAddress: `198.51.100.${other.length % 250}`,
      });
      assert.equal(res.statusCode, 500, res.body);
      assert.match(faultText(res.body), /without a live session's ticket/);
    }
    await hand.call({ method: "closeConnection", ticket });
  });
});

void describe("bodies that do not arrive in time", () => {
  const transport = new FakeClock();
  let sys: System | undefined;
  before(async () => {
    sys = await startSystem(null, { transportClock: transport });
  });
  after(() => sys?.close());

  const header = (path: string, length: number, extra = ""): string =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${length}\r\n${extra}\r\n`;

  void it("cuts a trickled connector body at BODY_RECEIVE_TIMEOUT_MS, not a millisecond before", async () => {
    assert.ok(sys);
    const call = await RawCall.open(sys.url);
    const sleepers = transport.sleeperCount;
    call.send(header("/connector", 5000, `Content-Type: ${SOAP_CONTENT_TYPE}\r\n`));
    call.send(SOAP_OPEN);
    await transport.untilSleepers(sleepers + 1);
    await transport.advance(30_000 - 1);
    await settle();
    assert.equal(call.response, "", "nothing answered before the deadline");
    assert.equal(call.isClosed, false);
    await transport.advance(1);
    await call.closed;
    assert.match(call.response, /^HTTP\/1\.1 500/);
    assert.match(call.response, /connection: close/i);
    assert.match(call.response, /not received within 30 s/);
  });

  void it("cuts a trickled API body with the API's error, naming the body", async () => {
    assert.ok(sys);
    const call = await RawCall.open(sys.url);
    const sleepers = transport.sleeperCount;
    call.send(
      header(
        "/v1/end-users",
        500,
        `Content-Type: application/json\r\nAuthorization: Bearer ${sys.project.keys.secretLive}\r\n`,
      ),
    );
    call.send('{"companyName": "Slow');
    await transport.untilSleepers(sleepers + 1);
    await transport.advance(30_000);
    await call.closed;
    assert.match(call.response, /^HTTP\/1\.1 400/);
    const body = JSON.parse(call.response.slice(call.response.indexOf("\r\n\r\n") + 4)) as {
      error: { code: string; param: string };
    };
    assert.equal(body.error.code, "INVALID_PARAMETER");
    assert.equal(body.error.param, "body");
    const list = await sys.call("GET", "/v1/end-users");
    assert.equal(((await list.json()) as { data: unknown[] }).data.length, 0, "nothing was created");
  });

  void it("gives a live session's large answer CONNECTOR_BODY_RECEIVE_TIMEOUT_MS", async () => {
    assert.ok(sys);
    const eu = await sys.connectEndUser({ companyName: "Slow Uplink" });
    await eu.connector.stop();
    const ticket = await SoapByHand.for(sys, eu).ticket();
    const call = await RawCall.open(sys.url);
    const sleepers = transport.sleeperCount;
    const start = `${SOAP_OPEN}<receiveResponseXML xmlns="http://developer.intuit.com/"><ticket>${ticket}</ticket><response>`;
    call.send(header("/connector", 10 * UNAUTHENTICATED_LIMIT, `Content-Type: ${SOAP_CONTENT_TYPE}\r\n`));
    // Past the unauthenticated limit, so that the ticket is checked and the deadline moved.
    call.send(start + "x".repeat(UNAUTHENTICATED_LIMIT + 1000));
    await transport.untilSleepers(sleepers + 1);
    await settle();
    await transport.advance(30_000);
    await settle();
    assert.equal(call.isClosed, false, "the short deadline no longer applies");
    assert.equal(call.response, "");
    await transport.advance(600_000 - 30_000 - 1);
    await settle();
    assert.equal(call.isClosed, false);
    await transport.advance(1);
    await call.closed;
    assert.match(call.response, /not received within 600 s/);
  });
});

void describe("unknown routes, setup routes and connections", () => {
  let testApp: TestApp | undefined;
  before(async () => {
    testApp = await buildTestApp(null, { config: { HTTP_MAX_CONNECTIONS: "2" } });
  });
  after(() => testApp?.close());

  void it("answers an unknown route 404 without reading its body", async () => {
    assert.ok(testApp);
    for (const url of ["/nowhere", "/v1/nothing-here", "/setup"]) {
      const body = lazyBody("{", " ", 16 * 1024 * 1024);
      const res: LightMyRequestResponse = await testApp.app.inject({
        method: "POST",
        url,
        headers: { "content-type": "application/json", "content-length": String(16 * 1024 * 1024) },
        payload: body.stream,
      });
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(res.json<{ error: { code: string } }>().error.code, "RESOURCE_MISSING");
      assert.equal(res.headers.connection, "close");
      assert.ok(res.headers["ratelimit-limit"], "counted like any unauthenticated call");
      assert.ok(body.pulled() <= 16_384, `${url}: read ${body.pulled()} bytes`);
    }
  });

  void it("refuses a setup route's body over 1 KiB", async () => {
    assert.ok(testApp);
    const url = "/setup/authsess_00000000000000000000000000/cancel?clientSecret=x";
    const small = await testApp.app.inject({ method: "POST", url, payload: { note: "x".repeat(900) } });
    assert.equal(small.statusCode, 404, "read, and the link is not valid");
    const big = await testApp.app.inject({ method: "POST", url, payload: { note: "x".repeat(1100) } });
    assert.equal(big.statusCode, 413, big.body);
    assert.equal(big.json<{ error: { code: string } }>().error.code, "PAYLOAD_TOO_LARGE");
    assert.match(big.body, /larger than 1 KiB/);
  });

  void it("closes connections beyond HTTP_MAX_CONNECTIONS as they arrive", async () => {
    assert.ok(testApp);
    await testApp.app.listen({ port: 0, host: "127.0.0.1" });
    const address = testApp.app.server.address();
    assert.ok(address && typeof address === "object");
    const url = `http://127.0.0.1:${address.port}`;
    const ask = (call: RawCall): void => call.send("GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    const first = await RawCall.open(url);
    const second = await RawCall.open(url);
    ask(first);
    ask(second);
    await settle();
    assert.match(first.response, /^HTTP\/1\.1 200/);
    assert.match(second.response, /^HTTP\/1\.1 200/);
    const third = await RawCall.open(url);
    ask(third);
    await third.closed;
    assert.equal(third.response, "", "closed without an answer");
    first.socket.destroy();
    await first.closed;
    await settle();
    const fourth = await RawCall.open(url);
    ask(fourth);
    await settle();
    assert.match(fourth.response, /^HTTP\/1\.1 200/, "a freed place is taken again");
    second.socket.destroy();
    fourth.socket.destroy();
  });
});

void describe("failed attempts per address", () => {
  let testApp: TestApp | undefined;
  before(async () => {
    testApp = await buildTestApp(null, { config: { TRUST_PROXY: "127.0.0.1" } });
  });
  after(() => testApp?.close());

  const authenticate = (password: string, from: string, payload?: Readable) =>
    testApp?.app.inject({
      method: "POST",
      url: "/connector",
      headers: { "content-type": SOAP_CONTENT_TYPE, "x-forwarded-for": from },
      payload:
        payload ?? soapRequest({ method: "authenticate", strUserName: "someone", strPassword: password }),
    });

  void it("turns the 11th failed login within a minute away unread, until the minute ends", async () => {
    assert.ok(testApp?.fakeClock);
    for (let i = 1; i <= 10; i += 1) {
      const res = await authenticate(`guess-${i}`, "203.0.113.10");
      assert.equal(res?.statusCode, 200);
      assert.deepEqual(parseSoapResponse("authenticate", res?.body ?? ""), ["", "nvu"], `attempt ${i}`);
    }
    const body = lazyBody(
      soapRequest({ method: "authenticate", strUserName: "someone", strPassword: "11" }),
      " ",
      1,
    );
    const throttled = await authenticate("ignored", "203.0.113.10", body.stream);
    assert.equal(throttled?.statusCode, 429, throttled?.body);
    assert.equal(throttled?.headers["retry-after"], "60");
    assert.match(faultText(throttled?.body ?? ""), /Too many failed calls from this address/);
    assert.equal(body.pulled(), 0, "not a byte of it was read");
    // Another address is not affected.
    const other = await authenticate("guess", "203.0.113.11");
    assert.deepEqual(parseSoapResponse("authenticate", other?.body ?? ""), ["", "nvu"]);
    await testApp.fakeClock.advance(59_000);
    assert.equal((await authenticate("x", "203.0.113.10"))?.statusCode, 429);
    await testApp.fakeClock.advance(1_000);
    const again = await authenticate("x", "203.0.113.10");
    assert.deepEqual(parseSoapResponse("authenticate", again?.body ?? ""), ["", "nvu"], "the window ended");
    const metrics = await testApp.deps.metrics.registry.metrics();
    assert.match(metrics, /ledger_bridge_failed_attempts_total\{reason="login_refused"\} 12/);
    assert.match(metrics, /ledger_bridge_failed_attempts_total\{reason="throttled"\} 2/);
  });

  void it("counts unknown tickets and bodies that are not calls, not a closed session's ticket", async () => {
    assert.ok(testApp?.fakeClock);
    const from = "203.0.113.20";
    const post = (payload: string) =>
      testApp?.app.inject({
        method: "POST",
        url: "/connector",
        headers: { "content-type": SOAP_CONTENT_TYPE, "x-forwarded-for": from },
        payload,
      });
    for (let i = 0; i < 5; i += 1) {
      const res = await post(soapRequest({ method: "getLastError", ticket: `guessed-${i}` }));
      assert.equal(res?.statusCode, 200);
    }
    for (let i = 0; i < 5; i += 1) assert.equal((await post("<not-soap/>"))?.statusCode, 500);
    assert.equal((await post(soapRequest({ method: "serverVersion" })))?.statusCode, 429);
  });

  void it("turns away setup links guessed too often from one address", async () => {
    assert.ok(testApp?.fakeClock);
    const guess = (from: string) =>
      testApp?.app.inject({
        method: "GET",
        url: "/setup/authsess_00000000000000000000000000/status?clientSecret=guess",
        headers: { "x-forwarded-for": from },
      });
    for (let i = 0; i < 10; i += 1) assert.equal((await guess("203.0.113.30"))?.statusCode, 404);
    const throttled = await guess("203.0.113.30");
    assert.equal(throttled?.statusCode, 429);
    assert.equal(throttled?.json<{ error: { code: string } }>().error.code, "RATE_LIMITED");
    assert.equal((await guess("203.0.113.31"))?.statusCode, 404, "another address is not affected");
    await testApp.fakeClock.advance(60_000);
    assert.equal((await guess("203.0.113.30"))?.statusCode, 404);
  });

  void it("does not count an API key's failures here (the API's own limiter counts those)", async () => {
    assert.ok(testApp);
    for (let i = 0; i < 12; i += 1) {
      const res: LightMyRequestResponse = await testApp.app.inject({
        method: "GET",
        url: "/v1/end-users",
        headers: { ...bearer("sk_live_wrong"), "x-forwarded-for": "203.0.113.40" },
      });
      assert.equal(res.statusCode, 401);
    }
    const login = await authenticate("guess", "203.0.113.40");
    assert.deepEqual(parseSoapResponse("authenticate", login?.body ?? ""), ["", "nvu"]);
  });
});
