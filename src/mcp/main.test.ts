import assert from "node:assert/strict";
import { test } from "node:test";
import { mcpSettings, McpUsageError } from "./main.ts";

const KEY = { LEDGER_BRIDGE_API_KEY: "sk_test_abc" };
const EU_X = "eu_01jzx0000000000000000000xx";
const EU_Y = "eu_01jzy0000000000000000000yy";

test("read-only by default; writes only with --allow-writes; the key only from the environment", () => {
  const settings = mcpSettings([], KEY);
  assert.equal(settings.allowWrites, false);
  assert.equal(settings.confirmByPerson, false);
  assert.equal(settings.baseUrl, "http://localhost:8080");
  assert.equal(settings.confirmationTtlMs, 600_000);
  assert.equal(settings.timeoutSeconds, 45);
  const writes = mcpSettings(
    ["--allow-writes", "--base-url", "https://svc.example", "--end-user", EU_X, "--timeout-seconds", "300"],
    KEY,
  );
  assert.deepEqual(
    [writes.allowWrites, writes.baseUrl, writes.endUserId, writes.timeoutSeconds],
    [true, "https://svc.example", EU_X, 300],
  );
  const fromEnv = mcpSettings([], {
    ...KEY,
    LEDGER_BRIDGE_BASE_URL: "http://127.0.0.1:9",
    LEDGER_BRIDGE_END_USER_ID: EU_Y,
  });
  assert.deepEqual([fromEnv.baseUrl, fromEnv.endUserId], ["http://127.0.0.1:9", EU_Y]);
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
    [["--end-user", ".."], KEY],
    [["--end-user", "eu_x"], KEY],
    [["--confirm-by-person"], KEY],
  ] as const) {
    assert.throws(() => mcpSettings([...argv], env), McpUsageError, argv.join(" "));
  }
});

test("--confirm-by-person goes with --allow-writes", () => {
  const settings = mcpSettings(["--allow-writes", "--confirm-by-person"], KEY);
  assert.deepEqual([settings.allowWrites, settings.confirmByPerson], [true, true]);
  assert.throws(() => mcpSettings(["--confirm-by-person"], KEY), /needs --allow-writes/);
});
