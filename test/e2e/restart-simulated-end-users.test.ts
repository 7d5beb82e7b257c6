import assert from "node:assert/strict";
import { test } from "node:test";
import { eventually } from "./helpers.ts";
import { call, startService, workspace } from "./processes.ts";

/**
 * `npm start` on existing data (a real child process, stopped and started again): the simulated
 * company file keeps what was written before the restart (it lives in the store with the Requests),
 * and the first call after the restart is answered at once instead of waiting for the simulated
 * connector's next scheduled check-in.
 */
const ADD = `<CustomerAddRq><CustomerAdd><Name>Written Before Restart</Name></CustomerAdd></CustomerAddRq>`;
const FIND = `<CustomerQueryRq><FullName>Written Before Restart</FullName></CustomerQueryRq>`;

test("a restart keeps the simulated company file and the first call does not wait for a check-in", async (t) => {
  // A scheduled check-in an hour away, and sessions that close after one idle second: without an
  // immediate check-in, a call after the restart would wait for the schedule.
  const ws = await workspace(t, { CONNECTOR_CHECK_IN_SECONDS: "3600", CONNECTOR_IDLE_CLOSE_MS: "1000" });
  const first = await startService(t, ws);
  const { secretKey: key, demoEndUserId: endUserId } = first;
  assert.match(key, /^sk_live_/);
  const passthrough = `/v1/end-users/${endUserId}/passthrough/ledger_desktop`;
  const added = await call(ws, key, "POST", passthrough, { body: ADD, contentType: "application/xml" });
  assert.equal(added.status, 200, await added.clone().text());
  assert.match(await added.text(), /statusCode="0"/);
  assert.equal(await first.stop(), 0);

  const restartedAt = Date.now();
  const second = await startService(t, ws);
  assert.equal(second.secretKey, key, "the demo keys are kept");
  // Let the start-up check-in finish and the idle window pass, so nothing but the fix can help.
  await eventually(
    "the simulated connector checked in after the restart",
    async () => {
      const response = await call(ws, key, "GET", `/v1/end-users/${endUserId}`);
      const body = (await response.json()) as { integrationConnections: { lastCheckInAt: string | null }[] };
      const at = body.integrationConnections[0]?.lastCheckInAt;
      return at !== null && at !== undefined && Date.parse(at) >= restartedAt - 1000;
    },
    30_000,
  );
  await new Promise((resolve) => setTimeout(resolve, 1500));

  const health = await call(ws, key, "GET", "/v1/ledger-desktop/health-check", {
    endUserId,
    headers: { "svc-timeout-seconds": "15" },
  });
  assert.equal(health.status, 200, await health.clone().text());

  const found = await call(ws, key, "POST", passthrough, { body: FIND, contentType: "application/xml" });
  assert.equal(found.status, 200, await found.clone().text());
  assert.match(await found.text(), /<Name>Written Before Restart<\/Name>/);
  assert.equal(await second.stop(), 0);
});
