import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { buildOpenApi } from "../src/api/openapi.ts";
import { apiRoutes } from "../src/api/routes/index.ts";

/**
 * Writes the committed OpenAPI document (`openapi.json` at the repository root) from the route
 * declarations. `test/contract/openapi.test.ts` fails when the committed file drifts from a fresh build.
 */
export const OPENAPI_SERVER_URL = "http://localhost:8080";
export const OPENAPI_PATH = resolve(import.meta.dirname, "..", "openapi.json");

export function renderOpenApi(): string {
  return `${JSON.stringify(buildOpenApi(apiRoutes, OPENAPI_SERVER_URL), null, 2)}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  writeFileSync(OPENAPI_PATH, renderOpenApi());
  console.log(`wrote ${OPENAPI_PATH}`);
}
