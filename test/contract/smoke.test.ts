import assert from "node:assert/strict";
import { test } from "node:test";
import { bearer, buildTestApp } from "../../src/testing/harness.ts";

test("smoke: create and list end users", async (t) => {
  const h = await buildTestApp(t);
  const created = await h.app.inject({ method: "POST", url: "/v1/end-users", headers: bearer(h.project.keys.secretLive), payload: { companyName: "Acme", sourceId: "a1" } });
  assert.equal(created.statusCode, 201, created.body);
  const list = await h.app.inject({ method: "GET", url: "/v1/end-users", headers: bearer(h.project.keys.secretLive) });
  assert.equal(list.statusCode, 200, list.body);
  console.log(list.headers, list.json());
  const bad = await h.app.inject({ method: "POST", url: "/v1/end-users", headers: bearer(h.project.keys.secretLive), payload: "{bad" , });
  console.log(bad.statusCode, bad.body);
  const bad2 = await h.app.inject({ method: "POST", url: "/v1/end-users", headers: {...bearer(h.project.keys.secretLive), "content-type": "application/json"}, payload: "{bad" , });
  console.log(bad2.statusCode, bad2.body);
  const noauth = await h.app.inject({ method: "GET", url: "/v1/end-users" });
  console.log(noauth.statusCode, noauth.headers, noauth.body);
});
