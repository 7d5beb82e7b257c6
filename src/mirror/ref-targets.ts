import { refTargetAmong, storedObjectNames } from "../ledger/resources/ref-targets.ts";

export { storedObjectNames };

const cache = new Map<string, readonly string[]>();

/** The object types reference element `refElement` of an `owner` record may name (none when unknown). */
export function refTargetObjects(refElement: string, owner: string): readonly string[] {
  const key = `${owner}/${refElement}`;
  let objects = cache.get(key);
  if (objects === undefined) {
    objects = refTargetAmong(refElement, owner, storedObjectNames()).objects;
    cache.set(key, objects);
  }
  return objects;
}
