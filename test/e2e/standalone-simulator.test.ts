import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { CompanyFile } from "../../src/simulator/ledger/company-file.ts";
import { demoInvoiceCount } from "../../src/simulator/ledger/index.ts";
import { startSystem } from "../../src/testing/system.ts";
import { bringOnline, eventually } from "./helpers.ts";

/**
 * `npm run simulator`: a standalone simulated end user, as its own process, pointed at a running
 * service (here in-process, simulator mode off) only through the auth session's setup link. It
 * completes the setup, answers calls, and keeps its company file in a JSON file across runs.
 */
const ROOT = join(import.meta.dirname, "..", "..");

/** `npm run simulator` with these flags and settings, until it exits: its exit code and what it wrote to stderr. */
async function runSimulator(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/simulator/main.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, stderr };
}

test("npm run simulator follows a setup link, answers calls and keeps its company file", async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  };
  assert.equal(pkg.scripts.simulator, "tsx src/simulator/main.ts");
  const sys = await startSystem(t, { config: { CONNECTOR_HOLD_MS: "300" } });
  const dir = mkdtempSync(join(tmpdir(), "lb-sim-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const companyJson = join(dir, "company.json");

  const created = await sys.call("POST", "/v1/end-users", {
    body: { companyName: "Standalone Co", sourceId: "sa-1" },
  });
  assert.equal(created.status, 201);
  const endUserId = ((await created.json()) as { id: string }).id;
  const sessionResponse = await sys.call("POST", "/v1/auth-sessions", {
    body: { publishableKey: sys.project.keys.publishableLive, endUserId },
  });
  const session = (await sessionResponse.json()) as { id: string; clientSecret: string; authFlowUrl: string };

  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/simulator/main.ts",
      "--setup-url",
      session.authFlowUrl,
      "--company",
      "Standalone Co",
      // A barely slow computer: the flag is read and applied (decision 0034).
      "--latency",
      "soap:2,messageSet:1",
    ],
    {
      cwd: ROOT,
      env: { ...process.env, LEDGER_SIMULATOR_FILE: companyJson },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  t.after(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await exited;
  });

  const status = `${sys.url}/setup/${session.id}/status?clientSecret=${encodeURIComponent(session.clientSecret)}`;
  await eventually(
    `the setup completes (simulator output: ${output})`,
    async () => ((await (await fetch(status)).json()) as { state: string }).state === "completed",
    60_000,
  );
  assert.match(output, /Simulated end user "Standalone Co"/);
  assert.match(output, /\(latency soap:2,messageSet:1,request:0,record:0\)/);

  const health = await sys.call("GET", "/v1/ledger-desktop/health-check", { endUserId });
  assert.equal(health.status, 200, await health.clone().text());
  assert.equal(
    ((await health.json()) as { ledger: { companyName: string } }).ledger.companyName,
    "Standalone Co",
  );
  const added = await sys.call("POST", `/v1/end-users/${endUserId}/passthrough/ledger_desktop`, {
    body: "<CustomerAddRq><CustomerAdd><Name>Kept In The File</Name></CustomerAdd></CustomerAddRq>",
  });
  assert.equal(added.status, 200, await added.clone().text());

  child.kill("SIGTERM");
  assert.equal(await exited, 0, output);
  const kept = CompanyFile.restore(JSON.parse(readFileSync(companyJson, "utf8")), { now: () => Date.now() });
  assert.equal(kept.companyName, "Standalone Co");
  assert.ok(kept.recordsOf("Customer").some((r) => r.fields.some((f) => f.text === "Kept In The File")));
  // A new file holds the demo company (small by default: decision 0042).
  assert.equal(kept.count("Invoice"), demoInvoiceCount("small"));
});

test("npm run simulator refuses a company size it does not know, before contacting anything", async () => {
  const { code, stderr } = await runSimulator(
    ["--setup-url", "http://127.0.0.1:9/setup/x", "--size", "huge"],
    {
      LEDGER_SIMULATOR_SIZE: "",
    },
  );
  assert.equal(code, 2, stderr);
  assert.match(stderr, /--size: give small or large\./);
});

test("npm run simulator without a registration explains its flags", async () => {
  const { code, stderr } = await runSimulator([], {
    LEDGER_SIMULATOR_SETUP_URL: "",
    LEDGER_SIMULATOR_QWC: "",
  });
  assert.equal(code, 2);
  assert.match(stderr, /--setup-url/);
});

test("npm run simulator refuses a latency it cannot read, saying why, before contacting anything", async () => {
  const { code, stderr } = await runSimulator(
    ["--setup-url", "http://127.0.0.1:9/setup/x", "--latency", "soap:80,lag:5"],
    { LEDGER_SIMULATOR_LATENCY: "" },
  );
  assert.equal(code, 2, stderr);
  assert.match(stderr, /--latency: unknown key "lag"; the keys are soap, messageSet, request, record\./);
  assert.match(stderr, /--latency +how slow this computer is/);
});

test("npm run simulator --replay answers with a support bundle's answers and prints a divergence", async (t) => {
  // The bundle: a typed create recorded through another service and its simulated end user.
  const recorded = await startSystem(t, { config: { CONNECTOR_HOLD_MS: "300" } });
  const eu = await recorded.connectEndUser({ companyName: "Recorded Co" });
  await bringOnline(recorded, eu);
  const original = await recorded.call("POST", "/v1/ledger-desktop/customers", {
    endUserId: eu.endUserId,
    body: { name: "Bundled Customer" },
  });
  assert.equal(original.status, 201, await original.clone().text());
  const originalId = ((await original.json()) as { id: string }).id;
  const bundle = await recorded.call("GET", `/v1/end-users/${eu.endUserId}/support-bundle?since=1h`);
  assert.equal(bundle.status, 200);
  const dir = mkdtempSync(join(tmpdir(), "lb-sim-replay-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bundleFile = join(dir, "bundle.json");
  writeFileSync(bundleFile, await bundle.text());

  const sys = await startSystem(t, { config: { CONNECTOR_HOLD_MS: "300" } });
  const created = await sys.call("POST", "/v1/end-users", {
    body: { companyName: "Replay Co", sourceId: "rp-1" },
  });
  const endUserId = ((await created.json()) as { id: string }).id;
  const session = (await (
    await sys.call("POST", "/v1/auth-sessions", {
      body: { publishableKey: sys.project.keys.publishableLive, endUserId },
    })
  ).json()) as { id: string; clientSecret: string; authFlowUrl: string };
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/simulator/main.ts", "--setup-url", session.authFlowUrl, "--replay", bundleFile],
    {
      cwd: ROOT,
      env: { ...process.env, LEDGER_SIMULATOR_FILE: join(dir, "company.json") },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  t.after(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await exited;
  });
  const status = `${sys.url}/setup/${session.id}/status?clientSecret=${encodeURIComponent(session.clientSecret)}`;
  await eventually(
    `the setup completes (simulator output: ${output})`,
    async () => ((await (await fetch(status)).json()) as { state: string }).state === "completed",
    60_000,
  );

  // The same call is answered with the bundle's answer: the record ID of then.
  const again = await sys.call("POST", "/v1/ledger-desktop/customers", {
    endUserId,
    body: { name: "Bundled Customer" },
  });
  assert.equal(again.status, 201, await again.clone().text());
  assert.equal(((await again.json()) as { id: string }).id, originalId);
  // A call the bundle does not hold: answered by the simulator, printed as a divergence.
  const other = await sys.call("POST", `/v1/end-users/${endUserId}/passthrough/ledger_desktop`, {
    body: "<CustomerAddRq><CustomerAdd><Name>Not In The Bundle</Name></CustomerAdd></CustomerAddRq>",
  });
  assert.equal(other.status, 200, await other.clone().text());
  await eventually(`the divergence is printed (output: ${output})`, async () =>
    /divergence: .*Not In The Bundle/.test(output),
  );
  child.kill("SIGTERM");
  assert.equal(await exited, 0, output);
});
