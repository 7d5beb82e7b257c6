import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import type { Copy } from "./copy.ts";
import { inAnswerOrder, type Json } from "./records.ts";

/**
 * Names as the application shows them now (decision 0044). A list record's full name is its
 * parents' names and its own (`Acme:Garage`), and a reference shows the full name of the record it
 * names: a rename changes both without changing the records that show them (a job, an invoice of
 * the renamed customer). The mirror keeps each record as it was read and shows it with the names of
 * the mirrored list groups' copies: a full name rebuilt from the copy's parents, a reference's name
 * from the named record's copy. A reference to a group that is not mirrored shows the name it was
 * read with.
 */

/** Current full names by record ID in one list copy (its parents' names joined with `:`). */
function fullNamesOf(copy: Copy): Map<string, string> {
  const names = new Map<string, string>();
  const nameOf = (record: Json, depth: number): string | undefined => {
    const id = String(record.id);
    const known = names.get(id);
    if (known !== undefined) return known;
    const stored = typeof record.fullName === "string" ? record.fullName : undefined;
    const own = typeof record.name === "string" ? record.name : undefined;
    const parentId = (record.parent as { id?: unknown } | null | undefined)?.id;
    let full = stored ?? own;
    if (typeof parentId === "string" && own !== undefined && depth < 32) {
      const parent = copy.byId.get(parentId);
      const parentName = parent ? nameOf(parent, depth + 1) : undefined;
      if (parentName !== undefined) full = `${parentName}:${own}`;
    }
    if (full !== undefined) names.set(id, full);
    return full;
  };
  for (const record of copy.byId.values()) nameOf(record, 0);
  return names;
}

const nameIndexes = new WeakMap<Copy, { version: number; names: Map<string, string> }>();

function nameIndex(copy: Copy): Map<string, string> {
  const held = nameIndexes.get(copy);
  if (held?.version === copy.version) return held.names;
  const names = fullNamesOf(copy);
  nameIndexes.set(copy, { version: copy.version, names });
  return names;
}

/** `value` with every reference (`{id, fullName}`) showing its record's current name; the same object when none changes. */
function renamed(value: unknown, lookup: (id: string) => string | undefined, top: boolean): unknown {
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item) => {
      const next = renamed(item, lookup, false);
      if (next !== item) changed = true;
      return next;
    });
    return changed ? out : value;
  }
  if (typeof value !== "object" || value === null) return value;
  const record = value as Json;
  if (!top && typeof record.id === "string" && "fullName" in record) {
    const current = lookup(record.id);
    if (current !== undefined && current !== record.fullName) return { ...record, fullName: current };
    return value;
  }
  let out: Json | null = null;
  for (const [key, inner] of Object.entries(record)) {
    if (typeof inner !== "object" || inner === null) continue;
    const next = renamed(inner, lookup, false);
    if (next !== inner) (out ??= { ...record })[key] = next;
  }
  return out ?? value;
}

export interface View {
  key: string;
  /** In the application's answer order. */
  records: readonly Json[];
  byId: ReadonlyMap<string, Json>;
}

const views = new WeakMap<Copy, View>();

/**
 * The group's records as the application would show them now, in its answer order: `own` is the
 * group's copy, `lists` the copies of the end user's mirrored list groups (the group's own among
 * them when it is one). Records whose names did not change are the copy's own objects.
 */
export function currentView(resource: ResourceDefinition, own: Copy, lists: readonly Copy[]): View {
  const key = [own, ...lists].map((c) => `${c.generation}.${c.version}`).join("/");
  const held = views.get(own);
  if (held?.key === key) return held;
  const indexes = lists.map(nameIndex);
  const lookup = (id: string): string | undefined => {
    for (const index of indexes) {
      const name = index.get(id);
      if (name !== undefined) return name;
    }
    return undefined;
  };
  const ownNames = resource.entry.kind === "list" ? nameIndex(own) : null;
  const records = [...own.byId.values()].map((record) => {
    let shown = renamed(record, lookup, true) as Json;
    const full = ownNames?.get(String(record.id));
    if (full !== undefined && "fullName" in shown && full !== shown.fullName)
      shown = { ...shown, fullName: full };
    return shown;
  });
  const view: View = {
    key,
    records: inAnswerOrder(resource, records),
    byId: new Map(records.map((r) => [String(r.id), r])),
  };
  views.set(own, view);
  return view;
}
