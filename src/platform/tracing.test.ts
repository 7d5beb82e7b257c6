import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadConfig } from "../config.ts";
import { startTracing, traceAdmission, traceparentColumn, type Tracing } from "./tracing.ts";
import { exportingTo } from "./tracing-sdk.ts";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";

/** When traces are on (decision 0048): the OpenTelemetry SDK's environment variables, as config.ts reads them. */
describe("startTracing", () => {
  const started = async (env: Record<string, string>): Promise<Tracing | undefined> => {
    const tracing = await startTracing(loadConfig(env));
    await tracing?.shutdown();
    return tracing;
  };

  it("is off unless an endpoint or OTEL_TRACES_EXPORTER=otlp says otherwise", async () => {
    assert.equal(await started({}), undefined);
    assert.equal(loadConfig({}).OTEL_SERVICE_NAME, "ledger-bridge");
    assert.ok(await started({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }));
    assert.ok(await started({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" }));
    assert.ok(await started({ OTEL_TRACES_EXPORTER: "otlp" }));
  });

  it("OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true win over an endpoint", async () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };
    assert.equal(await started({ ...endpoint, OTEL_TRACES_EXPORTER: "none" }), undefined);
    assert.equal(await started({ ...endpoint, OTEL_SDK_DISABLED: "true" }), undefined);
  });

  it("refuses values the specification does not know", () => {
    assert.throws(() => loadConfig({ OTEL_TRACES_EXPORTER: "zipkin" }), /OTEL_TRACES_EXPORTER/);
    assert.throws(
      () => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector" }),
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
  });
});

describe("admission", () => {
  it("off: runs the insert as it is and stores no traceparent", async () => {
    const column = await traceAdmission({}, "ledger.customers.list", async () =>
      traceparentColumn({}, "req_x"),
    );
    assert.deepEqual(column, {});
  });

  it("on, without a caller's span: the admission starts the Request's trace and the row stores it", async () => {
    const exporter = new InMemorySpanExporter();
    const deps = { tracing: exportingTo(exporter) };
    const column = await traceAdmission(deps, "ledger.customers.list", async () =>
      traceparentColumn(deps, "req_x"),
    );
    const [admission] = exporter.getFinishedSpans();
    assert.ok(admission);
    assert.equal(admission.name, "request.admission");
    assert.equal(admission.parentSpanContext, undefined, "a root span");
    assert.equal(admission.attributes["ledger_bridge.request.id"], "req_x");
    const { traceId, spanId } = admission.spanContext();
    assert.deepEqual(column, { traceparent: `00-${traceId}-${spanId}-01` });
    await deps.tracing.shutdown();
  });
});
