import assert from "node:assert/strict";
import { test } from "node:test";
import { eventually } from "./helpers.ts";
import { call, runCli, startService, workspace, type Workspace } from "./processes.ts";

/**
 * `npm start` stopped and started again on existing data, with the CLI in between, all as child
 * processes on the suite's store: a command run while no service runs opens the store itself and
 * its write is there after the start; the simulated company file keeps what was written to it (it
 * lives in the store with the Requests); and the first call after the restart answers at once
 * instead of waiting for the simulated connector's next scheduled check-in.
 */
async function cliJson<T>(ws: Workspace, args: string[]): Promise<{ value: T; stderr: string }> {
  const result = await runCli(ws, args);
  assert.equal(result.code, 0, `ledger-bridge ${args.join(" ")}:\n${result.stdout}\n${result.stderr}`);
  return { value: JSON.parse(result.stdout) as T, stderr: result.stderr };
}

const ADD = `<CustomerAddRq><CustomerAdd><Name>Written Before Restart</Name></CustomerAdd></CustomerAddRq>`;
const FIND = `<CustomerQueryRq><FullName>Written Before Restart</FullName></CustomerQueryRq>`;

test("a restart keeps keys and simulated company files, and the first call does not wait for a check-in", async (t) => {
  // A scheduled check-in an hour away, and sessions that close after one idle second: after the
  // restart, only an immediate check-in can answer the first call.
  const ws = await workspace(t, { CONNECTOR_CHECK_IN_SECONDS: "3600", CONNECTOR_IDLE_CLOSE_MS: "1000" });
  const service = await startService(t, ws);
  const key = service.secretKey;
  const endUserId = service.demoEndUserId;
  const passthrough = `/v1/end-users/${endUserId}/passthrough/ledger_desktop`;
  // The banner appears once the demo connection is online: its first command works at once.
  const added = await call(ws, key, "POST", passthrough, { body: ADD, contentType: "application/xml" });
  assert.equal(added.status, 200, await added.clone().text());
  assert.match(await added.text(), /statusCode="0"/);
  const projects = await cliJson<{ id: string }[]>(ws, ["projects", "list"]);
  assert.equal(projects.value.length, 1);
  const projectId = projects.value[0]?.id ?? "";
  // The demo end user's simulated application becomes a Canadian 14.0 one (its file is kept).
  const reattached = await cliJson<{ reused: boolean; application: unknown }>(ws, [
    ...["end-users", "simulate", "--project", projectId, "--end-user", endUserId],
    ...["--xml-version", "14.0", "--country", "CA"],
  ]);
  assert.deepEqual(
    [reattached.value.reused, reattached.value.application],
    [true, { xmlVersion: "14.0", country: "CA" }],
  );
  assert.equal(await service.stop(), 0);

  // No service: the command opens the store itself; attaching a simulated connector needs a service.
  const offline = await cliJson<{ key: string }>(ws, [
    "keys",
    "create",
    "--project",
    projectId,
    "--mode",
    "test",
  ]);
  assert.match(offline.stderr, /using the (store in|database)/);
  const cannotSimulate = await runCli(ws, [
    "end-users",
    "simulate",
    "--project",
    projectId,
    "--end-user",
    endUserId,
  ]);
  assert.equal(cannotSimulate.code, 1);
  assert.match(cannotSimulate.stderr, /SIMULATOR=on/);

  const restartedAt = Date.now();
  const restarted = await startService(t, ws);
  assert.equal(restarted.secretKey, key, "the demo keys are kept");
  assert.equal(
    (await call(ws, offline.value.key, "GET", "/v1/end-users")).status,
    200,
    "written without the service",
  );

  // Let the start-up check-in finish and the idle window pass, so nothing but a check-in on demand
  // can answer: the next scheduled one is an hour away.
  await eventually(
    "the simulated connector checked in after the restart",
    async () => {
      const response = await call(ws, key, "GET", `/v1/end-users/${endUserId}`);
      const body = (await response.json()) as { integrationConnections: { lastCheckInAt: string | null }[] };
      const at = body.integrationConnections[0]?.lastCheckInAt;
      return typeof at === "string" && Date.parse(at) >= restartedAt - 1000;
    },
    30_000,
  );
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const first = await call(ws, key, "GET", "/v1/ledger-desktop/health-check", {
    endUserId,
    headers: { "svc-timeout-seconds": "20" },
  });
  assert.equal(first.status, 200, await first.clone().text());
  const found = await call(ws, key, "POST", passthrough, { body: FIND, contentType: "application/xml" });
  assert.equal(found.status, 200, await found.clone().text());
  assert.match(await found.text(), /<Name>Written Before Restart<\/Name>/, "the write survived the restart");
  // The restarted application is the Canadian 14.0 one: its check-in reported both again.
  assert.deepEqual(((await first.json()) as { ledger: Record<string, unknown> }).ledger.xmlVersion, "14.0");
  const seen = await call(ws, key, "GET", `/v1/end-users/${endUserId}`);
  const file = ((await seen.json()) as { integrationConnections: { companyFile: { country: string } }[] })
    .integrationConnections[0]?.companyFile;
  assert.equal(file?.country, "CA");
  assert.equal(await restarted.stop(), 0);
});
