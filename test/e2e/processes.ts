import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { openTestStore } from "../../src/testing/harness.ts";
import { freePort } from "../../src/testing/system.ts";

/**
 * The service and the operator CLI as real child processes, run from their sources as `npm run dev`
 * and `npm run cli` do (src/main.ts, src/cli.ts; compiled-service.test.ts runs `npm start`'s dist/),
 * on the store the suite runs on (a fresh PGlite data directory, or a fresh database on the
 * PostgreSQL server named by DATABASE_URL).
 */
const ROOT = join(import.meta.dirname, "..", "..");

export interface Workspace {
  /** Environment shared by the service and the CLI: DATA_DIR, PORT, DATABASE_URL when set. */
  env: Record<string, string>;
  dataDir: string;
  url: string;
}

/** A data directory (and, on PostgreSQL, a database) removed when the test ends. */
export async function workspace(t: TestContext, env: Record<string, string> = {}): Promise<Workspace> {
  const dataDir = mkdtempSync(join(tmpdir(), "lb-op-"));
  const port = await freePort();
  const opened = await openTestStore();
  // The service and the CLI open the database themselves.
  await opened.store.close();
  t.after(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await opened.drop();
  });
  return {
    dataDir,
    url: `http://127.0.0.1:${port}`,
    env: {
      DATA_DIR: dataDir,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: "warn",
      ...(opened.url ? { DATABASE_URL: opened.url } : {}),
      ...env,
    },
  };
}

function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  // DATABASE_URL of the suite names the server, not the test's database: only `env` decides.
  const { DATABASE_URL: _server, ...rest } = process.env;
  return { ...rest, ...env };
}

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything the service printed on stdout (the banner). */
  stdout: () => string;
  stderr: () => string;
  /** The demo's live secret key, from the key file (a banner not written to a terminal has none). */
  secretKey: string;
  demoEndUserId: string;
  /** Stops with SIGTERM and waits for the exit. */
  stop(): Promise<number | null>;
}

/** Starts `src/main.ts` and waits for its banner (simulator on) or its "listening" log (off). */
export async function startService(
  t: TestContext,
  ws: Workspace,
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: ROOT,
    env: childEnv({ ...ws.env, ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    return exited;
  };
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  const simulator = (env.SIMULATOR ?? ws.env.SIMULATOR ?? "on") === "on";
  const url = env.PORT ? `http://127.0.0.1:${env.PORT}` : ws.url;
  const started = Date.now();
  while (!(simulator ? out.includes("API reference:") : await answers(`${url}/readyz`))) {
    if (child.exitCode !== null) assert.fail(`the service exited (${child.exitCode}):\n${out}\n${err}`);
    assert.ok(Date.now() - started < 150_000, `the service did not start:\n${out}\n${err}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const demo = simulator ? demoFile({ ...ws.env, ...env }) : null;
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    secretKey: demo?.keys.secretLive ?? "",
    demoEndUserId: demo?.endUserId ?? "",
    stop,
  };
}

/** `DATA_DIR/demo.json` (with PostgreSQL, `DATA_DIR/postgres-demo/demo.json`): the demo's keys. */
export function demoFilePath(env: Record<string, string | undefined>): string {
  const dir = env.DATABASE_URL ? join(env.DATA_DIR ?? "", "postgres-demo") : (env.DATA_DIR ?? "");
  return join(dir, "demo.json");
}

/** The demo's key file, which only its owner may read (mode 0600). */
export function demoFile(env: Record<string, string | undefined>): {
  endUserId: string;
  keys: { secretLive: string; secretTest: string };
} {
  const path = demoFilePath(env);
  assert.equal(statSync(path).mode & 0o777, 0o600, `${path} is readable by its owner only`);
  return JSON.parse(readFileSync(path, "utf8")) as ReturnType<typeof demoFile>;
}

/** Neither a live nor a test secret key appears in a process's output (issue 23). */
export function assertNoSecretKey(output: string): void {
  assert.doesNotMatch(output, /sk_(live|test)_[A-Za-z0-9]/, output);
}

/**
 * The banner's read commands as a shell would run them: `$KEY` is what the banner's own
 * `KEY=$(…)` line (printed when the output is not a terminal) gives, run by `sh`.
 */
export function bannerReads(
  banner: string,
): Array<{ line: string; url: string; headers: Record<string, string> }> {
  const keyLine = banner.split("\n").find((line) => /^\s*KEY=\$\(/.test(line));
  let key: string | undefined;
  if (keyLine !== undefined) {
    const shell = spawnSync("sh", ["-c", `${keyLine.trim()} && printf %s "$KEY"`], { encoding: "utf8" });
    assert.equal(shell.status, 0, `${keyLine}\n${shell.stderr}`);
    key = shell.stdout;
    assert.match(key, /^sk_live_/, keyLine);
  }
  return banner
    .split("\n")
    .filter((line) => /^\s*curl -s /.test(line) && !line.includes(" -X "))
    .map((line) => {
      const expanded = key === undefined ? line : line.replaceAll("$KEY", key);
      const url = /curl -s "?([^"\s]+)"?/.exec(expanded)?.[1] ?? "";
      const headers = Object.fromEntries(
        [...expanded.matchAll(/-H "([^:]+): ([^"]+)"/g)].map((m) => [m[1] ?? "", m[2] ?? ""]),
      );
      return { line, url, headers };
    });
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).status === 200;
  } catch {
    return false;
  }
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `ledger-bridge <args>` to its end. */
export async function runCli(
  ws: Workspace,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], {
    cwd: ROOT,
    env: childEnv({ ...ws.env, ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  return { code, stdout, stderr };
}

/** `fetch` with a Bearer key. */
export function call(
  ws: Workspace,
  key: string,
  method: string,
  path: string,
  init: { endUserId?: string; body?: string; contentType?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...init.headers };
  if (init.endUserId) headers["svc-end-user-id"] = init.endUserId;
  if (init.body !== undefined) headers["content-type"] = init.contentType ?? "application/json";
  return fetch(`${ws.url}${path}`, {
    method,
    headers,
    ...(init.body === undefined ? {} : { body: init.body }),
  });
}

/** A project's live keys, as `ledger-bridge projects create` prints them. */
export interface ProjectKeys {
  secretLive: string;
  publishableLive: string;
}

/** Creates a project with the operator CLI (through the running service's admin channel, if any). */
export async function createProjectByCli(ws: Workspace, name: string): Promise<ProjectKeys> {
  const result = await runCli(ws, ["projects", "create", "--name", name]);
  assert.equal(result.code, 0, result.stderr);
  return (JSON.parse(result.stdout) as { keys: ProjectKeys }).keys;
}

/** Follows the setup link as the end user does: the password shown and the .qwc downloaded. */
export async function registration(authFlowUrl: string): Promise<{ qwc: string; password: string }> {
  const page = await (await fetch(authFlowUrl)).text();
  const password = /<code id="password">([A-Za-z0-9]+)<\/code>/.exec(page)?.[1];
  assert.ok(password, "the setup page shows the password");
  const qwcUrl = new URL(authFlowUrl);
  qwcUrl.pathname = `${qwcUrl.pathname}/qwc`;
  return { qwc: await (await fetch(qwcUrl)).text(), password };
}

/** The `.qwc` with its AppURL pointed at another service instance. */
export const pointedAt = (qwc: string, baseUrl: string): string =>
  qwc.replace(/<AppURL>[^<]*<\/AppURL>/, `<AppURL>${baseUrl}/connector</AppURL>`);

/**
 * Creates an end user and an auth session over the API, then follows its setup link as the end user
 * does: the end user's ID, the `.qwc` registration and the password to give a simulated connector.
 */
export async function setUpEndUser(
  ws: Workspace,
  keys: ProjectKeys,
  companyName: string,
): Promise<{ endUserId: string; qwc: string; password: string }> {
  const created = await call(ws, keys.secretLive, "POST", "/v1/end-users", {
    body: JSON.stringify({ companyName, sourceId: companyName.toLowerCase().replace(/\W+/g, "-") }),
  });
  assert.equal(created.status, 201, await created.clone().text());
  const endUserId = ((await created.json()) as { id: string }).id;
  const session = await call(ws, keys.secretLive, "POST", "/v1/auth-sessions", {
    body: JSON.stringify({ publishableKey: keys.publishableLive, endUserId }),
  });
  assert.equal(session.status, 201, await session.clone().text());
  const setup = await registration(((await session.json()) as { authFlowUrl: string }).authFlowUrl);
  return { endUserId, ...setup };
}
