import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Deps } from "../deps.ts";
import { toErrorBody } from "../errors/render.ts";
import { ServiceError } from "../errors/service-error.ts";
import { sendError } from "./errors.ts";
import { newCallId } from "./request-id.ts";
import { hasBody } from "./body-deadline.ts";

/**
 * The HTTP edge (issue 6): what reaches a handler is text the store can hold, and every refusal,
 * including those Fastify and Node's HTTP parser make before any route runs, leaves in the spec's
 * error shape with `Svc-Request-Id`, `Svc-Should-Retry` (and `X-Should-Retry`, decision 0045) and the
 * `RateLimit-*` headers.
 */

/** JSON bodies: an empty body is no body (DELETE and cancel with a JSON content type work). */
export function registerBodyParsers(app: FastifyInstance, bodyLimit: number): void {
  const json = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser(["application/json", "text/plain"]);
  app.addContentTypeParser("application/json", { parseAs: "string", bodyLimit }, (request, body, done) => {
    if (body.length === 0 || (typeof body === "string" && body.trim() === "")) {
      done(null, undefined);
      return;
    }
    void json(request, String(body), done);
  });
}

/**
 * Text the store refuses (PostgreSQL text cannot hold NUL; a lone UTF-16 surrogate cannot be
 * encoded) is refused once, here, for every route: path parameters, query values and names, and
 * every string and key of a JSON body, before any handler or database call. The error is
 * UNSUPPORTED_CHARACTER (spec: Conventions, Details keys) naming the offending field.
 */
export function registerStorableText(app: FastifyInstance): void {
  app.addHook("preValidation", async (request) => {
    // A GET takes no body: one sent is refused rather than silently ignored (nothing runs).
    if (request.method === "GET" && hasBody(request)) {
      throw new ServiceError("INVALID_PARAMETER", {
        param: "body",
        message: "A GET takes no body: send its inputs as query parameters.",
      });
    }
    checkTree(request.params, "");
    checkTree(request.query, "");
    if (isJsonTree(request.body)) checkTree(request.body, "");
  });
}

/**
 * A parsed JSON body (a plain object or an array). Raw bodies (the connector's SOAP calls and
 * passthrough XML arrive as a Buffer or a string) are checked by their own readers: walking a
 * Buffer as an object visited every byte.
 */
function isJsonTree(body: unknown): boolean {
  if (Array.isArray(body)) return true;
  if (body === null || typeof body !== "object") return false;
  const prototype: unknown = Object.getPrototypeOf(body);
  return prototype === Object.prototype || prototype === null;
}

/** Walks a parsed value iteratively (a deeply nested body must not exhaust the stack). */
function checkTree(root: unknown, rootPath: string): void {
  const stack: [unknown, string][] = [[root, rootPath]];
  while (stack.length > 0) {
    const [value, path] = stack.pop() as [unknown, string];
    if (typeof value === "string") {
      checkText(value, path);
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push([item, `${path}[${i}]`]));
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) {
        const child = path === "" ? key : `${path}.${key}`;
        checkText(key, child);
        stack.push([item, child]);
      }
    }
  }
}

function checkText(text: string, param: string): void {
  // eslint-disable-next-line no-control-regex
  if (!/[\u0000\ud800-\udfff]/.test(text)) return;
  let index = 0;
  for (const char of text) {
    const codePoint = char.codePointAt(0) ?? 0;
    const lone = char.length === 1 && codePoint >= 0xd800 && codePoint <= 0xdfff;
    if (codePoint === 0 || lone) {
      throw new ServiceError("UNSUPPORTED_CHARACTER", {
        param,
        message: `\`${param}\` contains ${codePoint === 0 ? "a NUL character" : "a lone UTF-16 surrogate"} at index ${index}, which cannot be stored.`,
        details: { codePoint, character: null, index, suggestion: null },
      });
    }
    index += 1;
  }
}

/**
 * Errors Fastify raises before routing (`frameworkErrors`: a malformed URL, a path parameter longer
 * than any ID). No hook has run, so the call is counted and the headers are set here.
 */
export async function sendFrameworkError(
  app: FastifyInstance,
  deps: Deps,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  request.svcRequestId = String(request.id);
  void reply.header("Svc-Request-Id", request.svcRequestId);
  for (const [name, value] of Object.entries(await countCall(app, deps, request))) {
    void reply.header(name, value);
  }
  sendError(deps, request, reply, error);
}

/**
 * Counts a call that no route saw against its client address, as the limiter counts any
 * unauthenticated call, and returns its `RateLimit-*` headers.
 */
async function countCall(
  app: FastifyInstance,
  deps: Deps,
  request: FastifyRequest,
): Promise<Record<string, string>> {
  const limit = await app
    .createRateLimit()(request)
    .catch(() => null);
  const counted = limit && !limit.isAllowed ? limit : null;
  return {
    "RateLimit-Limit": String(counted?.max ?? deps.config.RATE_LIMIT_MAX),
    "RateLimit-Remaining": String(counted?.remaining ?? deps.config.RATE_LIMIT_MAX),
    "RateLimit-Reset": String(counted?.ttlInSeconds ?? Math.ceil(deps.config.RATE_LIMIT_WINDOW_MS / 1000)),
  };
}

/** Node's HTTP parser codes, as said to the caller. */
const PARSER_ERRORS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: "The request line and headers are larger than the server accepts (16 KiB).",
  HPE_INVALID_HEADER_TOKEN:
    "A header is not valid HTTP: its name or value holds a character that is not allowed.",
  HPE_INVALID_CHUNK_SIZE: "The chunked body is not valid HTTP.",
  ERR_HTTP_REQUEST_TIMEOUT: "The request was not received in time.",
};

/**
 * `clientError`: Node's HTTP parser refused the bytes (oversized or invalid headers, control
 * characters, not HTTP at all) before Fastify saw a request. The answer is written on the socket
 * by hand, in the spec's shape; it is counted per client address like any unauthenticated call.
 */
export function clientErrorHandler(app: FastifyInstance, deps: Deps) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === "ECONNRESET" || socket.destroyed || !socket.writable) return;
    const pending = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (pending?.headersSent) {
      socket.destroy();
      return;
    }
    const id = newCallId();
    const serviceError = new ServiceError("INVALID_PARAMETER", {
      message: PARSER_ERRORS[error.code ?? ""] ?? "The request is not valid HTTP.",
    });
    const body = JSON.stringify({ error: toErrorBody(serviceError, id, deps.config.publicUrl) });
    const address = { ip: socket.remoteAddress ?? "", principal: null, routeOptions: { config: {} } };
    countCall(app, deps, address as unknown as FastifyRequest)
      .then((headers) => {
        if (socket.destroyed || !socket.writable) return;
        const lines = [
          "HTTP/1.1 400 Bad Request",
          "Content-Type: application/json; charset=utf-8",
          `Content-Length: ${Buffer.byteLength(body)}`,
          `Svc-Request-Id: ${id}`,
          "Svc-Should-Retry: false",
          "X-Should-Retry: false",
          ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
          "Connection: close",
        ];
        socket.end(`${lines.join("\r\n")}\r\n\r\n${body}`);
      })
      .catch(() => socket.destroy());
  };
}
