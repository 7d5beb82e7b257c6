// Lint rules per the house style: type-checked preset, no default exports, type-only imports,
// no `any`, no non-null assertions, no floating promises, exhaustive switches, layer boundaries.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules", "data", "coverage", "*.js", "*.mjs", "bin"] },
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
    files: ["src/app.ts", "src/api/**"],
    rules: { "no-restricted-imports": "off" },
  },
  {
    files: ["**/*.test.ts", "test/**", "src/testing/**", "bench/**", "scripts/**"],
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
