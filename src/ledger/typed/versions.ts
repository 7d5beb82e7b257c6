import type { Shape } from "../resources/shape.ts";

/**
 * Spec "Versioning": fields that depend on the connected application's message-format version are
 * rejected with LEDGER_FIELD_UNSUPPORTED_BY_VERSION. The schema table marks each element the older
 * version lacks (`Slot.newer`); this finds the first such field a body uses, as a JSON path.
 */
export function newerFieldPath(shape: Shape, body: unknown, prefix = ""): string | null {
  if (typeof body !== "object" || body === null) return null;
  const value = body as Record<string, unknown>;
  for (const field of shape.fields) {
    const given = value[field.json];
    if (given === undefined) continue;
    const path = prefix === "" ? field.json : `${prefix}.${field.json}`;
    if (field.slot.newer) return path;
    if (field.form !== "object" || !field.shape) continue;
    const items = field.array && Array.isArray(given) ? given : [given];
    for (let index = 0; index < items.length; index++) {
      const found = newerFieldPath(field.shape, items[index], field.array ? `${path}[${index}]` : path);
      if (found) return found;
    }
  }
  return null;
}
