import type { ResponseStatus, ResponseSummary } from "./message-set.ts";
import { repairMarkup } from "./markup-repair.ts";
import { parseDocument } from "./parse.ts";
import { attr, child, renderDocument, type XmlElement } from "./tree.ts";

/**
 * An answer of the application, read once (issue 14): one streaming parse gives the element tree
 * the typed decoders read and the statuses the engine books. The engine reads each answer with
 * {@link readAnswer} and hands the result to the operation's decoder; nothing parses it again.
 */
export interface ParsedAnswer {
  /** The answer as the application wrote it (the passthrough returns it verbatim). */
  readonly xml: string;
  /** `<QBXML>`. */
  readonly root: XmlElement;
  readonly summary: ResponseSummary;
  /**
   * Characters XML forbids that were replaced before the answer could be read (ledger/xml/
   * markup-repair.ts); absent when the answer was well-formed as written.
   */
  readonly repaired?: number;
}

/**
 * Reads an answer document: null when it is not a well-formed response (`<QBXML><QBXMLMsgsRs>`).
 * The summary lists the status of every `*Rs` message in order, and the message set's status code
 * (600 answers a recovery query for which nothing is stored).
 */
export function readAnswer(xml: string): ParsedAnswer | null {
  const read = readWellFormed(xml);
  if (read) return read;
  // Only a refused answer is looked at again: a well-formed one costs nothing more.
  const repair = repairMarkup(xml);
  if (repair.repaired === 0) return null;
  const repaired = readWellFormed(repair.xml);
  return repaired ? { ...repaired, repaired: repair.repaired } : null;
}

function readWellFormed(xml: string): ParsedAnswer | null {
  const document = parseDocument(xml);
  if (!document || document.root.name !== "QBXML") return null;
  const msgs = child(document.root, "QBXMLMsgsRs");
  if (!msgs) return null;
  const statuses: ResponseStatus[] = msgs.children.map((message) => ({
    name: message.name,
    requestId: attr(message, "requestID") ?? null,
    statusCode: Number(attr(message, "statusCode") ?? "0"),
    statusSeverity: attr(message, "statusSeverity") ?? "Info",
    statusMessage: attr(message, "statusMessage") ?? "",
  }));
  const setCode = attr(msgs, "messageSetStatusCode");
  return {
    xml,
    root: document.root,
    summary: { statuses, messageSetStatusCode: setCode === undefined ? null : Number(setCode) },
  };
}

/**
 * The answer of each Request of a message set that carried several (decision 0036): member `i`'s
 * view holds the response message at place `i` alone (none when the application stopped before it),
 * with the set's status code, so that its operation reads it exactly as it would read the answer to
 * a message set of its own. Its `xml` is that view written out (kept for its messages view).
 */
export function memberAnswers(answer: ParsedAnswer, count: number): ParsedAnswer[] {
  const msgs = child(answer.root, "QBXMLMsgsRs");
  const messages = msgs?.children ?? [];
  return Array.from({ length: count }, (_, i) => {
    const message = messages[i];
    const status = answer.summary.statuses[i];
    const root: XmlElement = {
      ...answer.root,
      children: answer.root.children.map((element) =>
        element === msgs ? { ...element, children: message ? [message] : [] } : element,
      ),
    };
    return {
      xml: renderDocument(root),
      root,
      summary: {
        statuses: status ? [status] : [],
        messageSetStatusCode: answer.summary.messageSetStatusCode,
      },
      ...(answer.repaired === undefined ? {} : { repaired: answer.repaired }),
    };
  });
}
