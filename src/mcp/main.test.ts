import assert from "node:assert/strict";
import { test } from "node:test";
import { mcpSettings, McpUsageError } from "./main.ts";

const KEY = { LEDGER_BRIDGE_API_KEY: "sk_test_abc" };

test("read-only by default; writes only with --allow-writes; the key only from the environment", () => {
  const settings = mcpSettings([], KEY);
  assert.equal(settings.allowWrites, false);
  assert.equal(settings.baseUrl, "http://localhost:8080");
  assert.equal(settings.confirmationTtlMs, 600_000);
  assert.equal(settings.timeoutSeconds, 45);
  const writes = mcpSettings(
    ["--allow-writes", "--base-url", "https://svc.example", "--end-user", "eu_x", "--timeout-seconds", "300"],
    KEY,
  );
  assert.deepEqual(
    [writes.allowWrites, writes.baseUrl, writes.endUserId, writes.timeoutSeconds],
    [true, "https://svc.example", "eu_x", 300],
  );
  const fromEnv = mcpSettings([], {
    ...KEY,
    LEDGER_BRIDGE_BASE_URL: "http://127.0.0.1:9",
    LEDGER_BRIDGE_END_USER_ID: "eu_y",
  });
  assert.deepEqual([fromEnv.baseUrl, fromEnv.endUserId], ["http://127.0.0.1:9", "eu_y"]);
});

test("bad flags and a missing key are usage errors", () => {
  for (const [argv, env] of [
    [[], {}],
    [["--api-key", "sk_test_abc"], KEY],
    [["--base-url", "ftp://x"], KEY],
    [["--timeout-seconds", "301"], KEY],
    [["--timeout-seconds", "0"], KEY],
    [["--confirm-ttl-seconds", "1.5"], KEY],
    [["stray"], KEY],
  ] as const) {
    assert.throws(() => mcpSettings([...argv], env), McpUsageError, argv.join(" "));
  }
});
