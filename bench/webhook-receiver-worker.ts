/**
 * The bench's webhook receiver, in a worker thread (a receiver runs on the developer's servers, not
 * on the service's thread). It answers 200 at once and records, per request, the `webhook-id`, the
 * event's `data.completedAt` (request events) and the arrival time
 * (`performance.timeOrigin + performance.now()`, comparable across threads).
 */
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { parentPort } from "node:worker_threads";

export type ReceiverCommand = { cmd: "start" } | { cmd: "arrivals" } | { cmd: "reset" } | { cmd: "stop" };

export interface Arrival {
  id: string;
  at: number;
  /** `data.completedAt` of a request event, in ms; null for other events. */
  completedAt: number | null;
}

export type ReceiverReply =
  | { cmd: "started"; port: number }
  | { cmd: "arrivals"; arrivals: Arrival[] }
  | { cmd: "reset" }
  | { cmd: "stopped" };

const now = (): number => performance.timeOrigin + performance.now();
let arrivals: Arrival[] = [];

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const at = now();
    let completedAt: number | null = null;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data?: { completedAt?: string } };
      completedAt = body.data?.completedAt ? Date.parse(body.data.completedAt) : null;
    } catch {
      completedAt = null;
    }
    arrivals.push({ id: String(request.headers["webhook-id"] ?? ""), at, completedAt });
    response.writeHead(200, { "content-type": "text/plain" });
    response.end("ok");
  });
});
server.keepAliveTimeout = 30_000;

parentPort?.on("message", (command: ReceiverCommand) => {
  const reply = (message: ReceiverReply): void => parentPort?.postMessage(message);
  switch (command.cmd) {
    case "start":
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        reply({ cmd: "started", port: typeof address === "object" && address ? address.port : 0 });
      });
      return;
    case "arrivals":
      reply({ cmd: "arrivals", arrivals });
      return;
    case "reset":
      arrivals = [];
      reply({ cmd: "reset" });
      return;
    case "stop":
      server.closeAllConnections();
      server.close(() => reply({ cmd: "stopped" }));
      return;
  }
});
