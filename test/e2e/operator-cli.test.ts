import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import {
  assertNoSecretKey,
  bannerReads,
  call,
  runCli,
  startService,
  workspace,
  type Workspace,
} from "./processes.ts";

/**
 * The operator CLI beside a running service, both as real child processes on the suite's store (a
 * PGlite data directory, or a PostgreSQL database): commands run inside the service over its admin
 * channel, so their keys work at once and a revoked key stops at once; the CLI attaches a simulated
 * connector and company file to any end user; a second service never opens the same embedded store.
 * (operator-restart.test.ts covers the CLI without a service and the restart.)
 */
async function cliJson<T>(ws: Workspace, args: string[]): Promise<{ value: T; stderr: string }> {
  const result = await runCli(ws, args);
  assert.equal(result.code, 0, `ledger-bridge ${args.join(" ")}:\n${result.stdout}\n${result.stderr}`);
  return { value: JSON.parse(result.stdout) as T, stderr: result.stderr };
}

interface CreatedProject {
  project: { id: string; name: string };
  keys: { secretLive: string; secretTest: string; publishableLive: string; publishableTest: string };
}

test("projects and keys created, listed and revoked while the service runs; a simulated end user attached", async (t) => {
  const ws = await workspace(t);
  const service = await startService(t, ws);

  // Every read command the banner prints answers 200 as printed (non-negotiable: the first curl
  // works). Its output is a pipe, not a terminal: no key in it, the commands read the key file.
  assertNoSecretKey(service.stdout() + service.stderr());
  const reads = bannerReads(service.stdout());
  assert.ok(reads.length >= 3, service.stdout());
  for (const { line, url, headers } of reads) {
    const res = await fetch(url, { headers });
    assert.equal(res.status, 200, `${line}\n${await res.text()}`);
  }

  const created = await cliJson<CreatedProject>(ws, ["projects", "create", "--name", "Operator project"]);
  assert.match(created.stderr, /using the running service \(pid \d+\)/);
  const projectId = created.value.project.id;
  const liveKey = created.value.keys.secretLive;
  assert.equal(
    (await call(ws, liveKey, "GET", "/v1/end-users")).status,
    200,
    "a new project's key works at once",
  );

  const readOnly = await cliJson<{ id: string; key: string; readOnly: boolean }>(ws, [
    "keys",
    "create",
    "--project",
    projectId,
    "--read-only",
  ]);
  assert.equal(readOnly.value.readOnly, true);
  assert.equal((await call(ws, readOnly.value.key, "GET", "/v1/end-users")).status, 200);
  const listed = await cliJson<{ id: string; revokedAt: string | null }[]>(ws, [
    "keys",
    "list",
    "--project",
    projectId,
  ]);
  assert.equal(listed.value.length, 5);
  assert.ok(listed.value.some((k) => k.id === readOnly.value.id && k.revokedAt === null));

  const revoked = await runCli(ws, ["keys", "revoke", "--project", projectId, "--key", readOnly.value.id]);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.equal(revoked.stdout.trim(), "revoked");
  assert.equal((await call(ws, readOnly.value.key, "GET", "/v1/end-users")).status, 401, "revoked at once");

  // Any end user gets a simulated connector and company file from the CLI (simulator mode).
  const endUser = await call(ws, liveKey, "POST", "/v1/end-users", {
    body: JSON.stringify({ companyName: "Attached From The CLI", sourceId: "cli-1" }),
  });
  assert.equal(endUser.status, 201);
  const endUserId = ((await endUser.json()) as { id: string }).id;
  const attached = await cliJson<{ connectionId: string; reused: boolean; online: boolean }>(ws, [
    "end-users",
    "simulate",
    "--project",
    projectId,
    "--end-user",
    endUserId,
  ]);
  assert.deepEqual([attached.value.reused, attached.value.online], [false, true]);
  const health = await call(ws, liveKey, "GET", "/v1/ledger-desktop/health-check", { endUserId });
  assert.equal(health.status, 200, await health.clone().text());
  assert.equal(
    ((await health.json()) as { ledger: { companyName: string } }).ledger.companyName,
    "Attached From The CLI",
  );

  // The simulated application can be an older version and another regional edition (decision 0016).
  const abroad = await call(ws, liveKey, "POST", "/v1/end-users", {
    body: JSON.stringify({ companyName: "Attached Abroad", sourceId: "cli-2" }),
  });
  const abroadId = ((await abroad.json()) as { id: string }).id;
  const refusedChoice = await runCli(ws, [
    ...["end-users", "simulate", "--project", projectId, "--end-user", abroadId],
    ...["--xml-version", "12.0"],
  ]);
  assert.notEqual(refusedChoice.code, 0);
  assert.match(refusedChoice.stderr, /13\.0, 14\.0, 15\.0, 16\.0/);
  const older = await cliJson<{ online: boolean; application: unknown }>(ws, [
    ...["end-users", "simulate", "--project", projectId, "--end-user", abroadId],
    ...["--xml-version", "13.0", "--country", "uk"],
  ]);
  assert.equal(older.value.online, true);
  assert.deepEqual(older.value.application, { xmlVersion: "13.0", country: "UK" });
  const seen = await call(ws, liveKey, "GET", `/v1/end-users/${abroadId}`);
  const file = ((await seen.json()) as { integrationConnections: { companyFile: unknown }[] })
    .integrationConnections[0]?.companyFile as { xmlVersion: string; country: string };
  assert.deepEqual([file.xmlVersion, file.country], ["13.0", "UK"]);

  await mirrorFromTheCli(ws, created.value, endUserId);
  await supportBundleFromTheCli(ws, endUserId);
  await billingFromTheCli(ws, projectId, liveKey, endUserId);
  await secondServiceOnTheSameDataDir(ws, service.child.pid ?? 0);
  assert.equal(await service.stop(), 0);
});

/**
 * The support bundle from the CLI (issue 28): the running service's bundle of the end user, named
 * by its ID alone; a bad window or an unknown end user exits 1 naming what is wrong.
 */
async function supportBundleFromTheCli(ws: Workspace, endUserId: string): Promise<void> {
  const printed = await cliJson<{
    objectType: string;
    bundleVersion: number;
    endUser: { id: string };
    requests: { request: { endUserId: string } }[];
  }>(ws, ["support-bundle", "--end-user", endUserId, "--since", "2h"]);
  assert.equal(printed.value.objectType, "support_bundle");
  assert.equal(printed.value.bundleVersion, 1);
  assert.equal(printed.value.endUser.id, endUserId);
  assert.ok(printed.value.requests.length > 0, "the mirror's Requests of the last two hours");
  assert.ok(printed.value.requests.every((r) => r.request.endUserId === endUserId));
  const badWindow = await runCli(ws, ["support-bundle", "--end-user", endUserId, "--since", "soon"]);
  assert.equal(badWindow.code, 1);
  assert.match(badWindow.stderr, /`since` must be/);
  const missing = await runCli(ws, ["support-bundle", "--end-user", "eu_00000000000000000000000000"]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /No such end user/);
}

interface MirrorPrinted {
  objectType: string;
  endUserId: string;
  resources: { resource: string; state: string; records: number; asOf: string | null }[];
}

/**
 * The mirror set and read with the CLI (issue 26), in the end user's own mode: it fills in the
 * running service and reads answer from it; a bad group changes nothing; `--off` deletes it.
 */
async function mirrorFromTheCli(ws: Workspace, created: CreatedProject, endUserId: string): Promise<void> {
  const projectId = created.project.id;
  const liveKey = created.keys.secretLive;
  const mirror = (id: string, ...more: string[]) => [
    "end-users",
    "mirror",
    "--project",
    projectId,
    "--end-user",
    id,
    ...more,
  ];
  const states = (printed: MirrorPrinted) => printed.resources.map((g) => [g.resource, g.state]);
  const set = await cliJson<MirrorPrinted>(ws, mirror(endUserId, "--resources", "invoices, customers"));
  assert.deepEqual([set.value.objectType, set.value.endUserId], ["mirror", endUserId]);
  assert.deepEqual(states(set.value), [
    ["customers", "filling"],
    ["invoices", "filling"],
  ]);
  const overHttp = async (
    key = liveKey,
    id = endUserId,
  ): Promise<{ status: number; body: MirrorPrinted }> => {
    const response = await call(ws, key, "GET", `/v1/end-users/${id}/mirror`);
    return { status: response.status, body: (await response.json()) as MirrorPrinted };
  };
  for (const started = Date.now(); ;) {
    const seen = (await overHttp()).body;
    if (seen.resources.every((g) => g.state === "ready")) break;
    assert.ok(Date.now() - started < 60_000, `the mirror never became ready: ${JSON.stringify(seen)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const printed = await cliJson<MirrorPrinted>(ws, mirror(endUserId));
  assert.deepEqual(printed.value, (await overHttp()).body, "the CLI prints what the API answers");
  assert.ok(printed.value.resources.every((g) => g.records > 0 && g.asOf !== null));
  const read = await call(ws, liveKey, "GET", "/v1/ledger-desktop/customers?limit=2", {
    endUserId,
    headers: { "svc-max-staleness-seconds": "3600" },
  });
  assert.equal(read.status, 200);
  assert.equal(((await read.json()) as { source: string }).source, "mirror");

  const refused = await runCli(ws, mirror(endUserId, "--resources", "customers,nonsense"));
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /`nonsense` is not a group that can be mirrored/);
  const missing = await runCli(ws, mirror("eu_00000000000000000000000000", "--resources", "customers"));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /No such end user/);
  assert.deepEqual(states((await overHttp()).body), states(printed.value), "nothing changed");

  // A test-mode end user's mirror is set in its own mode: the test key sees it, the live key does not.
  const testEndUser = await call(ws, created.keys.secretTest, "POST", "/v1/end-users", {
    body: JSON.stringify({ companyName: "Mirrored In Test", sourceId: "cli-mirror-test" }),
  });
  const testId = ((await testEndUser.json()) as { id: string }).id;
  const inTest = await cliJson<MirrorPrinted>(ws, mirror(testId, "--resources", "customers"));
  assert.deepEqual(states(inTest.value), [["customers", "paused"]], "no connection yet: paused");
  assert.deepEqual((await overHttp(created.keys.secretTest, testId)).body, inTest.value);
  assert.equal((await overHttp(liveKey, testId)).status, 404);

  const off = await cliJson<MirrorPrinted>(ws, mirror(endUserId, "--off"));
  assert.deepEqual(off.value.resources, []);
  assert.deepEqual((await overHttp()).body.resources, []);
  const alsoOff = await cliJson<MirrorPrinted>(ws, mirror(testId, "--resources", ""));
  assert.deepEqual(alsoOff.value.resources, []);
}

/**
 * Billing and standing set with the CLI hold in the running service at once (decision 0019): a
 * quota counted in application Requests, shown by `projects usage`; a failed payment; a disabled
 * project.
 */
async function billingFromTheCli(
  ws: Workspace,
  projectId: string,
  liveKey: string,
  endUserId: string,
): Promise<void> {
  const health = () => call(ws, liveKey, "GET", "/v1/ledger-desktop/health-check", { endUserId });
  const codeOf = async (response: Response): Promise<string> =>
    ((await response.json()) as { error?: { code?: string } }).error?.code ?? `HTTP ${response.status}`;
  interface Usage {
    period: string;
    monthlyRequestQuota: number | null;
    live: { requests: number; remaining: number | null };
  }
  const used = (await cliJson<Usage>(ws, ["projects", "usage", "--project", projectId])).value.live.requests;
  assert.ok(used >= 1, "the health check above was counted");
  const quota = await cliJson<{ monthlyRequestQuota: number }>(ws, [
    "projects",
    "set-quota",
    "--project",
    projectId,
    "--monthly-requests",
    String(used + 1),
  ]);
  assert.equal(quota.value.monthlyRequestQuota, used + 1);
  assert.equal((await health()).status, 200);
  const over = await health();
  assert.equal(over.status, 402);
  assert.equal(await codeOf(over), "BILLING_REQUIRED");
  const usage = await cliJson<Usage>(ws, ["projects", "usage", "--project", projectId]);
  assert.deepEqual(usage.value.live, { requests: used + 1, remaining: 0 });
  assert.match(usage.value.period, /^\d{4}-\d{2}$/);
  await cliJson(ws, ["projects", "set-quota", "--project", projectId, "--monthly-requests", "none"]);

  await cliJson(ws, ["projects", "set-billing", "--project", projectId, "--payment", "failed"]);
  const unpaid = await health();
  assert.equal(unpaid.status, 402);
  assert.equal(await codeOf(unpaid), "PAYMENT_FAILED");
  await cliJson(ws, ["projects", "set-billing", "--project", projectId, "--payment", "ok"]);

  await cliJson(ws, ["projects", "disable", "--project", projectId, "--reason", "Operator test"]);
  const denied = await call(ws, liveKey, "GET", "/v1/end-users");
  assert.equal(denied.status, 403);
  assert.equal(await codeOf(denied), "PERMISSION_DENIED");
  await cliJson(ws, ["projects", "enable", "--project", projectId]);
  assert.equal((await call(ws, liveKey, "GET", "/v1/end-users")).status, 200);
  assert.equal((await health()).status, 200);

  const bad = await runCli(ws, [
    "projects",
    "set-quota",
    "--project",
    projectId,
    "--monthly-requests",
    "lots",
  ]);
  assert.equal(bad.code, 2, "a usage error");
}

/**
 * PGlite: a second service refuses to open the same data directory and names the first. (On
 * PostgreSQL, sharing is by design: a second instance simply runs, without the admin channel.)
 */
async function secondServiceOnTheSameDataDir(ws: Workspace, firstPid: number): Promise<void> {
  if (ws.env.DATABASE_URL) return;
  const { DATABASE_URL: _server, ...inherited } = process.env;
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: new URL("../..", import.meta.url).pathname,
    env: { ...inherited, ...ws.env, PORT: String(Number(ws.env.PORT) + 1), SIMULATOR: "off" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  assert.equal(code, 1);
  assert.match(stderr, new RegExp(`Another ledger-bridge service \\(pid ${firstPid} `));
}
