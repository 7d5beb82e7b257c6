import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { demoBanner, type Demo } from "./demo.ts";

const KEYS = {
  secretLive: `sk_live_${"L".repeat(32)}`,
  secretTest: `sk_test_${"T".repeat(32)}`,
  publishableLive: `pk_live_${"P".repeat(32)}`,
  publishableTest: `pk_test_${"Q".repeat(32)}`,
};

function demoIn(dir: string): Demo {
  const keysPath = join(dir, "demo.json");
  const file = {
    projectId: "proj_01jzx0000000000000000000pp",
    organization: "org",
    endUserId: "eu_01jzx0000000000000000000ee",
    keys: KEYS,
  };
  writeFileSync(keysPath, JSON.stringify(file), { mode: 0o600 });
  return { file, keysPath, online: true };
}

test("in a terminal the banner prints the keys and commands that carry them (the README's quick start)", () => {
  const banner = demoBanner(demoIn(mkdtempSync(join(tmpdir(), "lb-banner-"))), {
    url: "http://localhost:8080",
    engine: "pglite",
    terminal: true,
  });
  for (const key of Object.values(KEYS)) assert.ok(banner.includes(key), key);
  assert.match(
    banner,
    new RegExp(`curl -s http://localhost:8080/v1/end-users -H "Authorization: Bearer ${KEYS.secretLive}"`),
  );
});

test("anywhere else (a log) the banner prints no key: it names the key file, and its commands read the key from it", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "lb banner 'quoted' "));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const demo = demoIn(dir);
  const banner = demoBanner(demo, { url: "http://localhost:8080", engine: "pglite", terminal: false });
  for (const key of Object.values(KEYS)) assert.ok(!banner.includes(key), `${key} is not printed`);
  assert.doesNotMatch(banner, /[sp]k_(live|test)_/);
  assert.ok(banner.includes(demo.keysPath), banner);
  assert.match(banner, /-H "Authorization: Bearer \$KEY"/);
  // The printed `KEY=` line, run by a shell, gives the secret key (a path with spaces and quotes too).
  const line = banner.split("\n").find((l) => l.trim().startsWith("KEY=")) ?? "";
  const shell = spawnSync("sh", ["-c", `${line.trim()} && printf %s "$KEY"`], { encoding: "utf8" });
  assert.equal(shell.status, 0, shell.stderr);
  assert.equal(shell.stdout, KEYS.secretLive);
});
