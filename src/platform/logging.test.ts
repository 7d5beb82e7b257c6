import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

const LINES = 2_000;
const logging = fileURLToPath(new URL("./logging.ts", import.meta.url));

/** Runs `ending` in a child right after it logged LINES lines; returns the lines on its stdout. */
function linesAfter(ending: string): { lines: string[]; status: number | null } {
  const script = `
    import { serviceLogger } from ${JSON.stringify(logging)};
    const { logger } = serviceLogger("info");
    for (let i = 0; i < ${LINES}; i += 1) logger.info({ i, pad: "x".repeat(200) }, "line");
    ${ending}
  `;
  const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return { lines: child.stdout.split("\n").filter((line) => line.length > 0), status: child.status };
}

function assertAllWritten(lines: string[]): void {
  assert.equal(lines.length, LINES);
  lines.forEach((line, i) => assert.equal((JSON.parse(line) as { i: number }).i, i));
}

// The destination writes off the thread (decision 0029): these fail if the buffer is not written
// synchronously when the process ends (0.5 MB of lines cannot all be out by then otherwise).
test("every line logged before process.exit() is written, in order", () => {
  const child = linesAfter("process.exit(3);");
  assert.equal(child.status, 3);
  assertAllWritten(child.lines);
});

test("every line logged before an uncaught error is written", () => {
  const child = linesAfter('throw new Error("boom");');
  assert.equal(child.status, 1);
  assertAllWritten(child.lines);
});
