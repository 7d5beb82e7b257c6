import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { allResources, type ResourceDefinition } from "../../src/ledger/resources/definitions.ts";
import { listFilters } from "../../src/ledger/typed/filters.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { TypedFactory } from "../../src/testing/typed-factory.ts";
import { bringOnline, E2E_CONFIG, callAsEndUser, type JsonAnswer } from "./helpers.ts";
import { checkEveryAnswer } from "./openapi-contract.ts";

/**
 * Every typed resource group end to end (issue 7, "Done means"): through HTTP, the Web Connector
 * protocol and the simulated application, generated from the registry so no group is skipped —
 * create, retrieve, list with a filter, update, custom fields, void, merge and delete where the
 * group has them, singletons and query-only groups listed. The groups are dealt into shards (one
 * test file each, so no file nears the per-file timeout); one service and one simulated end user
 * serve each shard.
 */
let sys: System;
let eu: ConnectedEndUser;
let factory: TypedFactory;

type Json = Record<string, unknown>;

const call = (method: "GET" | "POST" | "PUT" | "DELETE", path: string, body?: unknown): Promise<JsonAnswer> =>
  callAsEndUser(sys, eu, method, path, body);

const base = (resource: ResourceDefinition): string => `/v1/ledger-desktop/${resource.entry.path}`;

function expectOk(result: { status: number; body: Json }, status: number, label: string): Json {
  assert.equal(result.status, status, `${label}: ${JSON.stringify(result.body).slice(0, 2000)}`);
  return result.body;
}

/** Every output field is present (spec: "Response fields are all present"). */
function assertComplete(resource: ResourceDefinition, record: Json, label: string): void {
  const shape =
    [...resource.records.values()].find((r) => r.objectType === record.objectType)?.shape ?? resource.output;
  for (const field of shape.fields)
    assert.ok(field.json in record, `${label}: field \`${field.json}\` is present`);
}

/** Registers shard `shard` (0-based) of `of`: every `of`-th group, so each shard mixes kinds. */
export function typedResourcesShard(shard: number, of: number): void {
  before(async () => {
    sys = await startSystem(null, { ...E2E_CONFIG });
    checkEveryAnswer(sys);
    eu = await sys.connectEndUser({ companyName: `Typed Co ${shard + 1}` });
    await bringOnline(sys, eu);
    factory = new TypedFactory(call);
  });
  after(() => sys.close());
  describe(`typed operations of every group, end to end (shard ${shard + 1} of ${of})`, () => {
    for (const resource of allResources().filter((_, index) => index % of === shard)) {
      const name = resource.entry.resource;
      test(`${name}: ${resource.actions.join(", ")}`, async () => {
        if (resource.entry.singleton) {
          const one = expectOk(await call("GET", base(resource)), 200, `${name} retrieve`);
          assert.equal(one.objectType, resource.entry.objectType);
          assertComplete(resource, one, name);
          return;
        }
        if (resource.actionSet) {
          // A group with its own messages (custom field definitions) has its own end-to-end test
          // (typed-custom-fields.test.ts); here its list answers with the envelope.
          const body = expectOk(await call("GET", base(resource)), 200, `${name} list`);
          assert.equal(body.objectType, "list");
          return;
        }
        if (!resource.create) {
          // Query-only groups: a list answers with the envelope (some need a filter first).
          // A filter the query requires gets a real value: a record of a fitting group, or an enum value.
          const needs = listFilters(resource).params.filter((p) => p.required);
          const parts: string[] = [];
          for (const param of needs) {
            const values = param.kind.jsonSchema().enum as string[] | undefined;
            if (param.kind.kind === "enum") parts.push(`${param.name}=${values?.[0] ?? ""}`);
            else if (param.kind.kind === "id") {
              const vendors = allResources().find((r) => r.entry.path === "vendors");
              assert.ok(vendors);
              parts.push(`${param.name}=${encodeURIComponent(String((await factory.create(vendors)).id))}`);
            }
          }
          const body = expectOk(
            await call("GET", `${base(resource)}${parts.length > 0 ? `?${parts.join("&")}` : ""}`),
            200,
            `${name} list`,
          );
          assert.equal(body.objectType, "list");
          assert.ok(Array.isArray(body.data));
          for (const record of body.data as Json[]) assertComplete(resource, record, `${name} list`);
          return;
        }
        const created = await factory.create(resource);
        assert.equal(created.objectType, resource.entry.objectType);
        assertComplete(resource, created, `${name} create`);
        const id = String(created.id);

        const got = expectOk(
          await call("GET", `${base(resource)}/${encodeURIComponent(id)}`),
          200,
          `${name} retrieve`,
        );
        assert.equal(got.id, id);
        assert.equal(got.revisionNumber, created.revisionNumber);

        const filters = listFilters(resource).params.map((p) => p.name);
        if (filters.includes("ids")) {
          const listed = expectOk(
            await call("GET", `${base(resource)}?ids=${encodeURIComponent(id)}`),
            200,
            `${name} list ids`,
          );
          assert.deepEqual(
            (listed.data as Json[]).map((r) => r.id),
            [id],
          );
          assert.equal(listed.nextCursor, null);
        } else {
          const listed = expectOk(await call("GET", base(resource)), 200, `${name} list`);
          assert.ok(
            (listed.data as Json[]).some((r) => r.id === id),
            `${name}: the new record is listed`,
          );
        }

        let revision = String(created.revisionNumber);
        if (resource.update) {
          const changes = await factory.body(resource, resource.update);
          delete changes.id;
          const updated = expectOk(
            await call("POST", `${base(resource)}/${encodeURIComponent(id)}`, {
              ...changes,
              revisionNumber: revision,
            }),
            200,
            `${name} update`,
          );
          assert.equal(updated.id, id);
          revision = String(updated.revisionNumber);
          const stale = await call("POST", `${base(resource)}/${encodeURIComponent(id)}`, {
            ...changes,
            revisionNumber: "1",
          });
          assert.equal(stale.status, 409, `${name} stale revision: ${JSON.stringify(stale.body)}`);
          assert.equal((stale.body.error as Json).code, "LEDGER_REVISION_NUMBER_STALE");
        }

        if (resource.actions.includes("void")) {
          const voided = expectOk(
            await call("POST", `${base(resource)}/${encodeURIComponent(id)}/void`),
            200,
            `${name} void`,
          );
          assert.deepEqual([voided.id, voided.voided], [id, true]);
        }

        if (resource.actions.includes("merge")) {
          const other = await factory.create(resource);
          const current = expectOk(
            await call("GET", `${base(resource)}/${encodeURIComponent(id)}`),
            200,
            `${name} reread`,
          );
          const merged = expectOk(
            await call("POST", `${base(resource)}/${encodeURIComponent(String(other.id))}/merge`, {
              revisionNumber: other.revisionNumber,
              mergeIntoId: id,
              mergeIntoRevisionNumber: current.revisionNumber,
            }),
            200,
            `${name} merge`,
          );
          assert.equal(merged.id, id);
          const gone = await call("GET", `${base(resource)}/${encodeURIComponent(String(other.id))}`);
          assert.equal(gone.status, 404, `${name}: the merged record is gone`);
        }

        if (resource.actions.includes("delete")) {
          const refused = await call("DELETE", `${base(resource)}/${encodeURIComponent(id)}?confirm=yes`);
          assert.equal(refused.status, 400, `${name} delete without confirm=true`);
          const deleted = expectOk(
            await call("DELETE", `${base(resource)}/${encodeURIComponent(id)}?confirm=true`),
            200,
            `${name} delete`,
          );
          assert.deepEqual(
            [deleted.id, deleted.deleted, deleted.objectType],
            [id, true, resource.entry.objectType],
          );
          const gone = await call("GET", `${base(resource)}/${encodeURIComponent(id)}`);
          assert.equal(gone.status, 404, `${name}: deleted`);
          assert.equal((gone.body.error as Json).code, "LEDGER_OBJECT_NOT_FOUND");
        }
      });
    }
  });
}
