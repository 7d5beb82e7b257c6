import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { TestContext } from "node:test";
import { Webhook } from "standardwebhooks";

/**
 * A webhook receiver for tests and benchmarks: an HTTP server on loopback that records every
 * request (headers and exact body bytes) and answers with whatever `respond` says (200 by default).
 * Signatures are checked with the official `standardwebhooks` package ({@link verifySignature}).
 */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  headers: IncomingMessage["headers"];
  path: string;
  /** Wall time of arrival (ms). */
  receivedAt: number;
  /** The parsed body. */
  event: { id: string; type: string; timestamp: string; projectId: string; data: Record<string, unknown> };
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (the attempt times out). */
  hang?: boolean;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** How to answer the next requests (may be replaced at any time). */
  respond: (webhook: ReceivedWebhook) => ReceiverAnswer;
  /** Resolves once `predicate` holds for the requests received so far (real time, bounded). */
  waitFor(
    what: string,
    predicate: (received: ReceivedWebhook[]) => boolean,
    timeoutMs?: number,
  ): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  t: TestContext | null,
  options: { port?: number; path?: string } = {},
): Promise<WebhookReceiver> {
  const hanging = new Set<ServerResponse>();
  const receiver: WebhookReceiver = {
    url: "",
    port: 0,
    received: [],
    respond: () => ({ status: 200, body: "ok" }),
    waitFor: async (what, predicate, timeoutMs = 10_000) => {
      const started = Date.now();
      while (!predicate(receiver.received)) {
        if (Date.now() - started > timeoutMs) throw new Error(`receiver timed out waiting for: ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let event: ReceivedWebhook["event"];
      try {
        event = JSON.parse(body) as ReceivedWebhook["event"];
      } catch {
        event = { id: "", type: "", timestamp: "", projectId: "", data: {} };
      }
      const webhook: ReceivedWebhook = {
        id: String(request.headers["webhook-id"] ?? ""),
        timestamp: String(request.headers["webhook-timestamp"] ?? ""),
        signature: String(request.headers["webhook-signature"] ?? ""),
        body,
        headers: request.headers,
        path: request.url ?? "",
        receivedAt: Date.now(),
        event,
      };
      receiver.received.push(webhook);
      const answer = receiver.respond(webhook);
      if (answer.hang) {
        hanging.add(response);
        return;
      }
      response.writeHead(answer.status, answer.headers ?? {});
      response.end(answer.body ?? "");
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  receiver.port = typeof address === "object" && address ? address.port : 0;
  receiver.url = `http://127.0.0.1:${receiver.port}${options.path ?? "/hooks"}`;
  t?.after(() => receiver.close());
  return receiver;
}

/**
 * Verifies a received webhook with the official `standardwebhooks` library and `secret`. The
 * library checks the timestamp against the wall clock (±5 minutes); deliveries made on a test's
 * fake clock carry that clock's time, so the wall clock is pinned to the header's timestamp for the
 * call: the signature itself is what is checked. Throws when it does not verify.
 */
export function verifySignature(secret: string, webhook: ReceivedWebhook): void {
  const realNow = Date.now;
  Date.now = () => Number(webhook.timestamp) * 1000;
  try {
    new Webhook(secret).verify(webhook.body, {
      "webhook-id": webhook.id,
      "webhook-timestamp": webhook.timestamp,
      "webhook-signature": webhook.signature,
    });
  } finally {
    Date.now = realNow;
  }
}
