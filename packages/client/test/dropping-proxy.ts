import { connect, createServer, type Socket } from "node:net";

/**
 * A TCP proxy on loopback in front of the service that loses answers the way a network does: for a
 * request whose first line matches `drop` (once per match, `times` in all), it forwards the request
 * to the service and, when the answer starts to come back, destroys the client's socket instead of
 * relaying it. The service has done the work; the client sees a dropped connection.
 */
export interface DroppingProxy {
  url: string;
  /** The head (request line and headers) of every request that went through, in order. */
  heads: string[];
  /** How many answers were lost so far. */
  dropped: number;
  close(): Promise<void>;
}

export async function startDroppingProxy(
  target: string,
  drop: (requestLine: string) => boolean,
  times = 1,
): Promise<DroppingProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const proxy: DroppingProxy = {
    url: "",
    heads: [],
    dropped: 0,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    sockets.add(client);
    sockets.add(upstream);
    let loseNextAnswer = false;
    client.on("data", (chunk: Buffer) => {
      const text = chunk.toString("latin1");
      // A chunk that starts a request (keep-alive connections carry several, one after another).
      if (/^(GET|POST|DELETE|PUT|PATCH) \S+ HTTP\/1\.1\r\n/.test(text)) {
        const head = text.split("\r\n\r\n")[0] ?? text;
        proxy.heads.push(head);
        if (proxy.dropped < times && drop(head.split("\r\n")[0] ?? "")) loseNextAnswer = true;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (loseNextAnswer) {
        loseNextAnswer = false;
        proxy.dropped++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  proxy.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  return proxy;
}

/** The value of a header in a request head (case-insensitive). */
export function headerOf(head: string, name: string): string | undefined {
  const line = head.split("\r\n").find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}
