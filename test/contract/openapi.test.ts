import { createHash } from "node:crypto";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { apiRoutes } from "../../src/api/routes/index.ts";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { OPENAPI_PATH, renderOpenApi } from "../../scripts/gen-openapi.ts";
import { ERROR_FIELDS } from "./helpers.ts";

/** The committed OpenAPI document, and the `/openapi.json` and `/docs` pages (architecture §1). */
interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  description?: string;
  required?: string[];
  properties?: Record<string, Schema>;
}
interface Response {
  $ref?: string;
  content?: Record<string, { schema?: Schema }>;
}
interface Operation {
  operationId: string;
  responses: Record<string, Response>;
}
interface OpenApiDocument {
  openapi: string;
  info: { version: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
  };
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
  assert.deepEqual(document.components.schemas.Error?.required, ["error"]);
  assert.deepEqual(
    [...(document.components.schemas.ErrorObject?.required ?? [])].sort(),
    [...ERROR_FIELDS].sort(),
  );
  for (const operation of operations(document)) {
    assert.ok(operation.responses.default, `${operation.operationId} has an error response`);
  }
});

/** The response a `$ref` names (`#/components/responses/...`), or the response itself. */
function resolved(document: OpenApiDocument, response: Response): Response {
  const name = response.$ref?.replace("#/components/responses/", "");
  return name
    ? (document.components.responses[name] ?? assert.fail(`${response.$ref} is missing`))
    : response;
}

test("every operation has a response schema: its success body, or the one error it answers", () => {
  const document = committed();
  const lacking: string[] = [];
  for (const operation of operations(document)) {
    const route = apiRoutes.find((r) => r.operationId === operation.operationId) ?? assert.fail();
    const status = String(route.response.status);
    const answer = operation.responses[status];
    const schema = answer && resolved(document, answer).content?.["application/json"]?.schema;
    if (!schema || Object.keys(schema).length === 0) lacking.push(`${operation.operationId} ${status}`);
    // Only an operation the application cannot do answers no 2xx (LEDGER_OPERATION_UNSUPPORTED).
    if (route.response.status >= 300) {
      assert.equal(route.response.status, 422, operation.operationId);
      assert.match(operation.operationId, /^ledger\./);
    }
    for (const [code, response] of Object.entries(operation.responses)) {
      const media = resolved(document, response).content ?? {};
      assert.ok(media["application/json"]?.schema, `${operation.operationId} ${code} has a JSON schema`);
    }
  }
  assert.deepEqual(lacking, []);
  const unsupported = apiRoutes.filter((route) => route.response.status >= 300).map((r) => r.operationId);
  assert.ok(unsupported.length <= 1, `unsupported typed operations: ${unsupported.join(", ")}`);
});

test("every operation references the error responses it can answer", () => {
  const document = committed();
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const operation of Object.values(methods)) {
      const statuses = new Set(Object.keys(operation.responses));
      const expected = ["400", "401", "403", "429", "500", "503"];
      const refused = ![...statuses].some((status) => /^2\d\d$/.test(status));
      if (refused) {
        // Always refused (LEDGER_OPERATION_UNSUPPORTED): its input is checked, then it is refused.
        expected.push("422");
        assert.ok(!statuses.has("404") && !statuses.has("202"), operation.operationId);
      } else if (path.includes("{")) expected.push("404");
      const application =
        !refused &&
        (operation.operationId.startsWith("ledger.") || operation.operationId === "endUsers.passthrough");
      if (application) expected.push("202", "402", "404", "409", "422", "502", "504");
      for (const status of expected) {
        assert.ok(statuses.has(status), `${operation.operationId} answers ${status}`);
        const response = operation.responses[status] ?? assert.fail();
        assert.match(response.$ref ?? "", /^#\/components\/responses\//);
      }
    }
  }
  // Each shared error response lists the catalogue's codes of its status.
  const notFound = document.components.responses.NotFound as { description: string };
  assert.match(notFound.description, /`RESOURCE_MISSING`, `LEDGER_OBJECT_NOT_FOUND`/);
  assert.ok(document.paths["/v1/requests/{id}/cancel"]?.post?.responses["409"], "REQUEST_NOT_CANCELABLE");
});

test("enumeration-valued response fields declare their values", () => {
  const document = committed();
  const schemas = document.components.schemas;
  assert.deepEqual(schemas.ledger_account?.properties?.accountType?.enum?.slice(0, 3), [
    "accounts_payable",
    "accounts_receivable",
    "bank",
  ]);
  assert.ok(schemas.ledger_account?.properties?.accountType?.enum?.includes(null), "nullable: lists null");
  assert.ok(schemas.Request?.properties?.status?.enum?.includes("outcome_unknown"));
  assert.ok(schemas.ledger_report?.properties?.basis?.enum?.includes("accrual"));
  // No field describes an enumeration without listing it.
  let open = 0;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (typeof value !== "object" || value === null) return;
    const schema = value as Schema;
    if (typeof schema.description === "string" && schema.description.startsWith("Open enumeration")) {
      open++;
      assert.ok(Array.isArray(schema.enum) && schema.enum.length > 0, JSON.stringify(schema).slice(0, 200));
    }
    Object.values(value).forEach(visit);
  };
  visit(document.components.schemas);
  assert.ok(open > 50, `${open} open enumerations`);
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
  // No script may run on it, and its one inline style is allowed by its digest alone (issue 23).
  const csp = String(res.headers["content-security-policy"]);
  assert.match(csp, /default-src 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|script-src/);
  assert.doesNotMatch(res.body, /<script/i);
  const styles = [...res.body.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((match) => match[1] ?? "");
  assert.equal(styles.length, 1);
  const digest = createHash("sha256")
    .update(styles[0] ?? "")
    .digest("base64");
  assert.ok(csp.includes(`style-src 'sha256-${digest}'`), csp);
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

test("every read that takes Svc-Max-Staleness-Seconds declares Svc-Data-As-Of and Age on its success; no other operation does (issue 26)", () => {
  type Described = {
    parameters?: { name: string; in: string }[];
    responses: Record<string, { headers?: Record<string, unknown> }>;
  };
  const document = committed() as unknown as { paths: Record<string, Record<string, Described>> };
  let mirrored = 0;
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const takes = (operation.parameters ?? []).some((p) => p.name === "Svc-Max-Staleness-Seconds");
      const headers = Object.keys(operation.responses["200"]?.headers ?? {});
      const declares = headers.includes("Svc-Data-As-Of") && headers.includes("Age");
      assert.equal(declares, takes, `${method.toUpperCase()} ${path}`);
      if (takes) mirrored++;
    }
  }
  assert.ok(mirrored >= 2, "invoices and customers at least (list and retrieve)");
});
