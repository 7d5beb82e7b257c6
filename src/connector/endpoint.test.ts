import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import iconv from "iconv-lite";
import { updateConnection } from "../store/connections.ts";
import { loadSetup } from "../tenancy/auth-sessions.ts";
import { bearer, buildTestApp, type TestApp } from "../testing/harness.ts";
import { SoapFaultError, parseSoapResponse, soapAction, soapRequest } from "./soap.ts";

/**
 * The connector endpoint over HTTP: whatever a client sends, it answers SOAP — a result, or a
 * SOAP 1.1 Fault (HTTP 500) that names the problem — and never the API's JSON error body.
 */
const BODY_LIMIT = 8192;

let testApp: TestApp | undefined;
before(async () => {
  // Every probe here comes from one address: the failed-attempt throttle (tested in
  // connector-throttle.test.ts) would turn the later ones away unread.
  testApp = await buildTestApp(null, {
    config: { CONNECTOR_BODY_LIMIT_BYTES: String(BODY_LIMIT), FAILED_ATTEMPTS_PER_ADDRESS: "1000" },
  });
});
after(() => testApp?.close());

function service(): TestApp {
  assert.ok(testApp, "the service is up");
  return testApp;
}

interface Posted {
  status: number;
  contentType: string;
  body: string;
}

async function post(
  payload: string | Buffer,
  headers: Record<string, string> = { "content-type": "text/xml; charset=utf-8" },
  method: "POST" | "DELETE" = "POST",
): Promise<Posted> {
  const res = await service().app.inject({ method, url: "/connector", payload, headers });
  return { status: res.statusCode, contentType: String(res.headers["content-type"]), body: res.body };
}

/** Asserts a SOAP 1.1 Fault with `code` whose text matches `pattern`. */
function assertFault(res: Posted, code: string, pattern: RegExp, status = 500): void {
  assert.equal(res.status, status, res.body);
  assert.match(res.contentType, /^text\/xml; charset=utf-8/);
  assert.ok(!res.body.trimStart().startsWith("{"), "never the JSON error body");
  assert.throws(
    () => parseSoapResponse("getLastError", res.body),
    (err: unknown) => err instanceof SoapFaultError && err.faultCode === code && pattern.test(err.message),
    res.body,
  );
}

/**
 * A connection whose connector login holds characters outside ASCII: authenticate answers a
 * ticket only if the service read the body's text exactly.
 */
async function connectionNamed(userName: string): Promise<{ strUserName: string; strPassword: string }> {
  const { app, project, deps } = service();
  const created = await app.inject({
    method: "POST",
    url: "/v1/end-users",
    headers: bearer(project.keys.secretLive),
    payload: { companyName: "Encodings", sourceId: `enc-${userName.length}` },
  });
  const endUser = created.json<{ id: string }>();
  const session = (
    await app.inject({
      method: "POST",
      url: "/v1/auth-sessions",
      headers: bearer(project.keys.secretLive),
      payload: { publishableKey: project.keys.publishableLive, endUserId: endUser.id },
    })
  ).json<{ id: string; clientSecret: string }>();
  const setup = await loadSetup(deps, session.id, session.clientSecret);
  assert.equal(setup.state, "waiting");
  if (setup.state !== "waiting") throw new Error("no setup");
  await updateConnection(deps.db, setup.connection.id, { username: userName });
  return { strUserName: userName, strPassword: setup.password };
}

function ticketOf(res: Posted): string {
  assert.equal(res.status, 200, res.body);
  const [ticket, status] = parseSoapResponse("authenticate", res.body) as string[];
  assert.notEqual(status, "nvu", "the login was read exactly");
  assert.ok(ticket);
  return ticket;
}

void describe("connector endpoint: character encodings", () => {
  void it("decodes windows-1252 declared in the XML prolog or in the Content-Type charset", async () => {
    const auth = { method: "authenticate", ...(await connectionNamed("Zoë Ærøskøbing €")) } as const;
    const prolog = soapRequest(auth).replace('encoding="utf-8"', 'encoding="windows-1252"');
    ticketOf(await post(iconv.encode(prolog, "win1252"), { "content-type": "text/xml" }));
    const header = { "content-type": "text/xml; charset=windows-1252" };
    ticketOf(await post(iconv.encode(soapRequest(auth), "win1252"), header));
  });

  void it("accepts UTF-16 with a byte order mark", async () => {
    const auth = { method: "authenticate", ...(await connectionNamed("Zoë – UTF-16")) } as const;
    const text = soapRequest(auth).replace('encoding="utf-8"', 'encoding="utf-16"');
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, "utf-16le")]);
    ticketOf(await post(bytes, { "content-type": "text/xml; charset=utf-16" }));
  });

  void it("faults bytes that are not what the charset declares", async () => {
    const auth = { method: "authenticate", strUserName: "Zoë", strPassword: "p" } as const;
    assertFault(await post(iconv.encode(soapRequest(auth), "win1252")), "soap:Client", /not valid UTF-8/);
  });
});

void describe("connector endpoint: SOAP faults instead of JSON", () => {
  const getLastError = soapRequest({ method: "getLastError", ticket: "t" });

  void it("faults a wrong or missing operation namespace, naming it", async () => {
    const wrong = getLastError.replace(
      'xmlns="http://developer.intuit.com/"',
      'xmlns="http://example.test/"',
    );
    assertFault(
      await post(wrong),
      "soap:Client",
      /must be in the namespace http:\/\/developer\.intuit\.com\/ \(found http:\/\/example\.test\/\)/,
    );
    const missing = getLastError.replace(' xmlns="http://developer.intuit.com/"', "");
    assertFault(await post(missing), "soap:Client", /found no namespace/);
  });

  void it("faults a SOAPAction that names another operation, accepts the matching, empty or absent one", async () => {
    const headers = (action: string): Record<string, string> => ({
      "content-type": "text/xml; charset=utf-8",
      soapaction: action,
    });
    assertFault(
      await post(getLastError, headers(soapAction("closeConnection"))),
      "soap:Client",
      /SOAPAction header "http:\/\/developer\.intuit\.com\/closeConnection" does not match the operation getLastError/,
    );
    for (const ok of [soapAction("getLastError"), "http://developer.intuit.com/getLastError", '""']) {
      const res = await post(getLastError, headers(ok));
      assert.equal(res.status, 200, `${ok}: ${res.body}`);
    }
    assert.equal((await post(getLastError)).status, 200);
  });

  void it("answers a SOAP 1.2 envelope with a SOAP 1.1 VersionMismatch fault", async () => {
    const soap12 = getLastError.replace(
      "http://schemas.xmlsoap.org/soap/envelope/",
      "http://www.w3.org/2003/05/soap-envelope",
    );
    const res = await post(soap12, { "content-type": 'application/soap+xml; charset=utf-8; action="x"' });
    assertFault(res, "soap:VersionMismatch", /SOAP 1\.2 envelope/);
  });

  void it("faults an unknown method, malformed XML, a DTD and an empty body", async () => {
    assertFault(
      await post(getLastError.replace(/getLastError/g, "dropTables")),
      "soap:Client",
      /Unknown method dropTables/,
    );
    assertFault(
      await post('<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><oops>'),
      "soap:Client",
      /Not well-formed XML/,
    );
    // The reader judges elements as they open: an undeclared prefix is refused at its element.
    assertFault(await post("<soap:Envelope><oops>"), "soap:Client", /prefix "soap" .* is not declared/);
    assertFault(await post(`<!DOCTYPE x>${getLastError}`), "soap:Client", /must not contain a DTD/);
    assertFault(await post(""), "soap:Client", /empty/);
  });

  void it("faults a body over the connector's own limit", async () => {
    const big = soapRequest({ method: "getLastError", ticket: "x".repeat(BODY_LIMIT) });
    assertFault(
      await post(big),
      "soap:Client",
      new RegExp(`larger than the connector endpoint's limit of ${BODY_LIMIT} bytes`),
    );
  });

  void it("faults content types that are not SOAP 1.1, and a missing one", async () => {
    assertFault(
      await post(getLastError, { "content-type": "application/json" }),
      "soap:Client",
      /sent as text\/xml, not application\/json/,
    );
    assertFault(await post(getLastError, {}), "soap:Client", /without a Content-Type/);
  });

  void it("answers other HTTP methods with a fault and Allow", async () => {
    const res = await service().app.inject({ method: "DELETE", url: "/connector" });
    assert.equal(res.headers["allow"], "GET, HEAD, POST");
    assertFault(
      { status: res.statusCode, contentType: String(res.headers["content-type"]), body: res.body },
      "soap:Client",
      /by POST, not DELETE/,
      405,
    );
  });
});
