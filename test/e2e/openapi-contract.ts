import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { OPENAPI_PATH } from "../../scripts/gen-openapi.ts";
import type { System } from "../../src/testing/system.ts";

/**
 * Checks real responses against the committed openapi.json (decision 0020): the answered status is
 * declared by the operation, the media type too, and a JSON body validates against its schema with
 * ajv (JSON Schema 2020-12, formats checked). The schemas are read in a strict view: an object that
 * lists its properties admits no other (the document itself leaves them open, since a later version
 * may add fields), so a field the service sends and the document does not name fails here.
 */
type Json = Record<string, unknown>;
interface Operation {
  operationId: string;
  responses: Record<string, Json>;
}
type Document = { paths: Record<string, Record<string, Operation>>; components: Json };

const COMPOSITION = ["allOf", "anyOf", "oneOf", "not", "if", "$ref"];

/** The strict view of one schema (in place): closed objects, recursively. */
function closeObjects(schema: unknown): void {
  if (Array.isArray(schema)) return schema.forEach(closeObjects);
  if (typeof schema !== "object" || schema === null) return;
  const s = schema as Json;
  if (
    s.properties &&
    !("additionalProperties" in s) &&
    !("patternProperties" in s) &&
    !COMPOSITION.some((k) => k in s)
  )
    s.additionalProperties = false;
  for (const key of ["items", "not", "additionalProperties", "contains"]) closeObjects(s[key]);
  for (const key of ["allOf", "anyOf", "oneOf", "prefixItems"]) closeObjects(s[key]);
  for (const key of ["properties", "$defs", "patternProperties"])
    if (s[key] && typeof s[key] === "object") Object.values(s[key] as Json).forEach(closeObjects);
}

export interface Answer {
  status: number;
  contentType: string;
  /** The parsed JSON body, or the text of any other body. */
  body: unknown;
}

export class OpenApiContract {
  readonly document: Document;
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; pattern: RegExp; params: number }[];
  /** `operationId status` of every checked answer. */
  readonly seen = new Set<string>();

  constructor() {
    this.document = JSON.parse(readFileSync(OPENAPI_PATH, "utf8")) as Document;
    const schemas = (this.document.components.schemas ?? {}) as Json;
    Object.values(schemas).forEach(closeObjects);
    for (const methods of Object.values(this.document.paths))
      for (const operation of Object.values(methods))
        for (const response of Object.values(operation.responses))
          for (const media of Object.values((response.content ?? {}) as Record<string, Json>))
            closeObjects(media.schema);
    // OpenAPI keywords (discriminator, examples…) are annotations here.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    (formats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema(this.document, "openapi.json");
    this.templates = Object.keys(this.document.paths).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
      params: (template.match(/\{/g) ?? []).length,
    }));
  }

  /** The operation a concrete path and method reach (a literal segment wins over a parameter). */
  operationOf(method: string, path: string): { template: string; operation: Operation } {
    const bare = path.split("?")[0] ?? path;
    const found = this.templates
      .filter((t) => t.pattern.test(bare) && this.document.paths[t.template]?.[method.toLowerCase()])
      .sort((a, b) => a.params - b.params)[0];
    assert.ok(found, `${method} ${bare} is a documented operation`);
    const operation = this.document.paths[found.template]?.[method.toLowerCase()];
    assert.ok(operation);
    return { template: found.template, operation };
  }

  /** Fails unless the answer is one the document declares, with a body its schema accepts. */
  check(method: string, path: string, answer: Answer): void {
    const { template, operation } = this.operationOf(method, path);
    const label = `${operation.operationId} ${answer.status}`;
    const declared = operation.responses[String(answer.status)];
    assert.ok(declared, `${label}: the status is declared (${JSON.stringify(answer.body).slice(0, 300)})`);
    const shared = typeof declared.$ref === "string" ? declared.$ref : null;
    const responsePointer = shared
      ? shared.slice(1)
      : `/paths/${escape(template)}/${method.toLowerCase()}/responses/${answer.status}`;
    const response = shared ? this.resolve(shared) : declared;
    const media = answer.contentType.split(";")[0]?.trim() ?? "";
    const content = (response.content ?? {}) as Record<string, Json>;
    assert.ok(
      content[media],
      `${label}: ${media} is a declared media type (${Object.keys(content).join(", ")})`,
    );
    if (media === "application/json") {
      const pointer = `${responsePointer}/content/${escape(media)}/schema`;
      const validate = this.validatorFor(pointer);
      const valid = validate(answer.body);
      assert.ok(
        valid,
        `${label} does not match openapi.json: ${JSON.stringify(validate.errors?.slice(0, 5), null, 1)}\n` +
          `body: ${JSON.stringify(answer.body).slice(0, 1500)}`,
      );
    } else {
      assert.equal(typeof answer.body, "string");
    }
    this.seen.add(label);
  }

  /** Reads a `fetch` response, checks it and returns it for the test's own assertions. */
  async fetched(
    method: string,
    path: string,
    response: Response,
  ): Promise<{ status: number; body: unknown }> {
    const contentType = response.headers.get("content-type") ?? "";
    const text = await response.text();
    const body: unknown = contentType.startsWith("application/json") ? JSON.parse(text) : text;
    this.check(method, path, { status: response.status, contentType, body });
    return { status: response.status, body };
  }

  private resolve(ref: string): Json {
    let node: unknown = this.document;
    for (const part of ref.replace(/^#\//, "").split("/"))
      node = (node as Json)[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    assert.ok(node && typeof node === "object", `${ref} resolves`);
    return node as Json;
  }

  private validatorFor(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi.json#${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}

/** A JSON Pointer segment. */
function escape(segment: string): string {
  return encodeURIComponent(segment.replace(/~/g, "~0").replace(/\//g, "~1"));
}

let shared: OpenApiContract | undefined;
/** One checker per test process: the document is read and its schemas compiled once. */
export function openApiContract(): OpenApiContract {
  shared ??= new OpenApiContract();
  return shared;
}

/** Checks every answer of `sys.call` against the document before the caller reads it. */
export function checkEveryAnswer(sys: { call: System["call"] }): OpenApiContract {
  const contract = openApiContract();
  const call = sys.call;
  sys.call = async (method, path, init) => {
    const response = await call(method, path, init);
    await contract.fetched(method, path, response.clone());
    return response;
  };
  return contract;
}
