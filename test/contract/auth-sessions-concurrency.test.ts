import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../src/platform/ids.ts";
import { connectorUsername } from "../../src/tenancy/auth-sessions.ts";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { Client, expectStatus, type EndUser } from "./helpers.ts";

/**
 * Found under load (issue 8): concurrent `POST /v1/auth-sessions` answered 500 on a duplicate
 * connector user name, because the name was cut from the time-and-counter part of the connection
 * ID. Generated credentials are unique by construction, and concurrent setups of one end user share
 * its one connection.
 */
let h: TestApp;
let live: Client;

before(async () => {
  h = await buildTestApp(null);
  live = new Client(h.app, h.project.keys.secretLive);
});
after(() => h.close());

async function createEndUser(sourceId: string): Promise<EndUser> {
  const res = await live.request("POST", "/v1/end-users", { body: { companyName: sourceId, sourceId } });
  return expectStatus<EndUser>(res, 201);
}

const createSession = (endUserId: string) =>
  live.request("POST", "/v1/auth-sessions", {
    body: { publishableKey: h.project.keys.publishableLive, endUserId },
  });

describe("Connector credentials are collision-free", () => {
  test("connection IDs made in the same millisecond give different connector user names", () => {
    // IDs made back to back share their time and counter prefix (the first 16 characters).
    // (Grouped by prefix: the first ID may be the last one made in its millisecond.)
    const ids = Array.from({ length: 200 }, () => newId("connection"));
    const prefixes = new Set(ids.map((id) => id.slice(0, 21)));
    assert.ok(prefixes.size < ids.length, "some IDs share their first 16 suffix characters");
    const names = new Set(ids.map(connectorUsername));
    assert.equal(names.size, ids.length, "every connection has its own user name");
  });

  test("a user name carries the whole ID suffix", () => {
    const id = newId("connection");
    assert.equal(connectorUsername(id), `lb-${id.slice("conn_".length)}`);
  });

  test("concurrent auth sessions for different end users all succeed with distinct user names", async () => {
    const endUsers = await Promise.all(Array.from({ length: 30 }, (_, i) => createEndUser(`par-${i}`)));
    const responses = await Promise.all(endUsers.map((eu) => createSession(eu.id)));
    for (const res of responses) expectStatus(res, 201);
    const rows = await h.deps.db
      .selectFrom("connections")
      .select(["username", "end_user_id"])
      .where(
        "end_user_id",
        "in",
        endUsers.map((eu) => eu.id),
      )
      .execute();
    assert.equal(rows.length, endUsers.length, "one connection per end user");
    assert.equal(new Set(rows.map((r) => r.username)).size, rows.length, "user names are distinct");
  });

  test("concurrent auth sessions for one end user share its one connection", async () => {
    const endUser = await createEndUser("same-eu");
    const responses = await Promise.all(Array.from({ length: 8 }, () => createSession(endUser.id)));
    for (const res of responses) expectStatus(res, 201);
    const rows = await h.deps.db
      .selectFrom("connections")
      .select("id")
      .where("end_user_id", "=", endUser.id)
      .execute();
    assert.equal(rows.length, 1, "a single connection");
    const sessions = await h.deps.db
      .selectFrom("auth_sessions")
      .select("connection_id")
      .where("end_user_id", "=", endUser.id)
      .execute();
    assert.equal(sessions.length, 8);
    assert.ok(
      sessions.every((s) => s.connection_id === rows[0]?.id),
      "every session names that connection",
    );
  });
});
