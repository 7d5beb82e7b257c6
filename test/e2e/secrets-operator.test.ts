import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { runCli, startService, workspace } from "./processes.ts";

/**
 * The operator's side of secrets at rest (decision 0032), with the real service and CLI processes:
 * a deployment without `SECRETS_KEY` starts and says in one log line what it leaves unprotected; one
 * with a key says which; `ledger-bridge secrets reseal` runs inside the running service (its keys),
 * or on the store when none runs (the CLI's environment), and refuses without a key.
 */
const logLines = (text: string): Array<{ level: number; msg: string; [key: string]: unknown }> =>
  text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: number; msg: string });

test("without SECRETS_KEY the service starts and warns once what is unprotected; with one, reseal runs in it or on the store", async (t) => {
  const ws = await workspace(t, { SIMULATOR: "off", LOG_LEVEL: "info" });
  const bare = await startService(t, ws);
  const warnings = logLines(bare.stdout()).filter((line) => line.msg.startsWith("SECRETS_KEY is not set"));
  assert.equal(warnings.length, 1, bare.stdout());
  const listed = (warnings[0] as { unprotectedAtRest?: string[] }).unprotectedAtRest ?? [];
  assert.deepEqual(
    listed.map((item) => item.split(" (")[0]),
    [
      "webhook signing secrets",
      "card numbers, social security numbers and passwords of Requests waiting to be sent",
      "idempotency replay copies of new API keys, webhook secrets and auth-session client secrets",
      "idempotency fingerprints",
    ],
  );
  const refused = await runCli(ws, ["secrets", "reseal"]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /SECRETS_KEY is not set/);
  assert.equal(await bare.stop(), 0);

  const key = randomBytes(32).toString("base64");
  const keyed = await startService(t, ws, { SECRETS_KEY: key });
  const info = logLines(keyed.stdout()).find(
    (line) => line.msg === "secrets at rest are sealed with SECRETS_KEY",
  );
  assert.ok(info, keyed.stdout());
  assert.equal(
    logLines(keyed.stdout()).filter((line) => line.msg.startsWith("SECRETS_KEY is not set")).length,
    0,
  );
  assert.ok(!keyed.stdout().includes(key), "the key is never logged");
  // Inside the running service, with its key (the CLI's environment has none).
  const inService = await runCli(ws, ["secrets", "reseal"]);
  assert.equal(inService.code, 0, inService.stderr);
  assert.match(inService.stderr, /the running service/);
  const report = JSON.parse(inService.stdout) as { keyId: string };
  assert.equal(report.keyId, (info as { keyId?: string }).keyId);
  assert.match(inService.stderr, /SECRETS_KEY_PREVIOUS can be emptied/);
  assert.equal(await keyed.stop(), 0);

  // On the store, with the CLI's own environment.
  const onStore = await runCli(ws, ["secrets", "reseal"], { SECRETS_KEY: key });
  assert.equal(onStore.code, 0, onStore.stderr);
  assert.doesNotMatch(onStore.stderr, /the running service/);
  assert.equal((JSON.parse(onStore.stdout) as { keyId: string }).keyId, report.keyId);
  const badKey = await runCli(ws, ["secrets", "reseal"], { SECRETS_KEY: "not a key" });
  assert.notEqual(badKey.code, 0);
  assert.match(badKey.stderr, /SECRETS_KEY: must be 32 random bytes/);
});
