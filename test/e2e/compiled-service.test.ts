import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test, type TestContext } from "node:test";
import { freePort } from "../../src/testing/system.ts";
import { call, workspace, type Workspace } from "./processes.ts";

/**
 * The service as the README's quick start runs it: `npm start` serves the compiled JavaScript in
 * `dist/` (no TypeScript at run time), prints the banner whose commands answer at once, passes its
 * probes, is reached by the compiled operator CLI (`bin/ledger-bridge.mjs`) and stops cleanly on
 * SIGTERM. `npm test` builds `dist/` first when the sources changed (its `pretest`); run alone, this
 * file does the same.
 */
const ROOT = join(import.meta.dirname, "..", "..");

function buildIfStale(): void {
  const result = spawnSync(process.execPath, ["scripts/build.mjs", "--if-stale"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  assert.equal(result.status, 0, `the build failed:\n${result.stdout}\n${result.stderr}`);
}

function childEnv(ws: Workspace): NodeJS.ProcessEnv {
  // DATABASE_URL of the suite names the server, not the test's database: only the workspace decides.
  const { DATABASE_URL: _server, ...rest } = process.env;
  return { ...rest, ...ws.env };
}

/** The command line of a process, as /proc shows it (NUL-separated arguments joined by spaces). */
function commandLine(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
}

interface Started {
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

/** Spawns `command` in its own process group (killed when the test ends) and waits for the banner. */
async function startUntilBanner(
  t: TestContext,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<Started> {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const group = child.pid ?? 0;
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-group, "SIGKILL");
      await exited;
    }
  });
  const started = Date.now();
  while (!out.includes("API reference:")) {
    if (child.exitCode !== null) assert.fail(`${command} exited (${child.exitCode}):\n${out}\n${err}`);
    assert.ok(Date.now() - started < 150_000, `${command} did not print its banner:\n${out}\n${err}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { out: () => out, err: () => err, exited };
}

test("npm start serves dist/: the quick start's banner and commands, probes, the compiled CLI, a clean stop", async (t) => {
  buildIfStale();
  const ws = await workspace(t);
  // Its own process group, so that the test's end reaches npm, its shell and the service alike.
  const service = await startUntilBanner(t, "npm", ["start"], childEnv(ws));
  const out = service.out();

  // The banner as the README's quick start shows it: the simulator and the demo data on by default.
  assert.match(
    out,
    new RegExp(`^ledger-bridge is running at ${ws.url}  \\(store: (pglite|postgres), simulator: on\\)$`, "m"),
  );
  const secretKey = /Secret key\s+(sk_live_\w+)/.exec(out)?.[1] ?? "";
  const endUserId =
    /Demo end user\s+(eu_\w+)\s+\(simulated company file "Demo Company"\)/.exec(out)?.[1] ?? "";
  assert.ok(secretKey && endUserId, out);
  // Every read command the banner prints answers 200 as printed.
  const reads = out.split("\n").filter((line) => /^\s*curl -s /.test(line) && !line.includes(" -X "));
  assert.equal(reads.length, 3, out);
  for (const line of reads) {
    const target = /curl -s "?([^"\s]+)"?/.exec(line)?.[1] ?? "";
    const headers = Object.fromEntries(
      [...line.matchAll(/-H "([^:]+): ([^"]+)"/g)].map((m) => [m[1] ?? "", m[2] ?? ""]),
    );
    const res = await fetch(target, { headers });
    assert.equal(res.status, 200, `${line}\n${await res.text()}`);
  }
  // The banner's passthrough: the message is checked against the schema table the build carries.
  const passthrough = await call(
    ws,
    secretKey,
    "POST",
    `/v1/end-users/${endUserId}/passthrough/ledger_desktop`,
    {
      body: "<CustomerQueryRq><MaxReturned>3</MaxReturned></CustomerQueryRq>",
      contentType: "application/xml",
    },
  );
  assert.equal(passthrough.status, 200, await passthrough.clone().text());
  const invalid = await call(ws, secretKey, "POST", `/v1/end-users/${endUserId}/passthrough/ledger_desktop`, {
    body: "<CustomerQueryRq><NoSuchElement/></CustomerQueryRq>",
    contentType: "application/xml",
  });
  assert.equal(invalid.status, 400, "an element the schema does not know is refused");
  assert.equal(((await invalid.json()) as { error: { code: string } }).error.code, "PASSTHROUGH_INVALID_XML");

  for (const probe of ["/livez", "/readyz"]) {
    assert.equal((await fetch(`${ws.url}${probe}`)).status, 200, probe);
  }
  // The console's static files are copied into dist/ by the build (decision 0026).
  for (const [asset, type] of [
    ["/console", /^text\/html/],
    ["/console/console.js", /^text\/javascript/],
    ["/console/console.css", /^text\/css/],
  ] as const) {
    const res = await fetch(`${ws.url}${asset}`);
    assert.equal(res.status, 200, asset);
    assert.match(res.headers.get("content-type") ?? "", type, asset);
    assert.ok((await res.text()).length > 100, asset);
  }

  // The compiled CLI reaches the service over its admin channel; the service it names runs dist/.
  const cli = spawnSync(process.execPath, ["bin/ledger-bridge.mjs", "projects", "list"], {
    cwd: ROOT,
    env: childEnv(ws),
    encoding: "utf8",
  });
  assert.equal(cli.status, 0, `${cli.stdout}\n${cli.stderr}`);
  const pid = Number(/using the running service \(pid (\d+)\)/.exec(cli.stderr)?.[1]);
  assert.ok(pid > 0, cli.stderr);
  const serviceCommand = commandLine(pid);
  assert.match(serviceCommand, /\bdist\/main\.js\b/, serviceCommand);
  assert.doesNotMatch(serviceCommand, /tsx|\.ts\b/, serviceCommand);

  // SIGTERM to the service (as a supervisor sends it): it shuts down cleanly and npm reports its exit.
  process.kill(pid, "SIGTERM");
  assert.equal(await service.exited, 0, `npm start did not stop cleanly:\n${service.err()}`);
});

test("behind a published port or a proxy (PUBLIC_URL elsewhere), the simulated end users reach the service itself", async (t) => {
  buildIfStale();
  const ws = await workspace(t);
  // As in a container: the public URL names a port this process does not listen on.
  const elsewhere = `http://127.0.0.1:${await freePort()}`;
  const service = await startUntilBanner(t, process.execPath, ["--enable-source-maps", "dist/main.js"], {
    ...childEnv(ws),
    PUBLIC_URL: elsewhere,
  });
  const out = service.out();
  assert.match(out, new RegExp(`running at ${elsewhere} `));
  assert.doesNotMatch(out, /not connected yet/, out);
  const secretKey = /Secret key\s+(sk_live_\w+)/.exec(out)?.[1] ?? "";
  const endUserId = /Demo end user\s+(eu_\w+)/.exec(out)?.[1] ?? "";
  const health = await call(ws, secretKey, "GET", "/v1/ledger-desktop/health-check", { endUserId });
  assert.equal(health.status, 200, await health.text());
});

/** Relative files named by `new URL("./…", import.meta.url)` in the built sources, by module. */
function assetsNamedInSources(dir: string, out: Array<{ module: string; asset: string }> = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (relative(join(ROOT, "src"), path) !== "testing") assetsNamedInSources(path, out);
    } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
      const text = readFileSync(path, "utf8");
      for (const match of text.matchAll(/new URL\(\s*"(\.{1,2}\/[^"]+)",\s*import\.meta\.url\s*\)/g)) {
        out.push({ module: path, asset: match[1] ?? "" });
      }
    }
  }
  return out;
}

test("the build carries every file the compiled code reads beside itself", () => {
  buildIfStale();
  const named = assetsNamedInSources(join(ROOT, "src"));
  // The generated tables of the schema, the versions and the names at least.
  assert.ok(named.length >= 3, JSON.stringify(named));
  for (const { module, asset } of named) {
    const compiled = join(ROOT, "dist", relative(join(ROOT, "src"), module)).replace(/\.ts$/, ".js");
    assert.ok(existsSync(compiled), `${compiled} is built`);
    const target = join(compiled, "..", asset);
    assert.ok(
      existsSync(target),
      `${relative(ROOT, module)} reads ${asset}: ${relative(ROOT, target)} is in dist/`,
    );
  }
});
