import {
  context,
  createContextKey,
  defaultTextMapGetter,
  defaultTextMapSetter,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type TextMapPropagator,
  type Tracer,
} from "@opentelemetry/api";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Clock } from "./clock.ts";

/**
 * Traces (issue 28, decision 0048): one OpenTelemetry trace per Request, from the HTTP call that
 * made it through admission, the wait, the hand-over in a connector session (on whichever
 * instance holds it), the application and the settling answer, to the webhook deliveries of its
 * events. Off unless configured (`OTEL_*`, config.ts): then `deps.tracing` is absent, the SDK's
 * module (tracing-sdk.ts) is never loaded, and every helper here returns at its first line.
 *
 * A Request's trace crosses instances through the store: admission writes the W3C `traceparent`
 * of the span the Request belongs to on its row (`requests.traceparent`, migration 0039), and the
 * instance that claims it, receives its answer or delivers its events starts its spans as children
 * of that context. Spans measured where they run use the SDK's time; spans rebuilt from stored
 * times (`request.queued`, `connector.hand_over`, `ledger.application`) use the service clock.
 *
 * Spans: `{method} {route}` (server; joins an incoming `traceparent`) ⊃ `request.admission`,
 * `request.wait` (a sync caller); children of the Request's context: `request.queued`,
 * `connector.hand_over`, `ledger.application`, `request.settle`, `request.interrupted` and
 * `request.recovery` (a write whose answer was lost), `webhook.delivery` (client; sends its own
 * `traceparent` to the receiver).
 */
export interface Tracing {
  readonly tracer: Tracer;
  /** The W3C trace context propagator (`@opentelemetry/core`). */
  readonly propagator: TextMapPropagator;
  /** Exports what is still buffered (the service's shutdown). */
  shutdown(): Promise<void>;
}

/** What the helpers need of `deps`: tracing when it is on. */
export interface Traced {
  tracing?: Tracing | undefined;
}

/** What the spans of the connector and the engine need of `deps`. */
export interface TracedInstance extends Traced {
  clock: Clock;
  instanceId: string;
}

/** The OpenTelemetry SDK's environment variables as config.ts parsed them. */
export interface TracingSettings {
  OTEL_SDK_DISABLED: boolean;
  OTEL_TRACES_EXPORTER?: "otlp" | "none" | undefined;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
  OTEL_SERVICE_NAME: string;
}

/**
 * Tracing as configured, or undefined (off): on when `OTEL_TRACES_EXPORTER=otlp` or an OTLP
 * endpoint is set, unless `OTEL_TRACES_EXPORTER=none` or `OTEL_SDK_DISABLED=true`. Spans go out in
 * batches over OTLP/HTTP (JSON bodies, `http/json`) to `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`, else the exporter's default (localhost:4318).
 */
export async function startTracing(settings: TracingSettings): Promise<Tracing | undefined> {
  if (settings.OTEL_SDK_DISABLED || settings.OTEL_TRACES_EXPORTER === "none") return undefined;
  const base = settings.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, "");
  const url = settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base}/v1/traces` : undefined);
  if (settings.OTEL_TRACES_EXPORTER !== "otlp" && url === undefined) return undefined;
  // Loaded only now: off, the SDK's modules are never loaded (start-up time, memory).
  const { otlpTracing } = await import("./tracing-sdk.ts");
  return otlpTracing(settings.OTEL_SERVICE_NAME, url);
}

/** The `traceparent` admission stores on the Request, carried in the admission's context. */
const REQUEST_TRACE = createContextKey("ledger-bridge request traceparent");
const REQUEST_ID = "ledger_bridge.request.id";
/** The semantic conventions' `http.response.status_code` (named here: the helpers load no SDK module). */
const HTTP_STATUS = "http.response.status_code";
const INSTANCE_ID = "ledger_bridge.instance.id";
const NO_COLUMN: { traceparent?: string } = Object.freeze({});

/** The W3C `traceparent` of a span context, or undefined when it is not a valid one. */
export function traceparentOf(tracing: Tracing, spanContext: SpanContext): string | undefined {
  if (!isSpanContextValid(spanContext)) return undefined;
  const carrier: Record<string, string> = {};
  tracing.propagator.inject(trace.setSpanContext(ROOT_CONTEXT, spanContext), carrier, defaultTextMapSetter);
  return carrier.traceparent;
}

/** The context a stored (or received) `traceparent` names; the root context when there is none. */
function contextOf(tracing: Tracing, traceparent: string | null | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return tracing.propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
}

// ---- the HTTP call -------------------------------------------------------------------------------

const HTTP_SPANS = new WeakMap<FastifyRequest, Span>();

/**
 * A server span per call of the JSON API (`/v1/...`), joined to an incoming `traceparent`, and
 * active while its handler runs (so admission and the wait are its children). Registered only when
 * tracing is on: off, no hook runs.
 */
export function traceHttpCalls(app: FastifyInstance, tracing: Tracing): void {
  app.addHook("onRequest", (request, _reply, done) => {
    const route = request.routeOptions.url;
    if (route === undefined || !route.startsWith("/v1/")) {
      done();
      return;
    }
    const parent = tracing.propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
    const span = tracing.tracer.startSpan(
      `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          ["http.request.method"]: request.method,
          ["http.route"]: route,
          ["url.path"]: request.url.split("?")[0] ?? "",
          "ledger_bridge.call.id": request.id,
        },
      },
      parent,
    );
    HTTP_SPANS.set(request, span);
    done();
  });
  // After the body is read: the handler (and what it awaits) runs with the call's span active.
  app.addHook("preHandler", (request, _reply, done) => {
    const span = HTTP_SPANS.get(request);
    if (span === undefined) done();
    else context.with(trace.setSpan(context.active(), span), done);
  });
  app.addHook("onResponse", (request, reply, done) => {
    endHttpSpan(request, reply.statusCode);
    done();
  });
  app.addHook("onRequestAbort", (request, done) => {
    endHttpSpan(request, null);
    done();
  });
}

function endHttpSpan(request: FastifyRequest, statusCode: number | null): void {
  const span = HTTP_SPANS.get(request);
  if (span === undefined) return;
  HTTP_SPANS.delete(request);
  if (statusCode === null) span.setStatus({ code: SpanStatusCode.ERROR, message: "the caller hung up" });
  else {
    span.setAttribute(HTTP_STATUS, statusCode);
    if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

// ---- admission and the caller's wait -------------------------------------------------------------

/**
 * Admission (`request.admission`, around the insert): the Request joins the active span's trace
 * (the HTTP call), or starts one (the service's own Requests). `traceparentColumn` reads inside it
 * the context the row stores.
 */
export function traceAdmission<T>(deps: Traced, operationId: string, admit: () => Promise<T>): Promise<T> {
  const tracing = deps.tracing;
  if (tracing === undefined) return admit();
  const active = context.active();
  const parent = trace.getSpan(active);
  const span = tracing.tracer.startSpan(
    "request.admission",
    { attributes: { "ledger_bridge.operation": operationId } },
    active,
  );
  const stored = traceparentOf(tracing, (parent ?? span).spanContext());
  return runIn(trace.setSpan(active, span).setValue(REQUEST_TRACE, stored), span, admit);
}

/** The trace columns of a new Request row (inside `traceAdmission`); none when tracing is off. */
export function traceparentColumn(deps: Traced, requestId: string): { traceparent?: string } {
  if (deps.tracing === undefined) return NO_COLUMN;
  const active = context.active();
  const stored = active.getValue(REQUEST_TRACE);
  if (typeof stored !== "string") return NO_COLUMN;
  trace.getSpan(active)?.setAttribute(REQUEST_ID, requestId);
  return { traceparent: stored };
}

/** A sync caller's wait for its Request to settle (`request.wait`). */
export function traceCallerWait<T>(deps: Traced, requestId: string, wait: () => Promise<T>): Promise<T> {
  const tracing = deps.tracing;
  if (tracing === undefined) return wait();
  const active = context.active();
  const span = tracing.tracer.startSpan("request.wait", { attributes: { [REQUEST_ID]: requestId } }, active);
  return runIn(trace.setSpan(active, span), span, wait);
}

// ---- the connector session -----------------------------------------------------------------------

/** The columns of a claimed Request the hand-over's spans read. */
export interface TracedRequest {
  id: string;
  created_at: Date;
  traceparent: string | null;
}

/**
 * The claim handed `rows` to a connector session at `claimedAt` (service clock): per Request that
 * has a trace, `request.queued` (stored → claimed) and `connector.hand_over` (claimed → its
 * document ready to leave), on this instance.
 */
export function traceHandOver(deps: TracedInstance, rows: readonly TracedRequest[], claimedAt: Date): void {
  const tracing = deps.tracing;
  if (tracing === undefined) return;
  const ready = deps.clock.now();
  for (const row of rows) {
    if (row.traceparent === null) continue;
    const parent = contextOf(tracing, row.traceparent);
    const attributes: Attributes = { [REQUEST_ID]: row.id, [INSTANCE_ID]: deps.instanceId };
    tracing.tracer
      .startSpan("request.queued", { attributes, startTime: row.created_at }, parent)
      .end(claimedAt);
    tracing.tracer
      .startSpan(
        "connector.hand_over",
        {
          attributes: { ...attributes, "ledger_bridge.message_set.requests": rows.length },
          startTime: claimedAt,
        },
        parent,
      )
      .end(ready);
  }
}

/** The columns of a Request in flight the answer's spans read. */
export interface AnsweredRequest {
  id: string;
  sent_at: Date | null;
  traceparent: string | null;
}

/**
 * The application answered `rows` (`receiveResponseXML`): `ledger.application` (handed over →
 * answer received, service clock) and `request.settle` around `settle` (the engine booking the
 * answer), per Request that has a trace, on the instance that received the answer.
 */
export function traceSettle<T>(
  deps: TracedInstance,
  rows: readonly AnsweredRequest[],
  settle: () => Promise<T>,
): Promise<T> {
  const tracing = deps.tracing;
  if (tracing === undefined) return settle();
  const answeredAt = deps.clock.now();
  const spans: Span[] = [];
  for (const row of rows) {
    if (row.traceparent === null) continue;
    const parent = contextOf(tracing, row.traceparent);
    const attributes: Attributes = { [REQUEST_ID]: row.id, [INSTANCE_ID]: deps.instanceId };
    tracing.tracer
      .startSpan("ledger.application", { attributes, startTime: row.sent_at ?? answeredAt }, parent)
      .end(answeredAt);
    spans.push(tracing.tracer.startSpan("request.settle", { attributes }, parent));
  }
  return settle().then(
    (value) => {
      for (const span of spans) span.end();
      return value;
    },
    (error: unknown) => {
      for (const span of spans) failed(span, error);
      throw error;
    },
  );
}

/**
 * What happened to a Request off the answer's path, as an instant span of its trace (service
 * clock): `request.interrupted` (its session broke while it was sent; `detail` says how).
 */
export function traceRequestEvent(
  deps: TracedInstance,
  name: string,
  row: { id: string; traceparent: string | null },
  detail: string,
): void {
  const tracing = deps.tracing;
  if (tracing === undefined || row.traceparent === null) return;
  const at = deps.clock.now();
  const attributes: Attributes = {
    [REQUEST_ID]: row.id,
    [INSTANCE_ID]: deps.instanceId,
    "ledger_bridge.detail": detail,
  };
  tracing.tracer.startSpan(name, { attributes, startTime: at }, contextOf(tracing, row.traceparent)).end(at);
}

/** A step on one Request measured where it runs, in its trace: `request.recovery` (the recovery query's answer read). */
export function traceRequestStep<T>(
  deps: TracedInstance,
  name: string,
  row: { id: string; traceparent: string | null },
  step: () => Promise<T>,
): Promise<T> {
  const tracing = deps.tracing;
  if (tracing === undefined || row.traceparent === null) return step();
  const attributes: Attributes = { [REQUEST_ID]: row.id, [INSTANCE_ID]: deps.instanceId };
  const span = tracing.tracer.startSpan(name, { attributes }, contextOf(tracing, row.traceparent));
  return runIn(trace.setSpan(ROOT_CONTEXT, span), span, step);
}

// ---- webhook deliveries --------------------------------------------------------------------------

/** What a delivery attempt's span names. */
export interface TracedDelivery {
  deliveryId: string;
  endpointId: string;
  attemptCount: number;
  event: { id: string; type: string };
}

/**
 * One webhook delivery attempt (`webhook.delivery`, client), a child of the trace of the Request
 * its event is about (`requestTrace`, read only while tracing is on), else a trace of its own. The
 * attempt sends the span's `traceparent` (`headers`); `outcome` names its result.
 */
export async function traceDelivery<T>(
  deps: Traced,
  delivery: TracedDelivery,
  requestTrace: () => Promise<string | null>,
  attempt: (headers: Record<string, string> | undefined) => Promise<T>,
  outcome: (result: T) => { statusCode: number | null; error: string | null } | null,
): Promise<T> {
  const tracing = deps.tracing;
  if (tracing === undefined) return attempt(undefined);
  const span = tracing.tracer.startSpan(
    "webhook.delivery",
    {
      kind: SpanKind.CLIENT,
      attributes: {
        "ledger_bridge.webhook.delivery.id": delivery.deliveryId,
        "ledger_bridge.webhook.endpoint.id": delivery.endpointId,
        "ledger_bridge.webhook.attempt": delivery.attemptCount + 1,
        "ledger_bridge.event.id": delivery.event.id,
        "ledger_bridge.event.type": delivery.event.type,
      },
    },
    // A trace that cannot be read (the store does not answer) never holds a delivery back.
    contextOf(tracing, await requestTrace().catch(() => null)),
  );
  const traceparent = traceparentOf(tracing, span.spanContext());
  try {
    const result = await attempt(traceparent === undefined ? undefined : { traceparent });
    const seen = outcome(result);
    if (seen?.statusCode != null) span.setAttribute(HTTP_STATUS, seen.statusCode);
    if (seen?.error) span.setStatus({ code: SpanStatusCode.ERROR, message: seen.error });
    span.end();
    return result;
  } catch (error) {
    failed(span, error);
    throw error;
  }
}

// ---- shared --------------------------------------------------------------------------------------

function runIn<T>(ctx: Context, span: Span, run: () => Promise<T>): Promise<T> {
  return context.with(ctx, run).then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      failed(span, error);
      throw error;
    },
  );
}

function failed(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
  span.end();
}
