import type { XmlElement } from "./tree.ts";

/** The elements that name an existing record: a list object's or a transaction's ID. */
const RECORD_IDS: ReadonlySet<string> = new Set(["ListID", "TxnID"]);

/**
 * The IDs of the existing records request messages write to: the `ListID` / `TxnID` of each
 * Mod message's object (`<CustomerModRq><CustomerMod><ListID>`) and of each Del or Void message
 * (`<TxnDelRq><TxnID>`), in document order without repeats. References to other records
 * (`<CustomerRef><ListID>`) are not targets, nor are queries and creates. Read from the message
 * tree the caller built or the passthrough parsed: nothing is parsed again.
 *
 * The engine spaces consecutive writes to one record by more than a second, since the application
 * changes a record's revision number at most once a second (spec: common record fields).
 */
export function writeTargetsOf(messages: readonly XmlElement[]): string[] {
  const targets = new Set<string>();
  for (const message of messages) {
    if (!message.name.endsWith("Rq") || message.name.endsWith("QueryRq")) continue;
    for (const id of directIds(message)) targets.add(id);
    for (const object of message.children) {
      if (object.name.endsWith("Mod")) for (const id of directIds(object)) targets.add(id);
    }
  }
  return [...targets];
}

function directIds(element: XmlElement): string[] {
  return element.children.filter((c) => RECORD_IDS.has(c.name) && c.text !== "").map((c) => c.text);
}
