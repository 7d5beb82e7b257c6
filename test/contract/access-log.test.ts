import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { pino } from "pino";
import { bearer, buildTestApp } from "../../src/testing/harness.ts";

/**
 * The access log never carries a setup link's client secret (issue 23): the setup routes log at
 * `warn` and write their own line without the query string, and every access line masks a
 * `clientSecret` wherever it appears (a link pasted onto another route, an errored call).
 */
test("access lines mask a clientSecret in the query string", async (t) => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const testApp = await buildTestApp(t, { logger: pino({ level: "info" }, sink) });
  const secret = "cs_9f8e7d6c5b4a39281706";
  const res = await testApp.app.inject({
    method: "GET",
    url: `/v1/end-users?limit=1&clientSecret=${secret}&x=1`,
    headers: bearer(testApp.project.keys.secretLive),
  });
  assert.equal(res.statusCode, 400, res.body);
  const setup = await testApp.app.inject({
    method: "GET",
    url: `/setup/authsess_01jc0000000000000000000000?clientSecret=${secret}`,
  });
  assert.equal(setup.statusCode, 404);
  const logged = lines.join("");
  assert.match(logged, /"url":"\/v1\/end-users\?limit=1&clientSecret=…&x=1"/, "the line names the call");
  assert.match(logged, /setup page request/);
  assert.ok(!logged.includes(secret), logged);
});
