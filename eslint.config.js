// Lint rules per the house style: type-checked preset, no default exports, type-only imports,
// no `any`, no non-null assertions, no floating promises, exhaustive switches, layer boundaries.
import js from "@eslint/js";
import boundaries from "eslint-plugin-boundaries";
import tseslint from "typescript-eslint";

/**
 * The layers of the house style (§2.2, "Dependency arrows"), quoted by docs/architecture.md: api →
 * {requests, tenancy, webhooks, change-feed, connector} → connections → {errors, platform, store};
 * requests and the connector reach the ledger; every module may use the store (the only SQL); the
 * simulator may read ledger definitions but talks to the service only over HTTP and SOAP; nothing
 * but the composition root imports api. `deps` (src/deps.ts) is the composition root's bag of
 * capabilities and imports no feature module; `config` parses the environment.
 */
const LAYERS = [
  { type: "root", pattern: ["src/deps.ts"], mode: "file" },
  { type: "config", pattern: ["src/config.ts"], mode: "file" },
  { type: "app", pattern: ["src/app.ts", "src/main.ts", "src/cli.ts", "src/demo.ts"], mode: "file" },
  // Simulator mode's composition: the demo and the host of simulated end users inside the service.
  { type: "app", pattern: "src/simulation" },
  { type: "api", pattern: "src/api" },
  { type: "requests", pattern: "src/requests" },
  { type: "tenancy", pattern: "src/tenancy" },
  // What a connection is (issue 24): its status machine, when it was last seen, its history and
  // expected check-in. Below everything that reads or moves a connection.
  { type: "connections", pattern: "src/connections" },
  { type: "webhooks", pattern: "src/webhooks" },
  { type: "change-feed", pattern: "src/change-feed" },
  { type: "mirror", pattern: "src/mirror" },
  // Support bundles (issue 28, decision 0049): what the public API shows of one end user, in one document.
  { type: "support", pattern: "src/support" },
  { type: "connector", pattern: "src/connector" },
  { type: "ledger", pattern: "src/ledger" },
  { type: "errors", pattern: "src/errors" },
  { type: "platform", pattern: "src/platform" },
  { type: "store", pattern: "src/store" },
  { type: "simulator", pattern: "src/simulator" },
  { type: "testing", pattern: "src/testing" },
  // The MCP server (decision 0022): a client of the service over HTTP that reads the operation table.
  { type: "mcp", pattern: "src/mcp" },
];
const BASE = ["root", "config", "errors", "platform", "store"];
const ARROWS = [
  { from: "app", allow: ["*"] },
  { from: "testing", allow: ["*"] },
  {
    from: "api",
    allow: [
      ...BASE,
      "requests",
      "tenancy",
      "connections",
      "webhooks",
      "change-feed",
      "mirror",
      "support",
      "ledger",
      "connector",
    ],
  },
  { from: "connector", allow: [...BASE, "requests", "ledger", "tenancy", "connections"] },
  { from: "requests", allow: [...BASE, "ledger", "tenancy", "connections"] },
  { from: "tenancy", allow: [...BASE, "ledger", "connections"] },
  { from: "connections", allow: BASE },
  { from: "webhooks", allow: [...BASE, "ledger", "tenancy"] },
  { from: "change-feed", allow: [...BASE, "ledger", "requests", "webhooks", "tenancy"] },
  { from: "mirror", allow: [...BASE, "ledger", "requests", "tenancy", "connections", "change-feed"] },
  { from: "support", allow: [...BASE, "ledger", "requests", "tenancy", "connections", "webhooks"] },
  { from: "ledger", allow: BASE },
  { from: "store", allow: ["root", "config", "errors", "platform"] },
  { from: "errors", allow: ["errors"] },
  { from: "platform", allow: ["platform"] },
  { from: "root", allow: ["root", "config", "platform", "store"] },
  { from: "config", allow: ["platform", "webhooks"] },
  // The simulated Web Connector writes its envelopes with the connector's SOAP codec (a client the
  // service did not write, npm `soap` on the official WSDL, checks the endpoint independently).
  { from: "simulator", allow: ["simulator", "ledger", "platform", "errors", "connector"] },
  // It validates and renders with the core's pure functions (ledger, requests/typed-call's
  // validator) and reaches the service only over its public HTTP API: never the store.
  { from: "mcp", allow: ["mcp", "ledger", "requests", "errors", "platform"] },
];

export default tseslint.config(
  {
    ignores: [
      "node_modules",
      "data",
      "coverage",
      "dist",
      "dist.*",
      "*.js",
      "*.mjs",
      "scripts/*.mjs",
      "bin",
      "packages/*/dist",
      "packages/*/scripts/*.mjs",
      "packages/*/node_modules",
      "packages/client/src/generated",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          allowForKnownSafeCalls: [
            { from: "package", package: "node:test", name: ["test", "describe", "it", "suite"] },
          ],
        },
      ],
      "@typescript-eslint/switch-exhaustiveness-check": [
        "error",
        { considerDefaultExhaustiveForUnions: true },
      ],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        { allowNumber: true, allowBoolean: true },
      ],
      "no-restricted-syntax": [
        "error",
        { selector: "ExportDefaultDeclaration", message: "Use named exports." },
      ],
    },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["src/platform/**", "src/**/*.test.ts", "src/testing/**", "src/simulator/**"],
    rules: {
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "Use the injected clock (src/platform/clock.ts)." },
        { object: "Math", property: "random", message: "Use src/platform/random.ts." },
      ],
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["**/api/**", "../api/*"], message: "Only app.ts imports the api layer." }] },
      ],
    },
  },
  {
    // When a connector was last seen is read from a Seen row through connections/seen.ts, which
    // counts this instance's unwritten activity stamps (decision 0023); the column is the store's.
    files: ["src/**/*.ts"],
    ignores: ["src/connections/**", "src/store/**", "src/**/*.test.ts", "src/testing/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "ExportDefaultDeclaration", message: "Use named exports." },
        {
          selector: "MemberExpression[property.name='last_seen_at']",
          message:
            "Read when the connector was last seen with connections/seen.ts (lastSeenAt of a Seen row).",
        },
      ],
    },
  },
  {
    files: ["src/app.ts", "src/api/**"],
    rules: { "no-restricted-imports": "off" },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["src/**/*.test.ts"],
    plugins: { boundaries },
    settings: { "boundaries/elements": LAYERS, "boundaries/include": ["src/**/*.ts"] },
    rules: { "boundaries/element-types": ["error", { default: "disallow", rules: ARROWS }] },
  },
  {
    // The operator console's browser module (decision 0026): plain JavaScript, not type-checked.
    files: ["src/api/console/**/*.js"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: "module",
      globals: Object.fromEntries(
        [
          "document",
          "window",
          "location",
          "fetch",
          "URLSearchParams",
          "URL",
          "Blob",
          "FormData",
          "Node",
          "setTimeout",
          "clearTimeout",
        ].map((name) => [name, "readonly"]),
      ),
    },
  },
  {
    // The setup page's script (decision 0033): a classic browser script, not type-checked.
    files: ["src/api/setup/**/*.js"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: "script",
      globals: Object.fromEntries(
        ["document", "window", "navigator", "fetch", "setTimeout"].map((name) => [name, "readonly"]),
      ),
    },
  },
  {
    files: [
      "**/*.test.ts",
      "test/**",
      "src/testing/**",
      "bench/**",
      "scripts/**",
      "packages/*/test/**",
      "packages/*/scripts/**",
    ],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
    },
  },
);
