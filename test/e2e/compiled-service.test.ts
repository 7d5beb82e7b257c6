import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test, type TestContext } from "node:test";
import { freePort } from "../../src/testing/system.ts";
import {
  assertNoSecretKey,
  bannerReads,
  call,
  demoFile,
  demoFilePath,
  workspace,
  type Workspace,
} from "./processes.ts";

/**
 * The service as the README's quick start runs it: `npm start` in a terminal serves the compiled
 * JavaScript in `dist/` (no TypeScript at run time), prints the banner with the keys and commands
 * that answer at once, passes its probes, is reached by the compiled operator CLI
 * (`bin/ledger-bridge.mjs`) and stops cleanly on SIGTERM. Started as the container image starts it
 * (the Dockerfile's environment), it creates no demo project and prints no key. `npm test` builds
 * `dist/` first when the sources changed (its `pretest`); run alone, this file does the same.
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

/**
 * Spawns `command` in its own process group (killed when the test ends) and waits for the banner.
 * Its output is a pipe; `terminal` runs it in a pseudo-terminal instead (util-linux `script`), as
 * a person typing the README's quick start sees it.
 */
async function startUntilBanner(
  t: TestContext,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { terminal?: boolean; until?: string } = {},
): Promise<Started> {
  const [file, argv] = options.terminal
    ? ["script", ["-qfec", [command, ...args].join(" "), "/dev/null"]]
    : [command, args];
  const child = spawn(file, argv, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const until = options.until ?? "API reference:";
  let out = "";
  let err = "";
  // A terminal ends its lines with CR LF.
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString().replaceAll("\r\n", "\n")));
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
  while (!out.includes(until)) {
    if (child.exitCode !== null) assert.fail(`${command} exited (${child.exitCode}):\n${out}\n${err}`);
    assert.ok(Date.now() - started < 150_000, `${command} did not print its banner:\n${out}\n${err}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { out: () => out, err: () => err, exited };
}

test("npm start in a terminal serves dist/: the quick start's banner with keys and commands, probes, the compiled CLI, a clean stop", async (t) => {
  buildIfStale();
  const ws = await workspace(t);
  // Its own process group, so that the test's end reaches npm, its shell and the service alike; in a
  // terminal, as the README's quick start is typed.
  const service = await startUntilBanner(t, "npm", ["start"], childEnv(ws), { terminal: true });
  const out = service.out();

  // The banner as the README's quick start shows it: the simulator and the demo data on by default,
  // and in a terminal the keys themselves.
  assert.match(
    out,
    new RegExp(`^ledger-bridge is running at ${ws.url}  \\(store: (pglite|postgres), simulator: on\\)$`, "m"),
  );
  const secretKey = /Secret key\s+(sk_live_\w+)/.exec(out)?.[1] ?? "";
  const endUserId =
    /Demo end user\s+(eu_\w+)\s+\(simulated company file "Demo Company"\)/.exec(out)?.[1] ?? "";
  assert.ok(secretKey && endUserId, out);
  assert.equal(secretKey, demoFile(ws.env).keys.secretLive, "the keys kept in DATA_DIR/demo.json");
  // Every read command the banner prints answers 200 as printed.
  const reads = bannerReads(out);
  assert.equal(reads.length, 3, out);
  assert.ok(
    reads.every(({ line }) => line.includes(`Bearer ${secretKey}`)),
    out,
  );
  for (const { line, url, headers } of reads) {
    const res = await fetch(url, { headers });
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
  // Its output is a pipe (a log), not a terminal: the banner names the key file and prints no key.
  assertNoSecretKey(out + service.err());
  assert.ok(out.includes(`Keys              ${demoFilePath(ws.env)}`), out);
  const { keys, endUserId } = demoFile(ws.env);
  const health = await call(ws, keys.secretLive, "GET", "/v1/ledger-desktop/health-check", { endUserId });
  assert.equal(health.status, 200, await health.text());
  // The banner's commands, run as a shell would (the key read from the file), answer at once; they
  // name the public URL, which here leads nowhere, so they are sent to the listener itself.
  const reads = bannerReads(out);
  assert.equal(reads.length, 3, out);
  for (const { line, url, headers } of reads) {
    const res = await fetch(url.replace(elsewhere, ws.url), { headers });
    assert.equal(res.status, 200, `${line}\n${await res.text()}`);
  }
});

/**
 * The environment the Dockerfile's runtime stage sets (its last `ENV` instructions), read from the
 * file so this test follows it.
 */
function dockerfileEnv(): Record<string, string> {
  const text = readFileSync(join(ROOT, "Dockerfile"), "utf8").replace(/\\\n/g, " ");
  const stages = text.split(/^FROM /m);
  const runtime = stages.at(-1) ?? "";
  const env: Record<string, string> = {};
  for (const [, args = ""] of runtime.matchAll(/^ENV\s+(.+)$/gm)) {
    for (const [, name = "", value = ""] of args.matchAll(/([A-Z_][A-Z0-9_]*)=("[^"]*"|\S*)/g)) {
      env[name] = value.replace(/^"|"$/g, "");
    }
  }
  return env;
}

test("started as the container image starts it (the Dockerfile's environment): no demo project, no key in its output", async (t) => {
  buildIfStale();
  const image = dockerfileEnv();
  assert.equal(image.NODE_ENV, "production", JSON.stringify(image));
  assert.equal(image.SIMULATOR, undefined, "the image leaves SIMULATOR to its production default");
  const ws = await workspace(t);
  const { SIMULATOR: _simulator, NODE_ENV: _nodeEnv, ...machine } = childEnv(ws);
  // The image's environment; only what `docker run` maps differently here: the volume (DATA_DIR),
  // the published port on loopback, and the store the suite runs on.
  const env = {
    ...machine,
    ...image,
    DATA_DIR: ws.env.DATA_DIR,
    PORT: ws.env.PORT,
    HOST: "127.0.0.1",
    PUBLIC_URL: ws.url,
    // Every log line, scanned for keys below.
    LOG_LEVEL: "info",
  };
  const service = await startUntilBanner(t, process.execPath, ["--enable-source-maps", "dist/main.js"], env, {
    until: "ledger-bridge listening (simulator off)",
  });
  assert.equal((await fetch(`${ws.url}/readyz`)).status, 200);
  const output = service.out() + service.err();
  assertNoSecretKey(output);
  assert.doesNotMatch(output, /Demo end user|Secret key|demo\.json/, output);
  assert.ok(!existsSync(demoFilePath(ws.env)), "no demo key file");
  // No project at all: the operator creates the first one with the CLI.
  const cli = spawnSync(process.execPath, ["bin/ledger-bridge.mjs", "projects", "list"], {
    cwd: ROOT,
    env,
    encoding: "utf8",
  });
  assert.equal(cli.status, 0, `${cli.stdout}\n${cli.stderr}`);
  assert.deepEqual(JSON.parse(cli.stdout), [], "no demo project");
  // No simulated company file on offer either.
  const simulate = await fetch(`${ws.url}/setup/authsess_x/simulate?clientSecret=x`, { method: "POST" });
  assert.equal(simulate.status, 404);
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
