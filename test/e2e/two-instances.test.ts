import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { SimulatedLedgerApplication } from "../../src/simulator/ledger/index.ts";
import { SimulatedWebConnector } from "../../src/simulator/web-connector.ts";
import { freePort } from "../../src/testing/system.ts";
import { customerAdd, eventually, type RequestResource } from "./helpers.ts";
import {
  call,
  createProjectByCli,
  pointedAt,
  runCli,
  setUpEndUser,
  startService,
  workspace,
} from "./processes.ts";

/**
 * Two service processes on one PostgreSQL (issue 8 §2): the API is called on instance A while the
 * end user's connector talks to instance B. A request submitted on A is handed to the session held
 * on B in real time, and the sync caller on A is answered when B completes it. Then B is killed with
 * SIGKILL while a write is in the application's hands and more are queued; the connector fails over
 * to A. Every write is applied exactly once (counted in the simulated company file), none is lost,
 * and clients retrying with their Idempotency-Keys get the same Requests back.
 */
const skip = process.env.DATABASE_URL
  ? false
  : "two service processes need a shared PostgreSQL (DATABASE_URL); the embedded store belongs to one process";

const ENV = {
  SIMULATOR: "off",
  INSTANCE_LEASE_MS: "2000",
  CONNECTOR_HOLD_MS: "2000",
  RATE_LIMIT_MAX: "1000000",
  API_KEY_CACHE_MS: "60000",
};

test(
  "API on one instance, connector on another; the connector's instance SIGKILLed mid-flight",
  { skip },
  async (t) => {
    const ws = await workspace(t, ENV);
    const a = await startService(t, ws);
    const portB = await freePort();
    const dirB = mkdtempSync(join(tmpdir(), "lb-b-"));
    t.after(() => rmSync(dirB, { recursive: true, force: true }));
    const urlB = `http://127.0.0.1:${portB}`;
    const b = await startService(t, ws, { PORT: String(portB), PUBLIC_URL: urlB, DATA_DIR: dirB });
    const keys = await createProjectByCli(ws, "Two instances");

    const { endUserId, qwc, password } = await setUpEndUser(ws, keys, "Two Instances Co");

    const ledger = new SimulatedLedgerApplication({ xmlVersion: "16.0" });
    const path = "C:\\Company Files\\Two Instances Co.qbw";
    ledger.createCompanyFile(path, { companyName: "Two Instances Co", seed: "sample" });
    ledger.openCompanyFile(path);
    const file = ledger.companyFile(path);
    const onB = new SimulatedWebConnector({
      qwc: pointedAt(qwc, urlB),
      password,
      application: ledger,
      noOpPauseMs: 20,
    });
    t.after(() => onB.stop());
    onB.start();

    const passthrough = `/v1/end-users/${endUserId}/passthrough/ledger_desktop`;
    const write = (name: string, key: string): Promise<Response> =>
      call(ws, keys.secretLive, "POST", passthrough, {
        body: customerAdd(name),
        contentType: "application/xml",
        headers: { "idempotency-key": key, prefer: "respond-async" },
      });
    const request = async (id: string): Promise<RequestResource> =>
      (await (await call(ws, keys.secretLive, "GET", `/v1/requests/${id}`)).json()) as RequestResource;

    await eventually("the connection is online (its first check-in reached B)", async () => {
      const res = await call(ws, keys.secretLive, "GET", `/v1/end-users/${endUserId}`);
      const body = (await res.json()) as { integrationConnections: { status: string }[] };
      return body.integrationConnections[0]?.status === "online";
    });

    // A sync call on A, answered through the session on B.
    const before = file.count("Customer");
    const sync = await call(ws, keys.secretLive, "POST", passthrough, {
      body: customerAdd("Across Instances"),
      contentType: "application/xml",
    });
    assert.equal(sync.status, 200, await sync.clone().text());
    assert.match(await sync.text(), /statusCode="0"/);
    assert.equal(file.count("Customer"), before + 1);

    // A key revoked through A stops working on B with B's next call, although B has it cached and
    // its cache lifetime here is a minute: A's revocation reaches B's cache through the store.
    const projects = JSON.parse((await runCli(ws, ["projects", "list"])).stdout) as Array<{
      id: string;
      name: string;
    }>;
    const projectId = projects.find((p) => p.name === "Two instances")?.id ?? "";
    const made = await runCli(ws, ["keys", "create", "--project", projectId, "--kind", "secret"]);
    assert.equal(made.code, 0, made.stderr);
    const extra = JSON.parse(made.stdout) as { id: string; key: string };
    const onInstanceB = (): Promise<Response> =>
      fetch(`${urlB}/v1/end-users?limit=1`, { headers: { authorization: `Bearer ${extra.key}` } });
    assert.equal((await onInstanceB()).status, 200);
    const revoked = await runCli(ws, ["keys", "revoke", "--project", projectId, "--key", extra.id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    // Bounded well inside the minute B would otherwise keep the key.
    await eventually("B refuses the revoked key", async () => (await onInstanceB()).status === 401, 10_000);

    // Writes queued on A; the first one is in the application's hands (slow) when B dies.
    ledger.setFault({ kind: "slow_processing", ms: 1500 });
    const names = ["Kill One", "Kill Two", "Kill Three", "Kill Four"];
    const ids: string[] = [];
    for (const [i, name] of names.entries()) {
      const res = await write(name, `kill-${i}`);
      assert.equal(res.status, 202, await res.clone().text());
      ids.push(((await res.json()) as { id: string }).id);
    }
    await eventually("the first write is sent", async () => (await request(ids[0] ?? "")).status === "sent");
    b.child.kill("SIGKILL");
    await new Promise((resolve) => b.child.once("exit", resolve));
    ledger.setFault(null);
    await onB.stop();

    // The connector fails over to A with the same registration.
    const onA = new SimulatedWebConnector({
      qwc: pointedAt(qwc, ws.url),
      password,
      application: ledger,
      noOpPauseMs: 20,
      fileIdStamped: onB.hasStampedFileId,
    });
    t.after(() => onA.stop());
    onA.start();
    const settled = await eventually(
      "every write settled",
      async () => {
        const all = await Promise.all(ids.map(request));
        if (all.some((r) => r.status !== "succeeded" && r.status !== "failed")) {
          void onA.checkInNow();
          return null;
        }
        return all;
      },
      60_000,
    );
    for (const r of settled) assert.equal(r.status, "succeeded", JSON.stringify(r));
    assert.equal(settled[0]?.recovered, true, "the write in flight at the kill was recovered, not re-sent");
    // A write sent twice would fail as a duplicate name (so it would not be `succeeded` above) and the
    // count would show it: each name exists once.
    for (const name of names) {
      const named = file.recordsOf("Customer").filter((r) => file.fullNameOf(r) === name);
      assert.equal(named.length, 1, `${name} applied once`);
    }

    // Clients retrying with their keys get the same Requests; nothing is applied again.
    for (const [i, name] of names.entries()) {
      const again = await write(name, `kill-${i}`);
      assert.equal(((await again.json()) as { id: string }).id, ids[i]);
    }
    assert.equal(file.count("Customer"), before + 1 + names.length);
    // A graceful stop of the surviving instance (its connector stopped first).
    await onA.stop();
    assert.equal(await a.stop(), 0);
  },
);
