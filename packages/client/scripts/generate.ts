/**
 * `npm run gen:client`: generates the client's types from the committed `openapi.json` and the error
 * catalogue (decision 0021).
 *
 * - `src/generated/openapi.d.ts`: every path, operation and schema as TypeScript types, written by
 *   the maintained generator `openapi-typescript` (its Node API, the same output as its CLI).
 * - `src/generated/operations.ts`: what the client needs at run time, read from the same document:
 *   one row per operation (method, path, parameters, which headers it takes, whether it pages),
 *   and the error codes of `src/errors/catalogue.ts`.
 * - `src/generated/resources.d.ts`: one interface per namespace (`client.ledger.invoices`), whose
 *   methods take and return the types of `openapi.d.ts`.
 *
 * `generateClientFiles()` is what the drift test compares with the committed files.
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";
import { catalogue } from "../../../src/errors/catalogue.ts";

const ROOT = new URL("../../../", import.meta.url);
const GENERATED = new URL("../src/generated/", import.meta.url);

interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
}
interface Operation {
  operationId: string;
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
}
interface Schema {
  $ref?: string;
  maxProperties?: number;
  required?: string[];
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

/** One operation as the client runs it (the runtime table's row). */
export interface OperationRow {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  pathParams: string[];
  /** What the argument after the path parameters is: the query, the JSON body, or nothing. */
  input: "query" | "body" | "none";
  inputRequired: boolean;
  /** Takes `Svc-End-User-Id`. */
  endUser: boolean;
  /** Takes `Prefer: respond-async` (and the timeout and queue TTL headers). */
  async: boolean;
  /** Takes `Idempotency-Key`. */
  idempotent: boolean;
  /** A cursor list (`cursor` query parameter). */
  paginated: boolean;
}

const METHODS = ["get", "post", "put", "delete"] as const;

function resolve(doc: Document, schema: Schema | undefined): Schema | undefined {
  let current = schema;
  for (let i = 0; current?.$ref && i < 20; i++) {
    current = doc.components?.schemas?.[current.$ref.replace("#/components/schemas/", "")];
  }
  return current;
}

export function operationRows(doc: Document): Map<string, { row: OperationRow; summary: string }> {
  const rows = new Map<string, { row: OperationRow; summary: string }>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = op.parameters ?? [];
      const query = params.filter((p) => p.in === "query");
      const headers = new Set(params.filter((p) => p.in === "header").map((p) => p.name.toLowerCase()));
      const bodySchema = resolve(doc, op.requestBody?.content?.["application/json"]?.schema);
      const hasBody = bodySchema !== undefined && bodySchema.maxProperties !== 0;
      const input = method !== "post" && query.length > 0 ? "query" : hasBody ? "body" : "none";
      rows.set(op.operationId, {
        summary: op.summary ?? op.operationId,
        row: {
          method: method.toUpperCase() as OperationRow["method"],
          path,
          pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? ""),
          input,
          inputRequired:
            input === "query"
              ? query.some((p) => p.required === true)
              : input === "body" &&
                (op.requestBody?.required === true || (bodySchema?.required ?? []).length > 0),
          endUser: headers.has("svc-end-user-id"),
          async: headers.has("prefer"),
          idempotent: headers.has("idempotency-key"),
          paginated: method === "get" && query.some((p) => p.name === "cursor"),
        },
      });
    }
  }
  return rows;
}

interface Namespace {
  methods: Map<string, string>;
  children: Map<string, Namespace>;
}

const pascal = (parts: string[]): string => parts.map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join("");

function operationsModules(doc: Document): { runtime: string; resources: string } {
  const rows = operationRows(doc);
  const root: Namespace = { methods: new Map(), children: new Map() };
  for (const [id] of rows) {
    const parts = id.split(".");
    let ns = root;
    for (const part of parts.slice(0, -1)) {
      let child = ns.children.get(part);
      if (!child) ns.children.set(part, (child = { methods: new Map(), children: new Map() }));
      ns = child;
    }
    ns.methods.set(parts.at(-1) ?? id, id);
  }
  const out: string[] = [];
  out.push(
    "// Generated by `npm run gen:client` (packages/client/scripts/generate.ts) from openapi.json and",
    "// src/errors/catalogue.ts. Do not edit: a test fails when this file differs from what it generates.",
    "",
    "/** Every error code of the service's catalogue (new codes may be added: accept unknown ones). */",
    "export const ERROR_CODES = [",
    ...Object.keys(catalogue)
      .sort()
      .map((code) => `  ${JSON.stringify(code)},`),
    "] as const;",
    "export type ErrorCode = (typeof ERROR_CODES)[number];",
    "",
    "/** One row per operation: how the client sends it. */",
    "export interface OperationRow {",
    '  method: "GET" | "POST" | "PUT" | "DELETE";',
    "  path: string;",
    "  pathParams: readonly string[];",
    '  input: "query" | "body" | "none";',
    "  inputRequired: boolean;",
    "  endUser: boolean;",
    "  async: boolean;",
    "  idempotent: boolean;",
    "  paginated: boolean;",
    "}",
    "",
    "export const OPERATIONS = {",
  );
  for (const [id, { row }] of [...rows].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out.push(`  ${JSON.stringify(id)}: ${JSON.stringify(row)},`);
  }
  out.push(
    "} as const satisfies Record<string, OperationRow>;",
    "",
    "export type OperationName = keyof typeof OPERATIONS;",
    "",
  );
  const runtime = out.join("\n");
  // The namespaces are declarations only (a `.d.ts`): the type checker reads the methods a program
  // uses instead of checking all of them on every run.
  out.length = 0;
  out.push(
    "// Generated by `npm run gen:client` (packages/client/scripts/generate.ts) from openapi.json.",
    "// Do not edit: a test fails when this file differs from what it generates.",
    'import type { CallOptions, BodyOf, QueryOf, ResultOf, ItemOf } from "../types.js";',
    'import type { PagePromise } from "../pagination.js";',
    "",
  );

  const emit = (ns: Namespace, path: string[]): string => {
    const name = `${pascal(path.length === 0 ? ["client"] : path)}Resources`;
    const lines: string[] = [];
    for (const [child, sub] of [...ns.children].sort(([a], [b]) => (a < b ? -1 : 1))) {
      lines.push(`  ${child}: ${emit(sub, [...path, child])};`);
    }
    for (const [method, id] of [...ns.methods].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const { row, summary } = rows.get(id) ?? { row: undefined, summary: "" };
      if (!row) continue;
      const args = row.pathParams.map((p) => `${p}: string`);
      const q = JSON.stringify(id);
      if (row.input === "query") args.push(`query${row.inputRequired ? "" : "?"}: QueryOf<${q}>`);
      if (row.input === "body") args.push(`body${row.inputRequired ? "" : "?"}: BodyOf<${q}>`);
      args.push("options?: CallOptions");
      const result = row.paginated ? `PagePromise<ResultOf<${q}>, ItemOf<${q}>>` : `Promise<ResultOf<${q}>>`;
      lines.push(`  /** ${summary.replace(/\*\//g, "* /")} (\`${row.method} ${row.path}\`) */`);
      lines.push(`  ${method}(${args.join(", ")}): ${result};`);
    }
    out.push(`export interface ${name} {`, ...lines, "}", "");
    return name;
  };
  emit(root, []);
  return { runtime, resources: out.join("\n") };
}

/** The generated files, as they should be committed. */
export async function generateClientFiles(): Promise<{ url: URL; text: string }[]> {
  const source = await readFile(new URL("openapi.json", ROOT), "utf8");
  const doc = JSON.parse(source) as Document;
  const ast = await openapiTS(source);
  const types = astToString(ast);
  const modules = operationsModules(doc);
  return [
    {
      url: new URL("openapi.d.ts", GENERATED),
      text:
        "// Generated by `npm run gen:client` (openapi-typescript, from openapi.json). Do not edit.\n" +
        types,
    },
    { url: new URL("operations.ts", GENERATED), text: modules.runtime },
    { url: new URL("resources.d.ts", GENERATED), text: modules.resources },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const file of await generateClientFiles()) {
    await writeFile(file.url, file.text);
    process.stdout.write(`wrote ${fileURLToPath(file.url)} (${file.text.length} characters)\n`);
  }
}
