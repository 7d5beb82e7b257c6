/**
 * P3 (issue 8 §4): `GET /v1/requests/{id}` requests per second against a bare Fastify hello-world,
 * in the same run with the same load generator settings (autocannon, in a child process; the
 * servers on this process's main thread, as the service runs in the rest of the bench).
 */
import { fork } from "node:child_process";
import Fastify from "fastify";
import { freePort } from "../src/testing/system.ts";
import type { LoadCommand, LoadReply } from "./load-worker.ts";
import { tracked } from "./children.ts";

export const LOAD_CONNECTIONS = 10;
export const LOAD_SECONDS = 5;
const WARM_UP_SECONDS = 1;

export interface ApiRate {
  helloWorld: LoadReply;
  retrieve: LoadReply;
}

async function load(command: LoadCommand): Promise<LoadReply> {
  const child = tracked(
    fork(new URL("./load-worker.ts", import.meta.url), [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    }),
  );
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    return await new Promise<LoadReply>((resolve, reject) => {
      child.once("message", (reply: LoadReply) => resolve(reply));
      child.once("exit", (code) => reject(new Error(`the load generator exited (${code})`)));
      child.send(command);
    });
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

/** A warm-up run, then the measured one, with the bench's settings. */
async function measure(
  url: string,
  headers: Record<string, string>,
  afterWarmUp?: () => Promise<void>,
): Promise<LoadReply> {
  await load({ url, headers, connections: LOAD_CONNECTIONS, durationSeconds: WARM_UP_SECONDS });
  await afterWarmUp?.();
  return load({ url, headers, connections: LOAD_CONNECTIONS, durationSeconds: LOAD_SECONDS });
}

/**
 * The hello-world first, then `GET /v1/requests/{requestId}` on the service at `serviceUrl`;
 * `beforeRetrieve` runs after the service's warm-up, right before its measured run (profiling).
 */
export async function measureApiRate(
  serviceUrl: string,
  secretKey: string,
  requestId: string,
  beforeRetrieve?: () => Promise<void>,
): Promise<ApiRate> {
  const hello = Fastify();
  hello.get("/", async () => ({ hello: "world" }));
  const port = await freePort();
  await hello.listen({ port, host: "127.0.0.1" });
  let helloWorld: LoadReply;
  try {
    helloWorld = await measure(`http://127.0.0.1:${port}/`, {});
  } finally {
    await hello.close();
  }
  const retrieve = await measure(
    `${serviceUrl}/v1/requests/${requestId}`,
    { authorization: `Bearer ${secretKey}` },
    beforeRetrieve,
  );
  return { helloWorld, retrieve };
}
