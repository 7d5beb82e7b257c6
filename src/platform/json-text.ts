/**
 * JSON text of a value that is both stored and sent (decision 0035): a settled Request's result is
 * written into its row and, for a sync caller, is the response body. Serialised once here, the
 * store's statement and the HTTP reply take the same text instead of each calling
 * `JSON.stringify` on hundreds of kilobytes (a list page). A value must not change once its text
 * is taken: results never do after their Request settled.
 */
const texts = new WeakMap<object, string>();

/** The value's JSON text, serialised on the first call for that object and kept with it. */
export function jsonTextOnce(value: object): string {
  let text = texts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    texts.set(value, text);
  }
  return text;
}

/** JSON bodies already encoded as UTF-8 (a mirrored page assembled from its records' bytes). */
const bodies = new WeakMap<object, Buffer>();

/**
 * Records `bytes` as `value`'s JSON body in UTF-8, for a value assembled from parts already
 * serialised (a mirrored list page is its records' stored bytes concatenated): the reply sends it as
 * it is, with no string to join or encode. The bytes must be what `JSON.stringify(value)` would
 * give, up to the order of keys.
 */
export function withJsonBytes<T extends object>(value: T, bytes: Buffer): T {
  bodies.set(value, bytes);
  return value;
}

/**
 * The body to send for `value` when it is serialised already (never serialises): its UTF-8 bytes,
 * or the text {@link jsonTextOnce} took of it.
 */
export function knownJsonBody(value: unknown): Buffer | string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  return bodies.get(value) ?? texts.get(value);
}
