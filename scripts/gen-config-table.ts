import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import ts from "typescript";
import { z } from "zod";
import { configSchema } from "../src/config.ts";

/**
 * Writes the README's configuration table from `src/config.ts`, its single source: one row per
 * environment variable of `configSchema`, in the schema's order, with its default and allowed values
 * (from the schema itself, as JSON Schema) and its meaning (the variable's TSDoc; a `@defaultValue`
 * tag names a default computed at start). `test/contract/config-table.test.ts` fails when the
 * committed README differs from a fresh rendering.
 */
export const CONFIG_PATH = resolve(import.meta.dirname, "..", "src", "config.ts");
export const README_PATH = resolve(import.meta.dirname, "..", "README.md");
export const TABLE_START =
  "<!-- config-table: generated from src/config.ts by `npm run gen:config-table`; edit the TSDoc there -->";
export const TABLE_END = "<!-- /config-table -->";

interface Documented {
  description: string;
  defaultValue: string | undefined;
}

/** Each property's TSDoc in `configSchema`'s object literal, read from the source with the compiler. */
export function documentedVariables(source = readFileSync(CONFIG_PATH, "utf8")): Map<string, Documented> {
  const file = ts.createSourceFile(CONFIG_PATH, source, ts.ScriptTarget.Latest, true);
  const found = new Map<string, Documented>();
  const visit = (node: ts.Node): void => {
    if (
      ts.isVariableDeclaration(node) &&
      node.name.getText(file) === "configSchema" &&
      node.initializer &&
      ts.isCallExpression(node.initializer)
    ) {
      const literal = node.initializer.arguments[0];
      if (literal && ts.isObjectLiteralExpression(literal)) {
        for (const property of literal.properties) {
          if (!property.name) continue;
          const docs = ts.getJSDocCommentsAndTags(property).filter(ts.isJSDoc);
          const doc = docs.at(-1);
          const text = ts.getTextOfJSDocComment(doc?.comment) ?? "";
          const tag = doc?.tags?.find((t) => t.tagName.text === "defaultValue");
          found.set(property.name.getText(file), {
            description: text.replace(/\s+/g, " ").trim(),
            defaultValue: tag ? (ts.getTextOfJSDocComment(tag.comment) ?? "").trim() : undefined,
          });
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

interface JsonSchemaProperty {
  type?: string;
  enum?: unknown[];
  format?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
}

const UNITS: Array<[RegExp, Array<[number, string]>]> = [
  [
    /_MS$/,
    [
      [24 * 3600 * 1000, "d"],
      [3600 * 1000, "h"],
      [60 * 1000, "min"],
      [1000, "s"],
    ],
  ],
  [
    /_SECONDS$/,
    [
      [3600, "h"],
      [60, "min"],
    ],
  ],
  [
    /_BYTES$/,
    [
      [1024 * 1024, "MiB"],
      [1024, "KiB"],
    ],
  ],
];

/** `60000 (1 min)`: the value in the largest unit it is a whole number of, for the names with a unit. */
function withUnit(name: string, value: number): string {
  for (const [pattern, units] of UNITS) {
    if (!pattern.test(name)) continue;
    for (const [size, unit] of units) {
      if (value >= size && value % size === 0) return `\`${value}\` (${value / size} ${unit})`;
    }
  }
  return `\`${value}\``;
}

function defaultCell(name: string, property: JsonSchemaProperty, documented: Documented): string {
  if (documented.defaultValue) return documented.defaultValue;
  if (property.default === undefined) return "–";
  if (typeof property.default === "number") return withUnit(name, property.default);
  return `\`${typeof property.default === "string" ? property.default : JSON.stringify(property.default)}\``;
}

function valuesCell(property: JsonSchemaProperty): string {
  if (property.enum) return property.enum.map((v) => `\`${String(v)}\``).join(", ");
  if (property.type === "integer") {
    const low =
      property.exclusiveMinimum !== undefined
        ? property.exclusiveMinimum + 1
        : (property.minimum ?? undefined);
    const high =
      property.maximum !== undefined && property.maximum < Number.MAX_SAFE_INTEGER
        ? property.maximum
        : undefined;
    if (low !== undefined && high !== undefined) return `integer ${low}–${high}`;
    if (low !== undefined) return `integer ≥ ${low}`;
    return "integer";
  }
  if (property.format === "uri") return "URL";
  return "text";
}

const cell = (text: string): string => text.replace(/\|/g, "\\|");

/** The table: one row per variable, in the schema's order. Throws on a variable without TSDoc. */
export function renderConfigTable(source?: string): string {
  const documented = documentedVariables(source);
  const json = z.toJSONSchema(configSchema, { io: "input", unrepresentable: "any" }) as {
    properties: Record<string, JsonSchemaProperty>;
  };
  const rows = ["| variable | default | values | meaning |", "|---|---|---|---|"];
  for (const name of Object.keys(configSchema.shape)) {
    const doc = documented.get(name);
    if (!doc?.description) throw new Error(`src/config.ts: ${name} has no TSDoc to document it`);
    const property = json.properties[name] ?? {};
    rows.push(
      `| \`${name}\` | ${cell(defaultCell(name, property, doc))} | ${cell(valuesCell(property))} | ${cell(doc.description)} |`,
    );
  }
  return rows.join("\n");
}

/** The README with the text between the table's markers replaced by a fresh rendering. */
export function withConfigTable(readme: string, table = renderConfigTable()): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`README.md has no "${TABLE_START}" … "${TABLE_END}" block`);
  return `${readme.slice(0, start + TABLE_START.length)}\n\n${table}\n\n${readme.slice(end)}`;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  writeFileSync(README_PATH, withConfigTable(readFileSync(README_PATH, "utf8")));
  console.log(`wrote the configuration table in ${README_PATH}`);
}
