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
  console.log(res.status, text.slice(0, 400));
  assert.equal(res.status, 200);
  const res2 = await sys.call("POST", `/v1/end-users/${eu.endUserId}/passthrough/ledger_desktop`, {
    body: { xml: "<CustomerAddRq><CustomerAdd><Name>New One</Name></CustomerAdd></CustomerAddRq>" },
  });
  console.log(res2.status, (await res2.text()).slice(0, 300));
  const hc = await sys.call("GET", `/v1/ledger-desktop/health-check`, { endUserId: eu.endUserId });
  console.log(hc.status, await hc.text());
});
