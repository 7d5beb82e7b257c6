// PLACEHOLDER until the evaluator branch (h-mirror-query) lands: no filters, application order.
import type { ServiceError } from "../errors/service-error.ts";
import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import type { ParamValue } from "../ledger/typed/filters.ts";

type Json = Record<string, unknown>;

export interface MirrorQueryContext {
  utcOffsetMinutes: number;
  nowMs: number;
}

export function unsupportedParam(
  _resource: ResourceDefinition,
  query: ReadonlyMap<string, ParamValue>,
): string | null {
  for (const name of query.keys()) if (name !== "limit" && name !== "cursor") return name;
  return null;
}

export function inAnswerOrder(resource: ResourceDefinition, records: readonly Json[]): Json[] {
  const key = (r: Json): string => (typeof r.fullName === "string" ? r.fullName : "").toLowerCase();
  const counter = (r: Json): number => parseInt(String(r.id).split("-")[0] ?? "0", 16);
  return [...records].sort((a, b) =>
    resource.entry.kind === "list"
      ? key(a) < key(b)
        ? -1
        : key(a) > key(b)
          ? 1
          : 0
      : counter(a) - counter(b),
  );
}

export function answer(
  resource: ResourceDefinition,
  records: readonly Json[],
  _query: ReadonlyMap<string, ParamValue>,
  _context: MirrorQueryContext,
): { kind: "records"; records: Json[] } | { kind: "error"; error: ServiceError } {
  const active = resource.entry.kind === "list" ? records.filter((r) => r.isActive !== false) : records;
  return { kind: "records", records: inAnswerOrder(resource, active) };
}
