/**
 * Which stored objects a reference element may name. The reference's element name says it: the
 * longest CamelCase suffix of `<…>Ref` that is an object type or one of the few kinds that stand for
 * several types (`Item`, `Entity`, `Terms`…). `ARAccountRef` → Account, `PayeeEntityRef` → Customer,
 * Vendor, Employee, OtherName; `ParentRef` → the owner's own type.
 */
import { refTargetAmong, type RefTarget } from "../../ledger/resources/ref-targets.ts";
import { objectTypes } from "./objects.ts";

export type { RefTarget };

const cache = new Map<string, RefTarget>();

/** The objects a reference element of `owner` may name. */
export function refTarget(refElement: string, owner: string): RefTarget {
  const key = `${owner}/${refElement}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const target = refTargetAmong(refElement, owner, [...objectTypes().keys()]);
  cache.set(key, target);
  return target;
}
