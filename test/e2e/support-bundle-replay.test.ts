import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { replayBundle } from "../../src/simulation/replay.ts";
import type { BundleDocument } from "../../src/simulator/replay.ts";
import { startSystem, type System, type ConnectedEndUser } from "../../src/testing/system.ts";
import { E2E_CONFIG, READ, bringOnline, customerAdd, eventually, json, passthroughPath } from "./helpers.ts";

/**
 * Replay of a support bundle (issue 28 item 2): a failing exchange is recorded through HTTP, the
 * SOAP connector and the simulated application — a stale revision refused by the application, a
 * write whose answer was lost and recovered at the next session — its bundle fetched from the API,
 * and replayed against a fresh service whose simulated connector answers with the bundle's answers:
 * the same Requests end the same way (status, outcome, code, timeline). A bundle whose message was
 * changed makes the service send what the bundle does not hold: a divergence.
 */
async function recordFailures(sys: System, eu: ConnectedEndUser): Promise<BundleDocument> {
  const as = { endUserId: eu.endUserId };
  const created = await json<{ id: string; revisionNumber: string }>(
    await sys.call("POST", "/v1/ledger-desktop/customers", { ...as, body: { name: "Replay Customer" } }),
  );
  const renamed = await sys.call("POST", `/v1/ledger-desktop/customers/${created.id}`, {
    ...as,
    body: { revisionNumber: created.revisionNumber, name: "Replay Customer Renamed" },
  });
  assert.equal(renamed.status, 200, await renamed.clone().text());
  const stale = await sys.call("POST", `/v1/ledger-desktop/customers/${created.id}`, {
    ...as,
    body: { revisionNumber: created.revisionNumber, name: "Replay Customer Stale" },
  });
  const staleBody = await json<{ error: { code: string } }>(stale);
  assert.equal(staleBody.error.code, "LEDGER_REVISION_NUMBER_STALE");

  eu.connector.setFault({ kind: "lose_answer_after_write" });
  const before = eu.ledger.companyFile(eu.companyFilePath).count("Customer");
  const lost = await sys.call("POST", passthroughPath(eu.endUserId), {
    body: customerAdd("Lost Answer Ltd"),
    headers: { prefer: "respond-async" },
  });
  const lostId = (await json<{ id: string }>(lost)).id;
  await eventually(
    "applied",
    async () => eu.ledger.companyFile(eu.companyFilePath).count("Customer") === before + 1,
  );
  void eu.connector.checkInNow();
  await eventually(
    "recovered",
    async () =>
      (await json<{ status: string }>(await sys.call("GET", `/v1/requests/${lostId}`))).status ===
      "succeeded",
  );
  assert.equal((await sys.call("POST", passthroughPath(eu.endUserId), { body: READ })).status, 200);
  const bundle = await sys.call("GET", `/v1/end-users/${eu.endUserId}/support-bundle?since=1h`);
  assert.equal(bundle.status, 200);
  return json<BundleDocument>(bundle);
}

test("a recorded failure path replays to the same outcomes, codes and timelines", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Replay Co" });
  await bringOnline(sys, eu);
  const bundle = await recordFailures(sys, eu);
  assert.equal(bundle.requests.length, 5);

  const report = await replayBundle(bundle);
  assert.deepEqual(report.divergences, []);
  assert.deepEqual(report.skipped, []);
  assert.deepEqual(report.unplayed, []);
  assert.equal(report.requests.length, 5);
  for (const r of report.requests) assert.ok(r.same, JSON.stringify(r, null, 2));
  const [, , stale, lost] = report.requests;
  assert.equal(stale?.replayed?.errorCode, "LEDGER_REVISION_NUMBER_STALE");
  assert.deepEqual(lost?.replayed?.timeline, ["queued", "sent", "outcome_unknown", "succeeded"]);
  assert.equal(lost?.replayed?.recovered, true);
  assert.ok(report.ok);

  // The same from the command line, as support runs it on a laptop: exit 0, the report on stdout.
  const dir = mkdtempSync(join(tmpdir(), "bundle-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "bundle.json");
  writeFileSync(file, JSON.stringify(bundle));
  const cli = await runCommand(["--import", "tsx", "src/cli.ts", "replay", file]);
  assert.equal(cli.code, 0, cli.stderr);
  const printed = JSON.parse(cli.stdout) as { ok: boolean; requests: { same: boolean }[] };
  assert.equal(printed.ok, true);
  assert.equal(printed.requests.length, 5);
  assert.match(cli.stderr, /each ended as recorded/);
});

/** Runs node with `args` from the repository's root; its exit code and output. */
function runCommand(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: join(import.meta.dirname, "../.."),
      env: { ...process.env, DATABASE_URL: "", LOG_LEVEL: "silent" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

test("a message the bundle does not hold is answered by the simulator and reported as a divergence", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Divergent Co" });
  await bringOnline(sys, eu);
  const created = await sys.call("POST", "/v1/ledger-desktop/customers", {
    endUserId: eu.endUserId,
    body: { name: "Recorded Name" },
  });
  assert.equal(created.status, 201);
  assert.equal((await sys.call("POST", passthroughPath(eu.endUserId), { body: READ })).status, 200);
  const bundle = await json<BundleDocument>(
    await sys.call("GET", `/v1/end-users/${eu.endUserId}/support-bundle?since=1h`),
  );
  // The service will be asked for another name than the one the bundle's message holds.
  const first = bundle.requests[0];
  assert.ok(first?.messages.input.json);
  first.messages.input.json = { body: { name: "Another Name" } };

  const report = await replayBundle(bundle);
  assert.equal(report.ok, false);
  assert.equal(report.divergences.length, 1, JSON.stringify(report.divergences));
  const [divergence] = report.divergences;
  assert.equal(divergence?.index, 0);
  assert.match(divergence?.sent ?? "", /Another Name/);
  assert.match(divergence?.expected ?? "", /Recorded Name/);
  assert.equal(divergence?.expectedRequestId, first.request.id);
  // The normal simulator answered it: the create still succeeded; the read after it is the bundle's
  // next message but one, so the recorded create is the one never played.
  assert.equal(report.requests[0]?.replayed?.status, "succeeded");
  assert.deepEqual(report.unplayed, [first.request.id]);
  assert.equal(report.requests[1]?.same, true);
});
