import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { catalogue } from "../../../src/errors/catalogue.ts";
import { generateClientFiles } from "../scripts/generate.ts";
import { ERROR_CODES, LedgerBridge, OPERATIONS } from "../src/index.ts";

test("the committed generated files are what `npm run gen:client` makes from openapi.json and the catalogue", async () => {
  for (const file of await generateClientFiles()) {
    const committed = await readFile(file.url, "utf8");
    assert.ok(
      committed === file.text,
      `${fileURLToPath(file.url)} is stale: run \`npm run gen:client\` and commit the result`,
    );
  }
});

test("every operation of the document is a method of its namespace; every catalogue code is in the union", async () => {
  const doc = JSON.parse(await readFile(new URL("../../../openapi.json", import.meta.url), "utf8")) as {
    paths: Record<string, Record<string, { operationId?: string }>>;
  };
  const ids = Object.values(doc.paths).flatMap((item) =>
    ["get", "post", "put", "patch", "delete"].flatMap((m) =>
      item[m]?.operationId ? [item[m].operationId] : [],
    ),
  );
  assert.deepEqual(Object.keys(OPERATIONS).sort(), [...ids].sort());
  const client = new LedgerBridge({ apiKey: "sk_test_unused" }) as unknown as Record<string, unknown>;
  for (const id of ids) {
    const method = id
      .split(".")
      .reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], client);
    assert.equal(typeof method, "function", id);
  }
  assert.deepEqual([...ERROR_CODES], Object.keys(catalogue).sort());
});
