/**
 * The bench's end user (simulated Web Connector, company file and callers) on a worker thread
 * (bench/end-user-worker.ts), so that the service's thread does only the service's work, as in a
 * deployment where the connector runs on the end user's PC and the callers on other machines.
 */
import { Worker } from "node:worker_threads";
import { findConnectionById } from "../src/store/connections.ts";
import { loadSetup, qwcForSetup } from "../src/tenancy/auth-sessions.ts";
import type { System } from "../src/testing/system.ts";
import type { WorkerCommand, WorkerReply, WorkerSetup } from "./end-user-worker.ts";

/** The end user's side in a worker thread; commands are answered one at a time. */
export class EndUserThread {
  private readonly worker: Worker;
  private pending: ((reply: WorkerReply) => void) | null = null;

  constructor(setup: WorkerSetup) {
    // A worker does not inherit tsx's loader: register it, then load the TypeScript entry.
    const entry = new URL("./end-user-worker.ts", import.meta.url).href;
    const bootstrap = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
    this.worker = new Worker(bootstrap, { eval: true, workerData: setup });
    this.worker.on("message", (reply: WorkerReply) => this.pending?.(reply));
    this.worker.on("error", (error) => {
      console.error("bench worker failed:", error);
      process.exit(1);
    });
  }

  send<K extends WorkerReply["cmd"]>(command: WorkerCommand): Promise<Extract<WorkerReply, { cmd: K }>> {
    return new Promise((resolve) => {
      this.pending = (reply) => resolve(reply as Extract<WorkerReply, { cmd: K }>);
      this.worker.postMessage(command);
    });
  }

  async close(): Promise<void> {
    await this.send<"stopped">({ cmd: "stop" });
    await this.worker.terminate();
  }
}

/**
 * Same steps as `System.connectEndUser`: end user, auth session, `.qwc` + password from the setup.
 * `body` is the passthrough message the worker's callers send.
 */
export async function setUpEndUser(
  sys: System,
  body: string,
  companyName = "Bench Books",
): Promise<WorkerSetup> {
  const created = await sys.call("POST", "/v1/end-users", {
    body: { companyName, sourceId: `bench-${companyName}` },
  });
  const endUser = (await created.json()) as { id: string };
  const sessionResponse = await sys.call("POST", "/v1/auth-sessions", {
    body: { publishableKey: sys.project.keys.publishableLive, endUserId: endUser.id },
  });
  const session = (await sessionResponse.json()) as { id: string; clientSecret: string };
  const setup = await loadSetup(sys.deps, session.id, session.clientSecret);
  if (setup.state !== "waiting") throw new Error(`setup state ${setup.state}`);
  const connection = await findConnectionById(sys.deps.db, setup.connection.id);
  if (!connection) throw new Error("no connection");
  return {
    serviceUrl: sys.url,
    secretKey: sys.project.keys.secretLive,
    endUserId: endUser.id,
    qwc: qwcForSetup(sys.deps, connection, companyName),
    password: setup.password,
    companyName,
    body,
  };
}
