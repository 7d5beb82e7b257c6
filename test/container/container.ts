import assert from "node:assert/strict";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test, type TestContext } from "node:test";
import { randomAlphanumeric } from "../../src/platform/random.ts";
import { freePort } from "../../src/testing/system.ts";

/**
 * `npm run test:container`, outside `npm test` (it needs a container engine and takes minutes):
 * builds the Dockerfile's image and runs it alone (embedded store, the `/data` volume kept across a
 * restart) and as compose.yaml runs it (on PostgreSQL, simulator on). Checked: the image runs as a
 * non-root user, its health check (`/livez` and `/readyz`) passes, it starts without a demo project
 * and no key is ever in its log, the operator CLI reaches the service inside the container (a
 * project it creates answers), a stop is clean (exit 0); under compose the banner's commands answer
 * with the key read from the container's `demo.json`, as the banner says.
 *
 * Engine: Docker when `docker info` answers, else Podman (with podman-compose); with neither, the
 * tests are skipped and say so. Base images: `node:20-bookworm-slim` and `postgres:17-bookworm` are
 * pulled; where no container registry is reachable, stand-ins with the same contract are built from
 * Debian's packages (test/container/stand-ins: debootstrap's base system, the Node binary running
 * this test and the machine's certificate authorities, Debian's PostgreSQL) and passed as
 * NODE_IMAGE and POSTGRES_IMAGE. Stand-ins are kept between runs (`<engine> rmi` them to rebuild).
 */
const ROOT = join(import.meta.dirname, "..", "..");
const NODE_IMAGE = "node:20-bookworm-slim";
const POSTGRES_IMAGE = "postgres:17-bookworm";
const STAND_IN = "localhost/ledger-bridge-stand-in";
const IMAGE = "localhost/ledger-bridge:container-test";
const MINUTE = 60_000;

interface Engine {
  name: "docker" | "podman";
  /** The compose command (`docker compose`, `docker-compose` or `podman-compose`), if any. */
  compose: string[] | null;
  env: NodeJS.ProcessEnv;
}

function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {},
): SpawnSyncReturns<string> {
  return spawnSync(command, args, {
    cwd: ROOT,
    env: options.env ?? process.env,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    timeout: options.timeoutMs ?? 20 * MINUTE,
    ...(options.input === undefined ? {} : { input: options.input }),
  });
}

function ok(result: SpawnSyncReturns<string>, what: string): string {
  assert.equal(
    result.status,
    0,
    `${what} failed (${result.status ?? result.signal ?? result.error?.message}):\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`,
  );
  return result.stdout;
}

/**
 * Podman on a host with hybrid cgroups (v1 controllers beside a v2 tree) and low hard limits, as
 * this project's machines have, needs runc instead of crun and container limits under the host's:
 * written to a containers.conf of the test's own (CONTAINERS_CONF), leaving the machine's alone.
 */
function podmanEnv(): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), "lb-podman-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  const lines = ["[containers]", 'default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]'];
  const cgroups = run("podman", ["info", "--format", "{{.Host.CgroupsVersion}}"]).stdout.trim();
  if (cgroups === "v1" && run("runc", ["--version"]).status === 0) lines.push("[engine]", 'runtime = "runc"');
  writeFileSync(join(dir, "containers.conf"), `${lines.join("\n")}\n`);
  // Images in Docker's format keep their HEALTHCHECK (Podman's default OCI format drops it).
  return { ...process.env, CONTAINERS_CONF: join(dir, "containers.conf"), BUILDAH_FORMAT: "docker" };
}

function detectEngine(): Engine | string {
  if (run("docker", ["info"], { timeoutMs: MINUTE }).status === 0) {
    const compose = run("docker", ["compose", "version"]).status === 0 ? ["docker", "compose"] : null;
    const legacy = run("docker-compose", ["version"]).status === 0 ? ["docker-compose"] : null;
    return { name: "docker", compose: compose ?? legacy, env: process.env };
  }
  if (run("podman", ["info"], { timeoutMs: MINUTE }).status === 0) {
    const compose = run("podman-compose", ["version"]).status === 0 ? ["podman-compose"] : null;
    return { name: "podman", compose, env: podmanEnv() };
  }
  return "no container engine answers here (`docker info` and `podman info` fail): install docker.io or podman";
}

const engine = detectEngine();
const skip = typeof engine === "string" ? engine : false;

function cli(e: Engine, args: string[], timeoutMs?: number): SpawnSyncReturns<string> {
  return run(e.name, args, { env: e.env, ...(timeoutMs ? { timeoutMs } : {}) });
}

const imageExists = (e: Engine, name: string): boolean => cli(e, ["image", "inspect", name]).status === 0;

/** The base images: the official ones when they can be pulled, otherwise stand-ins built here. */
function baseImages(t: TestContext, e: Engine): { node: string; postgres: string } {
  if (
    cli(e, ["pull", NODE_IMAGE], 5 * MINUTE).status === 0 &&
    cli(e, ["pull", POSTGRES_IMAGE], 5 * MINUTE).status === 0
  ) {
    return { node: NODE_IMAGE, postgres: POSTGRES_IMAGE };
  }
  t.diagnostic("no container registry reachable: building stand-in base images from Debian's packages");
  const debian = `${STAND_IN}/debian:bookworm`;
  if (!imageExists(e, debian)) {
    assert.equal(
      run("debootstrap", ["--version"]).status,
      0,
      "stand-ins need debootstrap (apt-get install debootstrap)",
    );
    const rootfs = mkdtempSync(join(tmpdir(), "lb-rootfs-"));
    try {
      ok(run("debootstrap", ["--variant=minbase", "bookworm", rootfs]), "debootstrap");
      ok(
        run("sh", ["-c", `tar -C "${rootfs}" -c . | ${e.name} import - ${debian}`], { env: e.env }),
        "import",
      );
    } finally {
      rmSync(rootfs, { recursive: true, force: true });
    }
  }
  const node = `${STAND_IN}/node:20`;
  if (!imageExists(e, node)) {
    const context = mkdtempSync(join(tmpdir(), "lb-node-image-"));
    try {
      cpSync(join(ROOT, "test/container/stand-ins/node/Containerfile"), join(context, "Containerfile"));
      cpSync(process.execPath, join(context, "node"));
      // The machine's certificate authorities (Debian's bundle), or none beyond Node's own.
      const authorities = "/etc/ssl/certs/ca-certificates.crt";
      if (existsSync(authorities)) cpSync(authorities, join(context, "ca-certificates.crt"));
      else writeFileSync(join(context, "ca-certificates.crt"), "");
      cpSync(join(dirname(process.execPath), "..", "lib", "node_modules", "npm"), join(context, "npm"), {
        recursive: true,
      });
      ok(
        cli(e, [
          "build",
          "-t",
          node,
          "--build-arg",
          `BASE_IMAGE=${debian}`,
          "-f",
          join(context, "Containerfile"),
          context,
        ]),
        "node stand-in",
      );
    } finally {
      rmSync(context, { recursive: true, force: true });
    }
  }
  const postgres = `${STAND_IN}/postgres:bookworm`;
  if (!imageExists(e, postgres)) {
    const context = join(ROOT, "test/container/stand-ins/postgres");
    ok(
      cli(e, [
        "build",
        "-t",
        postgres,
        "--build-arg",
        `BASE_IMAGE=${debian}`,
        "-f",
        join(context, "Containerfile"),
        context,
      ]),
      "postgres stand-in",
    );
  }
  return { node, postgres };
}

/** Waits until `read()` contains `text` `count` times; returns what it read. */
async function waitFor(read: () => string, text: string, count = 1, timeoutMs = 3 * MINUTE): Promise<string> {
  const started = Date.now();
  for (;;) {
    const out = read();
    if (out.split(text).length - 1 >= count) return out;
    assert.ok(
      Date.now() - started < timeoutMs,
      `"${text}" did not appear within ${timeoutMs / 1000} s:\n${out.slice(-4000)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The container's health check passes (Docker runs it on its own; Podman without systemd is asked). */
async function waitHealthy(e: Engine, container: string): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (e.name === "podman") {
      if (cli(e, ["healthcheck", "run", container]).status === 0) return;
    } else if (
      cli(e, ["inspect", "--format", "{{.State.Health.Status}}", container]).stdout.trim() === "healthy"
    ) {
      return;
    }
    assert.ok(Date.now() - started < 2 * MINUTE, `${container} is not healthy`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** No live or test secret key in a log (issue 23). */
function assertNoSecretKey(log: string): void {
  assert.doesNotMatch(log, /sk_(live|test)_[A-Za-z0-9]/, log.slice(-4000));
}

/**
 * Runs every read command of the banner (the last one printed) with `$KEY` the secret key: each
 * answers 200. A container's log is not a terminal, so the banner prints no key: it is read from
 * the key file the banner names, inside the container.
 */
async function bannerCommandsAnswer(banner: string, secretKey: string): Promise<void> {
  const last = banner.slice(banner.lastIndexOf("ledger-bridge is running at"));
  const reads = last.split("\n").filter((line) => /^\s*curl -s /.test(line) && !line.includes(" -X "));
  assert.equal(reads.length, 3, last);
  for (const line of reads) {
    const expanded = line.replaceAll("$KEY", secretKey);
    const target = /curl -s "?([^"\s]+)"?/.exec(expanded)?.[1] ?? "";
    const headers = Object.fromEntries(
      [...expanded.matchAll(/-H "([^:]+): ([^"]+)"/g)].map((m) => [m[1] ?? "", m[2] ?? ""]),
    );
    const res = await fetch(target, { headers });
    assert.equal(res.status, 200, `${line}\n${await res.text()}`);
  }
}

let images: { node: string; postgres: string } | undefined;

test(
  "the image: built multi-stage, non-root, healthy, no demo project and no key in its log, serving from its /data volume, which survives a restart",
  { skip, timeout: 60 * MINUTE },
  async (t) => {
    const e = engine as Engine;
    images = baseImages(t, e);
    const started = Date.now();
    ok(
      cli(
        e,
        ["build", "-t", IMAGE, "--build-arg", `NODE_IMAGE=${images.node}`, "-f", "Dockerfile", "."],
        30 * MINUTE,
      ),
      "build",
    );
    const size = Number(cli(e, ["image", "inspect", "--format", "{{.Size}}", IMAGE]).stdout.trim());
    t.diagnostic(
      `${e.name} build: ${((Date.now() - started) / 1000).toFixed(0)} s; image ${(size / 1e6).toFixed(0)} MB`,
    );
    assert.equal(cli(e, ["image", "inspect", "--format", "{{.Config.User}}", IMAGE]).stdout.trim(), "node");
    assert.match(
      cli(e, ["image", "inspect", "--format", "{{json .Config.Healthcheck}}", IMAGE]).stdout,
      /healthcheck\.mjs/,
    );
    assert.match(
      cli(e, ["image", "inspect", "--format", "{{json .Config.Volumes}}", IMAGE]).stdout,
      /"\/data"/,
    );

    const suffix = randomAlphanumeric(8).toLowerCase();
    const name = `lb-ct-${suffix}`;
    const volume = `lb-ct-data-${suffix}`;
    const port = await freePort();
    t.after(() => {
      cli(e, ["rm", "-f", name]);
      cli(e, ["volume", "rm", "-f", volume]);
    });
    const url = `http://127.0.0.1:${port}`;
    ok(
      cli(e, [
        "run",
        "-d",
        "--name",
        name,
        "-p",
        `127.0.0.1:${port}:8080`,
        "-v",
        `${volume}:/data`,
        "-e",
        `PUBLIC_URL=${url}`,
        IMAGE,
      ]),
      "run",
    );
    const logs = (): string => {
      const result = cli(e, ["logs", name]);
      return result.stdout + result.stderr;
    };
    // NODE_ENV=production: the simulator is off, no demo project is created and no key is printed.
    await waitFor(logs, "ledger-bridge listening (simulator off)");
    assert.equal(
      ok(cli(e, ["exec", name, "id", "-u"]), "id").trim(),
      "1000",
      "the service runs as the node user",
    );
    await waitHealthy(e, name);
    for (const probe of ["/livez", "/readyz"])
      assert.equal((await fetch(`${url}${probe}`)).status, 200, probe);
    assert.doesNotMatch(logs(), /Demo end user|API reference:/);
    assert.equal(cli(e, ["exec", name, "test", "-e", "/data/demo.json"]).status, 1, "no demo key file");

    // The operator CLI inside the container reaches the service over its admin socket in /data.
    const listed = cli(e, ["exec", name, "ledger-bridge", "projects", "list"]);
    ok(listed, "ledger-bridge projects list");
    assert.match(listed.stderr, /using the running service \(pid \d+\)/);
    assert.deepEqual(JSON.parse(listed.stdout), [], "no demo project");
    const created = cli(e, ["exec", name, "ledger-bridge", "projects", "create", "--name", "First"]);
    ok(created, "ledger-bridge projects create");
    const secretKey = (JSON.parse(created.stdout) as { keys: { secretLive: string } }).keys.secretLive;
    const endUsers = (): Promise<Response> =>
      fetch(`${url}/v1/end-users`, { headers: { authorization: `Bearer ${secretKey}` } });
    assert.equal((await endUsers()).status, 200);

    // A stop is clean, and the store in the volume survives it.
    ok(cli(e, ["stop", "-t", "60", name]), "stop");
    assert.equal(cli(e, ["inspect", "--format", "{{.State.ExitCode}}", name]).stdout.trim(), "0", logs());
    ok(cli(e, ["start", name]), "start");
    await waitFor(logs, "ledger-bridge listening (simulator off)", 2);
    await waitHealthy(e, name);
    assert.equal((await endUsers()).status, 200, "the project and its key are read back from the volume");
    assertNoSecretKey(logs());
  },
);

test(
  "compose.yaml: the service on PostgreSQL with the simulator on",
  { skip, timeout: 60 * MINUTE },
  async (t) => {
    const e = engine as Engine;
    if (!e.compose) {
      t.skip(`no compose command for ${e.name} (docker compose, docker-compose or podman-compose)`);
      return;
    }
    images ??= baseImages(t, e);
    const [command = "", ...prefix] = e.compose;
    const project = `lbct${randomAlphanumeric(8).toLowerCase()}`;
    const port = await freePort();
    const env = {
      ...e.env,
      LEDGER_BRIDGE_PORT: String(port),
      NODE_IMAGE: images.node,
      POSTGRES_IMAGE: images.postgres,
    };
    const compose = (args: string[], timeoutMs?: number): SpawnSyncReturns<string> =>
      run(command, [...prefix, "-p", project, "-f", "compose.yaml", ...args], {
        env,
        ...(timeoutMs ? { timeoutMs } : {}),
      });
    t.after(() => compose(["down", "-v"]));
    ok(compose(["up", "-d", "--build"], 30 * MINUTE), "compose up");
    const containers = (): string =>
      cli(e, [
        "ps",
        "-a",
        "--filter",
        `label=com.docker.compose.project=${project}`,
        "--format",
        "{{.Names}}",
      ]).stdout;
    const service = containers()
      .split("\n")
      .find((n) => n.includes("ledger-bridge"));
    assert.ok(service, `the service's container:\n${containers()}`);
    const logs = (): string => {
      const result = cli(e, ["logs", service]);
      return result.stdout + result.stderr;
    };
    const banner = await waitFor(logs, "API reference:");
    assert.match(
      banner,
      new RegExp(
        `ledger-bridge is running at http://localhost:${port}  \\(store: postgres, simulator: on\\)`,
      ),
    );
    await waitHealthy(e, service);
    // A log, not a terminal: the banner names the key file in the container instead of the keys.
    assertNoSecretKey(logs());
    assert.match(banner, /Keys {14}\/data\/postgres-demo\/demo\.json/);
    const demo = ok(cli(e, ["exec", service, "cat", "/data/postgres-demo/demo.json"]), "cat demo.json");
    const secretKey = (JSON.parse(demo) as { keys: { secretLive: string } }).keys.secretLive;
    // The banner names localhost; the published port is on 127.0.0.1.
    await bannerCommandsAnswer(
      banner.replaceAll(`http://localhost:${port}`, `http://127.0.0.1:${port}`),
      secretKey,
    );
    const ready = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { store: string };
    assert.equal(ready.store, "postgres");
    const restarts = cli(e, ["inspect", "--format", "{{.RestartCount}}", service]).stdout.trim();
    t.diagnostic(`compose: service restarts before PostgreSQL was ready: ${restarts || "n/a"}`);
  },
);
