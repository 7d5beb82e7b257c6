import assert from "node:assert/strict";
import { test } from "node:test";
import { call, runCli, startService, workspace, type Workspace } from "./processes.ts";

/**
 * The operator CLI beside a running service, as child processes on the suite's store: commands run
 * inside the service over its admin channel while it runs (their keys work at once and survive a
 * restart), and on the store directly while it does not. No command ever writes where the service
 * cannot see it.
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

test("projects and keys created, listed and revoked while the service runs, and after it stopped", async (t) => {
  const ws = await workspace(t);
  const service = await startService(t, ws);

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
  const refused = await call(ws, readOnly.value.key, "POST", "/v1/end-users", {
    body: JSON.stringify({ companyName: "X", sourceId: "x" }),
  });
  assert.equal(refused.status, 403);

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
  assert.equal(
    (await call(ws, readOnly.value.key, "GET", "/v1/end-users")).status,
    401,
    "a revoked key stops at once",
  );
  const again = await runCli(ws, ["keys", "revoke", "--project", projectId, "--key", readOnly.value.id]);
  assert.equal(again.code, 1);
  assert.equal(again.stdout.trim(), "no such active key");

  const projects = await cliJson<{ id: string }[]>(ws, ["projects", "list"]);
  assert.ok(projects.value.some((p) => p.id === projectId));
  const unknown = await runCli(ws, ["keys", "list", "--project", "proj_00000000000000000000000000"]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /No such project/);

  // Any end user gets a simulated connector and company file from the CLI (simulator mode).
  const endUser = await call(ws, liveKey, "POST", "/v1/end-users", {
    body: JSON.stringify({ companyName: "Attached From The CLI", sourceId: "cli-1" }),
  });
  assert.equal(endUser.status, 201);
  const endUserId = ((await endUser.json()) as { id: string }).id;
  const attached = await cliJson<{ connectionId: string; reused: boolean }>(ws, [
    "end-users",
    "simulate",
    "--project",
    projectId,
    "--end-user",
    endUserId,
  ]);
  assert.match(attached.value.connectionId, /^conn_/);
  assert.equal(attached.value.reused, false);
  const health = await call(ws, liveKey, "GET", "/v1/ledger-desktop/health-check", { endUserId });
  assert.equal(health.status, 200, await health.clone().text());
  assert.equal(
    ((await health.json()) as { ledger: { companyName: string } }).ledger.companyName,
    "Attached From The CLI",
  );

  assert.equal(await service.stop(), 0);

  // No service: the command opens the store itself.
  const offline = await cliJson<{ key: string }>(ws, [
    "keys",
    "create",
    "--project",
    projectId,
    "--mode",
    "test",
  ]);
  assert.match(offline.stderr, /using the (store in|database)/);
  assert.match(offline.value.key, /^sk_test_/);
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

  const restarted = await startService(t, ws);
  assert.equal(
    (await call(ws, offline.value.key, "GET", "/v1/end-users")).status,
    200,
    "written without the service",
  );
  assert.equal((await call(ws, liveKey, "GET", "/v1/end-users")).status, 200, "kept across the restart");
  assert.equal((await call(ws, readOnly.value.key, "GET", "/v1/end-users")).status, 401, "still revoked");
  const afterRestart = await call(ws, liveKey, "GET", "/v1/ledger-desktop/health-check", { endUserId });
  assert.equal(afterRestart.status, 200, "the attached simulated end user is back after the restart");
  assert.equal(await restarted.stop(), 0);
});

test("a second service on the same data directory", async (t) => {
  const ws = await workspace(t, { SIMULATOR: "off" });
  const first = await startService(t, ws);
  const port = Number(ws.env.PORT) + 1;
  if (ws.env.DATABASE_URL) {
    // PostgreSQL is shared by design: the second instance runs, and the CLI still reaches the first.
    const second = await startService(t, { ...ws, url: `http://127.0.0.1:${port}` }, { PORT: String(port) });
    const listed = await runCli(ws, ["projects", "list"]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stderr, new RegExp(`running service \\(pid ${first.child.pid}\\)`));
    await second.stop();
  } else {
    // The embedded store is opened by one process only: the second refuses to start and says why.
    const second = await runService(ws, { PORT: String(port) });
    assert.equal(second.code, 1);
    assert.match(second.stderr, new RegExp(`Another ledger-bridge service \\(pid ${first.child.pid} `));
  }
  assert.equal(await first.stop(), 0);
});

/** Runs the service to its exit (for one that must refuse to start). */
async function runService(
  ws: Workspace,
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  const { spawn } = await import("node:child_process");
  const { DATABASE_URL: _server, ...rest } = process.env;
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: new URL("../..", import.meta.url).pathname,
    env: { ...rest, ...ws.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, stderr };
}
