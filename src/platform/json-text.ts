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

/** The text {@link jsonTextOnce} took of `value`, if it did; never serialises. */
export function knownJsonText(value: unknown): string | undefined {
  return typeof value === "object" && value !== null ? texts.get(value) : undefined;
}

/**
 * Records `text` as `value`'s JSON text, for a value assembled from parts already serialised (a
 * mirrored list page is its records' stored texts joined): the reply sends it as it is. The text
 * must be what `JSON.stringify(value)` would give, up to the order of keys.
 */
export function withJsonText<T extends object>(value: T, text: string): T {
  texts.set(value, text);
  return value;
}
