import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import pg from "pg";
import { freePort } from "../../src/testing/system.ts";
import { startWebhookReceiver, verifySignature } from "../../src/testing/webhook-receiver.ts";
import { eventually } from "./helpers.ts";
import { demoFile } from "./processes.ts";

/**
 * Nothing is lost (issue 9, "Done means"): the service runs as a real child process (`npm start`'s
 * entry point with the simulated end user), requests complete while the receiver is down, the
 * process is killed with SIGKILL, the receiver comes up, and a new process on the same store
 * delivers every event at least once, each with a valid signature.
 */
const ROOT = new URL("../../", import.meta.url).pathname;
const REQUESTS = 10;

interface Service {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startService(env: Record<string, string>): Service {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function createDatabase(): Promise<{ url: string | undefined; drop: () => Promise<void> }> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return { url: undefined, drop: async () => {} };
  const name = `lbtest_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

test(
  "events survive SIGKILL: a receiver down through a crash gets every event afterwards, signed",
  { timeout: 170_000 },
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), "lb-webhooks-crash-"));
    const database = await createDatabase();
    const receiver = await startWebhookReceiver(t);
    receiver.respond = () => ({ status: 503, body: "down for maintenance" });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_URL: base,
      DATA_DIR: dataDir,
      SIMULATOR: "on",
      LOG_LEVEL: "warn",
      RATE_LIMIT_MAX: "1000000",
      WEBHOOK_ALLOW_LOOPBACK: "on",
      WEBHOOK_ATTEMPT_TIMEOUT_MS: "2000",
      WEBHOOK_RETRY_SCHEDULE_MS: "0,500,1000,2000,3000,4000,6000,8000",
      ...(database.url ? { DATABASE_URL: database.url } : {}),
    };
    const running: Service[] = [];
    t.after(async () => {
      for (const service of running) {
        if (service.child.exitCode === null) service.child.kill("SIGKILL");
        await service.exited;
      }
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    const first = startService(env);
    running.push(first);
    // The banner says the demo is ready; its keys are in the key file (a pipe is not a terminal).
    await eventually(
      "the service printed its banner",
      async () => first.output().includes("API reference:"),
      60_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${first.output()}`);
    });
    const demo = demoFile(env);
    const banner = { key: demo.keys.secretLive, endUser: demo.endUserId };
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${banner.key}`,
          ...(body === undefined
            ? {}
            : { "content-type": typeof body === "string" ? "application/xml" : "application/json" }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      });

    const created = await call("POST", "/v1/webhook-endpoints", {
      url: receiver.url,
      eventTypes: ["request.*"],
    });
    assert.equal(created.status, 201, await created.clone().text());
    const endpoint = (await created.json()) as { id: string; secret: string };

    const ids: string[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const res = await call(
        "POST",
        `/v1/end-users/${banner.endUser}/passthrough/ledger_desktop`,
        "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>",
        { prefer: "respond-async" },
      );
      assert.equal(res.status, 202, await res.clone().text());
      ids.push(((await res.json()) as { id: string }).id);
    }
    await eventually(
      "every request completed",
      async () => {
        for (const id of ids) {
          const r = (await (await call("GET", `/v1/requests/${id}`)).json()) as { status: string };
          if (r.status !== "succeeded") return false;
        }
        return true;
      },
      60_000,
    );
    await receiver.waitFor(
      "first attempts refused by the receiver",
      (r) => new Set(r.map((w) => w.id)).size >= REQUESTS / 2,
      30_000,
    );

    first.child.kill("SIGKILL");
    assert.equal(await first.exited, null, "killed, not exited");
    const beforeRestart = receiver.received.length;
    receiver.respond = () => ({ status: 200, body: "ok" });

    const second = startService(env);
    running.push(second);
    await receiver
      .waitFor(
        "every request's event delivered after the restart",
        (r) => ids.every((id) => r.some((w, index) => index >= beforeRestart && w.event.data.id === id)),
        90_000,
      )
      .catch((error: unknown) => {
        throw new Error(`${String(error)}\nreceived ${receiver.received.length}\n${second.output()}`);
      });
    for (const webhook of receiver.received) {
      verifySignature(endpoint.secret, webhook);
      assert.equal(webhook.event.type, "request.succeeded");
    }
    const byRequest = new Map(receiver.received.map((w) => [w.event.data.id, w.id]));
    assert.equal(
      new Set(byRequest.values()).size,
      REQUESTS,
      "one event (one webhook-id) per request, however often sent",
    );
    const deliveries = await eventually(
      "the log shows every delivery succeeded",
      async () => {
        const res = await call("GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=100`);
        const page = (await res.json()) as { data: Array<{ eventId: string; status: string }> };
        return page.data.length === REQUESTS && page.data.every((d) => d.status === "succeeded")
          ? page.data
          : null;
      },
      30_000,
    );
    assert.deepEqual(deliveries.map((d) => d.eventId).sort(), [...byRequest.values()].sort());
    second.child.kill("SIGTERM");
    await second.exited;
  },
);
