import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { apiRoutes } from "../../src/api/routes/index.ts";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { OPENAPI_PATH, renderOpenApi } from "../../scripts/gen-openapi.ts";
import { ERROR_FIELDS } from "./helpers.ts";

/** The committed OpenAPI document, and the `/openapi.json` and `/docs` pages (architecture §1). */
interface Operation {
  operationId: string;
  responses: Record<string, unknown>;
}
interface OpenApiDocument {
  openapi: string;
  info: { version: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: { Error: { properties: { error: { required: string[] } } } } };
}

let h: TestApp;
before(async () => {
  h = await buildTestApp(null);
});
after(() => h.close());

const committed = (): OpenApiDocument => JSON.parse(readFileSync(OPENAPI_PATH, "utf8")) as OpenApiDocument;

function operations(document: OpenApiDocument): Operation[] {
  return Object.values(document.paths).flatMap((methods) => Object.values(methods));
}

test("the committed openapi.json equals a fresh build (run `npm run gen:openapi` after changing routes)", () => {
  assert.equal(readFileSync(OPENAPI_PATH, "utf8"), renderOpenApi());
});

test("the document is OpenAPI 3.1 with interface version 1.0.0", () => {
  const document = committed();
  assert.match(document.openapi, /^3\.1\.\d+$/);
  assert.equal(document.info.version, "1.0.0");
});

test("every declared route appears once with its operationId, method and path", () => {
  const document = committed();
  for (const route of apiRoutes) {
    const path = route.url.replace(/:(\w+)/g, "{$1}");
    const operation = document.paths[path]?.[route.method.toLowerCase()];
    assert.equal(operation?.operationId, route.operationId, `${route.method} ${path}`);
  }
  const ids = operations(document).map((op) => op.operationId);
  assert.equal(ids.length, apiRoutes.length);
  assert.equal(new Set(ids).size, ids.length, "operationIds are unique");
});

test("every operation documents the error body with all required error fields", () => {
  const document = committed();
  assert.deepEqual(
    [...document.components.schemas.Error.properties.error.required].sort(),
    [...ERROR_FIELDS].sort(),
  );
  for (const operation of operations(document)) {
    assert.ok(operation.responses.default, `${operation.operationId} has an error response`);
  }
});

test("GET /openapi.json serves the document without a key", async () => {
  const res = await h.app.inject({ method: "GET", url: "/openapi.json" });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers["content-type"]), /^application\/json/);
  const served = res.json<OpenApiDocument>();
  assert.deepEqual(served.paths, committed().paths);
  assert.equal(served.servers[0]?.url, h.deps.config.publicUrl);
});

test("GET /docs serves an HTML reference listing every operation and error code", async () => {
  const res = await h.app.inject({ method: "GET", url: "/docs" });
  assert.equal(res.statusCode, 200, res.body.slice(0, 500));
  assert.match(String(res.headers["content-type"]), /^text\/html/);
  assert.match(res.body, /^<!doctype html>/i);
  for (const route of apiRoutes) assert.ok(res.body.includes(route.operationId), route.operationId);
  assert.ok(res.body.includes('id="rate-limited"'), "error codes have anchors");
});

interface Parameter {
  name: string;
  in: string;
  schema: Record<string, unknown>;
}
interface BodyOperation {
  parameters?: Parameter[];
  requestBody?: { required: boolean; content: Record<string, { schema?: { required?: string[] } }> };
}

test("the passthrough body is documented as XML and as JSON {xml}", () => {
  const document = committed() as unknown as { paths: Record<string, Record<string, BodyOperation>> };
  const passthrough = document.paths["/v1/end-users/{id}/passthrough/{integrationSlug}"]?.post;
  assert.ok(passthrough?.requestBody);
  assert.equal(passthrough.requestBody.required, true);
  assert.deepEqual(Object.keys(passthrough.requestBody.content).sort(), [
    "application/json",
    "application/xml",
    "text/xml",
  ]);
  assert.deepEqual(passthrough.requestBody.content["application/json"]?.schema?.required, ["xml"]);
});

test("header parameters carry their schemas; a body is required only when a field is", () => {
  const document = committed() as unknown as { paths: Record<string, Record<string, BodyOperation>> };
  const schemas = new Map<string, Record<string, unknown>>();
  for (const methods of Object.values(document.paths)) {
    for (const operation of Object.values(methods)) {
      for (const p of operation.parameters ?? []) if (p.in === "header") schemas.set(p.name, p.schema);
      const body = operation.requestBody;
      const schema = body?.content["application/json"]?.schema;
      if (body && schema && !body.content["application/xml"]) {
        assert.equal(body.required, (schema.required?.length ?? 0) > 0, JSON.stringify(schema).slice(0, 200));
      }
    }
  }
  assert.equal(schemas.get("Svc-Timeout-Seconds")?.type, "integer");
  assert.equal(schemas.get("Svc-Queue-Ttl-Seconds")?.maximum, 86400);
  assert.deepEqual(schemas.get("Prefer")?.enum, ["respond-async"]);
  assert.equal(schemas.get("Idempotency-Key")?.maxLength, 255);
  assert.match("eu_01h2xcejqtf2nbrexx3vqjhp41", new RegExp(String(schemas.get("Svc-End-User-Id")?.pattern)));
  const cancel = document.paths["/v1/requests/{id}/cancel"]?.post;
  assert.equal(cancel?.requestBody?.required ?? false, false, "cancel needs no body");
});
