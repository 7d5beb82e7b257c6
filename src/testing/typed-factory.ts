/**
 * Records made through the typed HTTP API for tests and benchmarks: a minimal valid body per group
 * (`ledger/resources/examples.ts`), whose references name records this factory creates first, through the same
 * API. Which groups a reference may name is the simulated application's rule (`refTarget`), which is
 * also what the application enforces.
 */
import assert from "node:assert/strict";
import { allResources, type ResourceDefinition } from "../ledger/resources/definitions.ts";
import type { Field, Shape } from "../ledger/resources/shape.ts";
import { refTarget } from "../simulator/ledger/refs.ts";
import { sampleBody } from "../ledger/resources/examples.ts";

/** One HTTP call of the typed API; returns the status and the JSON body. */
export type TypedCall = (
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: Record<string, unknown> }>;

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

export class TypedFactory {
  private readonly random = seeded(11);
  private count = 0;
  private depth = 0;
  readonly serial = (): number => ++this.count;

  constructor(private readonly call: TypedCall) {}

  /** Creates one record of `resource` through `POST /v1/ledger-desktop/<path>`; returns it. */
  async create(resource: ResourceDefinition): Promise<Record<string, unknown>> {
    const shape = resource.create;
    assert.ok(shape, `${resource.entry.resource} has no create`);
    this.depth++;
    try {
      assert.ok(this.depth < 8, `reference chain too deep at ${resource.entry.resource}`);
      const body = await this.body(resource, shape);
      const created = await this.call("POST", `/v1/ledger-desktop/${resource.entry.path}`, body);
      assert.equal(
        created.status,
        201,
        `${resource.entry.resource} create: ${JSON.stringify(created.body)}\nbody: ${JSON.stringify(body)}`,
      );
      return created.body;
    } finally {
      this.depth--;
    }
  }

  /** A minimal body for `shape` whose references (and applied-to transactions) name fresh records. */
  async body(owner: ResourceDefinition, shape: Shape): Promise<Record<string, unknown>> {
    const ids = new Map<string, string>();
    const pending: Array<() => Promise<void>> = [];
    const key = (path: readonly string[]): string => path.join("/");
    const sources = {
      random: this.random,
      serial: this.serial,
      refId: (field: Field, path: readonly string[]) => {
        pending.push(async () => void ids.set(key(path), await this.refFor(owner, field)));
        return "";
      },
      txnId: (_field: Field, path: readonly string[]) => {
        pending.push(async () => void ids.set(key(path), await this.txnFor(owner, path)));
        return "";
      },
    };
    sampleBody(shape, sources);
    for (const next of pending) await next();
    const lookup = (_field: Field, path: readonly string[]): string => ids.get(key(path)) ?? "";
    return sampleBody(shape, { ...sources, refId: lookup, txnId: lookup });
  }

  private async refFor(owner: ResourceDefinition, field: Field): Promise<string> {
    const { objects } = refTarget(field.slot.name, owner.entry.object);
    const target = allResources().find((r) => r.create !== null && objects.includes(r.entry.object));
    assert.ok(target, `no group can create a ${field.slot.name} for ${owner.entry.resource}`);
    return String((await this.create(target)).id);
  }

  private async txnFor(owner: ResourceDefinition, path: readonly string[]): Promise<string> {
    const object = owner.entry.object.startsWith("BillPayment")
      ? "Bill"
      : path.some((p) => p.startsWith("Refund"))
        ? "CreditMemo"
        : "Invoice";
    const target = allResources().find((r) => r.entry.object === object);
    assert.ok(target);
    return String((await this.create(target)).id);
  }
}
