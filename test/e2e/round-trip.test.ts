import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem } from "../../src/testing/system.ts";

test("a sync passthrough read travels API → connector → company file → caller", async (t) => {
  const sys = await startSystem(t, { config: { CONNECTOR_HOLD_MS: "300" } });
  const eu = await sys.connectEndUser({ companyName: "Acme Books" });
  eu.connector.start();
  const t0 = Date.now();
  for (;;) {
    const body = await (await sys.call("GET", `/v1/end-users/${eu.endUserId}`)).json();
    if (body.integrationConnections[0]?.status === "online") break;
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(Date.now() - t0 < 10000, "connection never came online");
  }
  const res = await sys.call("POST", `/v1/end-users/${eu.endUserId}/passthrough/ledger_desktop`, {
    body: "<CustomerQueryRq><MaxReturned>2</MaxReturned></CustomerQueryRq>",
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(String(res.headers.get("content-type")), /^application\/xml/);
  assert.match(text, /<CustomerQueryRs\b[^>]*statusCode="0"/, text);
  assert.equal((text.match(/<CustomerRet>/g) ?? []).length, 2, text);

  const res2 = await sys.call("POST", `/v1/end-users/${eu.endUserId}/passthrough/ledger_desktop`, {
    body: { xml: "<CustomerAddRq><CustomerAdd><Name>New One</Name></CustomerAdd></CustomerAddRq>" },
  });
  const added = (await res2.json()) as { xml: string };
  assert.equal(res2.status, 200, JSON.stringify(added));
  assert.match(added.xml, /<CustomerAddRs\b[^>]*statusCode="0"/, added.xml);
  assert.match(added.xml, /<Name>New One<\/Name>/, added.xml);
  assert.equal(sys.ledger.companyFile(eu.companyFilePath).count("Customer") > 0, true);

  const hc = await sys.call("GET", `/v1/ledger-desktop/health-check`, { endUserId: eu.endUserId });
  const health = (await hc.json()) as { status: string; ledger: { companyName: string } };
  assert.equal(hc.status, 200, JSON.stringify(health));
  assert.equal(health.status, "ok");
  assert.equal(health.ledger.companyName, "Acme Books");
  assert.match(String(hc.headers.get("svc-request-id")), /^req_/);
});
