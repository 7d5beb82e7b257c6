import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { Tracing } from "./tracing.ts";

/**
 * The OpenTelemetry SDK behind `Tracing` (decision 0048), in a module of its own so that it is
 * loaded only when traces are on (`startTracing` imports it then; tests and the bench import it
 * to export spans where they choose). Each `Tracing` owns its provider (two instances in one
 * process keep their spans apart); the AsyncLocalStorage context manager is global, installed once.
 */
export function sdkTracing(serviceName: string, processor: SpanProcessor): Tracing {
  installContextManager();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    spanProcessors: [processor],
  });
  return {
    tracer: provider.getTracer("ledger-bridge"),
    propagator: new W3CTraceContextPropagator(),
    shutdown: () => provider.shutdown(),
  };
}

/** Spans in batches over OTLP/HTTP (JSON bodies) to `url`, else the exporter's default (localhost:4318). */
export function otlpTracing(serviceName: string, url: string | undefined): Tracing {
  const exporter = new OTLPTraceExporter(url === undefined ? {} : { url });
  return sdkTracing(serviceName, new BatchSpanProcessor(exporter));
}

/** Spans exported one by one as they end (tests: an `InMemorySpanExporter`). */
export function exportingTo(exporter: SpanExporter, serviceName = "ledger-bridge"): Tracing {
  return sdkTracing(serviceName, new SimpleSpanProcessor(exporter));
}

let contextManagerInstalled = false;

/** Active spans follow async calls (a route handler's awaits) through AsyncLocalStorage, once per process. */
function installContextManager(): void {
  if (contextManagerInstalled) return;
  contextManagerInstalled = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}
