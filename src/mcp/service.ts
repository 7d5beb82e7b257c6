import { ServiceError } from "../errors/service-error.ts";

/**
 * The MCP server's only way to the service: its public HTTP API, with a secret key (decision 0022).
 * Every answer carries `Svc-Request-Id` (the Request's `req_…` on an application operation, a
 * `call_…` elsewhere), which the server logs with each tool call.
 */
export interface ServiceCall {
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  /** The path with its query string. */
  readonly path: string;
  readonly endUserId?: string | undefined;
  readonly body?: unknown;
  readonly idempotencyKey?: string | undefined;
  /** `Svc-Timeout-Seconds` of an application operation (the sync wait). */
  readonly timeoutSeconds?: number | undefined;
  /** `Svc-Max-Staleness-Seconds` of a typed read: the end user's mirror may answer (issue 26). */
  readonly maxStalenessSeconds?: number | undefined;
}

export interface ServiceAnswer {
  readonly status: number;
  /** `Svc-Request-Id` of the answer (null when the service did not answer with one). */
  readonly requestId: string | null;
  /** The JSON body (or the text, when it is not JSON). */
  readonly body: unknown;
  /** `Svc-Data-As-Of`: the answer came from the end user's mirror, as of then (issue 26). */
  readonly dataAsOf?: string | null;
}

export interface ServiceClient {
  call(call: ServiceCall): Promise<ServiceAnswer>;
}

/**
 * The URL of `path` on the service at `base`, refused when URL parsing would send another path or
 * query than the one given (a dot segment removed, a character re-encoded): what the preview showed
 * is what the service receives, or nothing is sent (decision 0033).
 */
export function serviceUrl(base: string, path: string): URL {
  const url = new URL(`${base}${path.startsWith("/") ? "" : "/"}${path}`);
  const expected = `${new URL(base).pathname.replace(/\/+$/, "")}${path}`;
  if (`${url.pathname}${url.search}` !== expected) {
    throw new ServiceError("INTERNAL_ERROR", {
      message: `The route \`${path}\` would reach the service as \`${url.pathname}${url.search}\`: nothing was sent.`,
    });
  }
  return url;
}

/** A client of the service at `baseUrl` with the secret key `apiKey`. */
export function httpServiceClient(options: {
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
}): ServiceClient {
  const base = options.baseUrl.replace(/\/+$/, "");
  const send = options.fetch ?? fetch;
  return {
    async call(call) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${options.apiKey}`,
        accept: "application/json",
      };
      if (call.endUserId !== undefined) headers["svc-end-user-id"] = call.endUserId;
      if (call.idempotencyKey !== undefined) headers["idempotency-key"] = call.idempotencyKey;
      if (call.timeoutSeconds !== undefined) headers["svc-timeout-seconds"] = String(call.timeoutSeconds);
      if (call.maxStalenessSeconds !== undefined)
        headers["svc-max-staleness-seconds"] = String(call.maxStalenessSeconds);
      let body: string | undefined;
      if (call.body !== undefined) {
        body = JSON.stringify(call.body);
        headers["content-type"] = "application/json";
      }
      const response = await send(serviceUrl(base, call.path), {
        method: call.method,
        headers,
        ...(body === undefined ? {} : { body }),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text === "" ? null : JSON.parse(text);
      } catch {
        // not JSON: kept as text
      }
      return {
        status: response.status,
        requestId: response.headers.get("svc-request-id"),
        body: parsed,
        dataAsOf: response.headers.get("svc-data-as-of"),
      };
    },
  };
}
