import { isIP } from "node:net";
import { Pool, buildConnector } from "undici";

/**
 * Outbound HTTP for deliveries (undici). Every request goes to the address the destination guard
 * checked: the pool of an (origin, address) pair connects to that IP literal, never to the name,
 * so no second DNS lookup happens; TLS still verifies the certificate for the host name (SNI and
 * identity check use the name). Keep-alive connections are reused per (origin, address). Redirects
 * are never followed (undici's `request` does not follow them).
 */
export interface TransportRequest {
  url: URL;
  /** The checked address to connect to. */
  address: string;
  headers: Record<string, string>;
  body: string;
  /** Aborts the attempt (its timeout, or shutdown). */
  signal: AbortSignal;
}

export interface TransportResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** The start of the body, decoded as UTF-8 (at most {@link BODY_READ_MAX_BYTES}). */
  bodyStart: string;
}

export interface Transport {
  send(request: TransportRequest): Promise<TransportResponse>;
  close(): Promise<void>;
}

/** A response body is read up to this many bytes; a longer one is cut (its connection is dropped). */
export const BODY_READ_MAX_BYTES = 16 * 1024;

/** Pools kept open at once (least recently used are closed first). */
const POOLS_MAX = 256;

export interface UndiciTransportOptions {
  /** Real-time backstop for a connection that stops answering (the clock-based timeout comes first). */
  socketTimeoutMs: number;
  /** Connections per (origin, address). */
  connectionsPerOrigin: number;
}

export function undiciTransport(options: UndiciTransportOptions): Transport {
  const pools = new Map<string, Pool>();

  const poolFor = (url: URL, address: string): Pool => {
    const key = `${url.origin}|${address}`;
    let pool = pools.get(key);
    if (pool) {
      pools.delete(key);
      pools.set(key, pool);
      return pool;
    }
    const base = buildConnector({ timeout: options.socketTimeoutMs });
    pool = new Pool(url.origin, {
      connections: options.connectionsPerOrigin,
      headersTimeout: options.socketTimeoutMs,
      bodyTimeout: options.socketTimeoutMs,
      connect: (connectOptions, callback) => {
        const name = connectOptions.hostname.replace(/^\[(.*)\]$/, "$1");
        base(
          {
            ...connectOptions,
            hostname: address,
            ...(isIP(name) ? {} : { servername: name }),
          },
          callback,
        );
      },
    });
    pools.set(key, pool);
    if (pools.size > POOLS_MAX) {
      const [oldestKey, oldest] = pools.entries().next().value ?? [];
      if (oldestKey !== undefined && oldest) {
        pools.delete(oldestKey);
        void oldest.close().catch(() => undefined);
      }
    }
    return pool;
  };

  return {
    async send(request) {
      const pool = poolFor(request.url, request.address);
      const response = await pool.request({
        origin: request.url.origin,
        path: `${request.url.pathname}${request.url.search}`,
        method: "POST",
        headers: request.headers,
        body: request.body,
        signal: request.signal,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= BODY_READ_MAX_BYTES) {
          response.body.destroy();
          break;
        }
      }
      return {
        statusCode: response.statusCode,
        headers: response.headers,
        bodyStart: Buffer.concat(chunks).subarray(0, BODY_READ_MAX_BYTES).toString("utf8"),
      };
    },
    async close() {
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((pool) => pool.destroy().catch(() => undefined)));
    },
  };
}
