import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { documentsParsed } from "../ledger/xml/parse.ts";
import {
  answerWith,
  applicationOf,
  handSetup,
  openSession,
  type HandSetup,
} from "../testing/hand-session.ts";
import { startSystem, type System } from "../testing/system.ts";
import { SOAP_CONTENT_TYPE, soapAction, soapRequest } from "./soap.ts";

/**
 * An answer that reaches the connector endpoint is read twice in all, once per document: the SOAP
 * envelope (which decodes the embedded answer) and the answer itself (status, summary and typed
 * records from one tree). Counted with the reader's own count, so a second parse anywhere on the
 * way (a summary, a decoder, a recovery) fails here.
 */
let system: System | undefined;
before(async () => {
  system = await startSystem(null, {
    config: { CONNECTOR_HOLD_MS: "150", RATE_LIMIT_MAX: "1000000", CONNECTION_OFFLINE_AFTER_MS: "86400000" },
  });
});
after(() => system?.close());

/** Posts receiveResponseXML and returns the body unparsed (the client's own parse is not counted). */
async function receive(s: HandSetup, ticket: string, response: string): Promise<string> {
  const res = await fetch(`${s.sys.url}/connector`, {
    method: "POST",
    headers: { "content-type": SOAP_CONTENT_TYPE, soapaction: soapAction("receiveResponseXML") },
    body: soapRequest({ method: "receiveResponseXML", ticket, response, hresult: "", message: "" }),
  });
  return res.text();
}

async function queued(s: HandSetup, method: "GET" | "POST", path: string, body?: string): Promise<string> {
  const res = await s.sys.call(method, path, {
    endUserId: s.eu.endUserId,
    ...(body === undefined ? {} : { body }),
    headers: { prefer: "respond-async" },
  });
  assert.equal(res.status, 202, await res.clone().text());
  return ((await res.json()) as { id: string }).id;
}

void describe("an answer through the connector endpoint", () => {
  for (const [kind, method, path, body] of [
    ["a typed list page", "GET", "/v1/ledger-desktop/customers?limit=5", undefined],
    [
      "a passthrough write",
      "POST",
      "passthrough",
      "<CustomerAddRq><CustomerAdd><Name>Read Once Ltd</Name></CustomerAdd></CustomerAddRq>",
    ],
  ] as const) {
    void it(`${kind}: the envelope and the answer are each parsed once`, async () => {
      const s = await handSetup(system, "Read Once");
      const ticket = await openSession(s);
      const app = await applicationOf(s);
      const target =
        path === "passthrough" ? `/v1/end-users/${s.eu.endUserId}/passthrough/ledger_desktop` : path;
      const id = await queued(s, method, target, body);
      const answer = await answerWith(app, await s.hand.send(ticket));
      const before = documentsParsed();
      const reply = await receive(s, ticket, answer);
      assert.equal(documentsParsed() - before, 2, "one parse of the envelope, one of the answer");
      assert.match(reply, /<receiveResponseXMLResult>50<\/receiveResponseXMLResult>/);
      const request = (await (await s.sys.call("GET", `/v1/requests/${id}`)).json()) as {
        status: string;
        result: unknown;
      };
      assert.equal(request.status, "succeeded", JSON.stringify(request));
      assert.ok(request.result !== null);
    });
  }
});
