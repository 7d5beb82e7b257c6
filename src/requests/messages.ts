import type { Deps } from "../deps.ts";
import { redactedDocument, redactedJson } from "../ledger/xml/redact.ts";
import { SUPPORTED_XML_VERSIONS } from "../ledger/xml/message-set.ts";
import { findRequestAnswer, type RequestRow } from "../store/requests.ts";
import { handOverXml } from "./engine.ts";

/**
 * `GET /v1/requests/{id}/messages` (issue 18, decision 0028): what a Request was asked (the typed
 * call's JSON input), what it sent to the application and what came back, as XML for people —
 * indented, with secrets masked
 * (ledger/xml/redact.ts). The message is the document the connector was (or will be) handed; the
 * answer is the one kept when it arrived (`REQUEST_ANSWER_KEEP_BYTES`).
 */
export interface MessageView {
  xml: string | null;
  bytes: number | null;
  redactedValues: number;
  note: string | null;
}

export interface RequestMessagesResource {
  objectType: "request_messages";
  requestId: string;
  /** The typed call's JSON input as validated (query, body; a batch's members), secrets masked. */
  input: { json: Record<string, unknown> | null; redactedValues: number };
  message: MessageView;
  answer: MessageView & { receivedAt: string | null };
}

const NEWEST_VERSION = SUPPORTED_XML_VERSIONS[SUPPORTED_XML_VERSIONS.length - 1] as string;

function view(xml: string, note: string | null): MessageView {
  const bytes = Buffer.byteLength(xml, "utf8");
  const document = redactedDocument(xml);
  if (!document)
    return {
      xml: null,
      bytes,
      redactedValues: 0,
      note: "The text is not a well-formed document, so it is not shown.",
    };
  return { xml: document.xml, bytes, redactedValues: document.redactedValues, note };
}

const none = (note: string): MessageView => ({ xml: null, bytes: null, redactedValues: 0, note });

function inputOf(row: RequestRow): RequestMessagesResource["input"] {
  if (row.input === null || typeof row.input !== "object") return { json: null, redactedValues: 0 };
  const { value, redactedValues } = redactedJson(row.input);
  return { json: value as Record<string, unknown>, redactedValues };
}

function messageOf(row: RequestRow): MessageView {
  if (row.request_xml === null)
    return none("No message was built: the Request ended before it could be sent.");
  if (row.xml_version !== null) return view(handOverXml(row, row.xml_version), null);
  return view(
    handOverXml(row, NEWEST_VERSION),
    row.sent_at === null
      ? "Not sent yet: the message version shown is the newest; the connector's session sets it at hand-over."
      : null,
  );
}

async function answerOf(deps: Deps, row: RequestRow): Promise<RequestMessagesResource["answer"]> {
  const kept = await findRequestAnswer(deps.db, row.id);
  if (kept) {
    const receivedAt = kept.received_at.toISOString();
    if (kept.answer_xml === null)
      return {
        ...none(
          `The answer was ${kept.answer_bytes} bytes, more than REQUEST_ANSWER_KEEP_BYTES: only its size is kept.`,
        ),
        bytes: kept.answer_bytes,
        receivedAt,
      };
    return { ...view(kept.answer_xml, null), receivedAt };
  }
  const why = row.recovered
    ? "The outcome was recovered from the application's stored answer to the message set; that answer is not kept."
    : row.sent_at === null
      ? "Not sent to the application."
      : row.completed_at === null
        ? "The application has not answered yet."
        : deps.config.REQUEST_ANSWER_KEEP_BYTES === 0
          ? "Answers are not kept (REQUEST_ANSWER_KEEP_BYTES is 0)."
          : "No answer document: the connector reported a failure instead (see the Request's error).";
  return { ...none(why), receivedAt: null };
}

export async function requestMessages(deps: Deps, row: RequestRow): Promise<RequestMessagesResource> {
  return {
    objectType: "request_messages",
    requestId: row.id,
    input: inputOf(row),
    message: messageOf(row),
    answer: await answerOf(deps, row),
  };
}
