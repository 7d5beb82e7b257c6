/**
 * Replay of a support bundle (issue 28 item 2, decision 0049): a {@link SimulatedApplication} that
 * answers the request documents a service sends with the answers a bundle recorded, in order, and
 * plays the recorded faults — an HRESULT instead of an answer (the application refused or was
 * closed), an answer that never reached the service (the connector lost it). A document that is not
 * the next one the bundle holds is answered by the normal simulated application and reported as a
 * divergence.
 *
 * Documents are compared as the bundle shows them: the messages inside the message set, secrets
 * masked (ledger/xml/redact.ts), without the message set's IDs and the members' `requestID`s (the
 * service picks new ones). The at-most-once recovery query (`oldMessageSetID`) is answered from the
 * answers this replay gave, as the application answers it from the ones it stored.
 */
import type {
  ApplicationSession,
  BeginSessionOptions,
  BeginSessionResult,
  ProcessResult,
  SimulatedApplication,
} from "./application.ts";
import { z } from "zod";
import { parseDocument } from "../ledger/xml/parse.ts";
import { maskSecretsInText } from "../ledger/xml/redact.ts";
import { attr, node, renderDocument, renderElementText, type XmlElement } from "../ledger/xml/tree.ts";

/** What the replay reads of a support bundle (`bundleVersion: 1`, support/bundle.ts). */
export interface BundleDocument {
  bundleVersion: number;
  endUser: { id: string };
  connection?: {
    companyFile?: { xmlVersion?: string | null; country?: string | null };
    statusChanges?: Array<{ status: string; statusReason: string | null; changedAt: string }>;
  } | null;
  webhookDeliveries?: Array<{ eventId: string; eventType: string; requestId: string | null }>;
  requests: Array<{
    request: {
      id: string;
      createdAt: string;
      operationId: string;
      method: string;
      path: string;
      mode: string;
      status: string;
      outcome: string;
      sentAt: string | null;
      completedAt: string | null;
      recovered: boolean;
      timeline: Array<{ status: string; detail: string | null; elapsedMs: number }>;
      error: { code: string; integrationCode?: string | null; message?: string } | null;
      waitingReason: string | null;
      timings: { ledgerMs: number | null };
    };
    messages: {
      input: { json: Record<string, unknown> | null };
      message: { xml: string | null };
      answer: { xml: string | null };
    };
    sessionId?: string | null;
    /** The service's own Request (change feed, mirror); absent in bundles made before it was recorded. */
    background?: boolean;
    /** Absent in bundles made before it was recorded (support/waiting-history.ts). */
    waitingReasons?: string[];
  }>;
}

const nullableString = z.string().nullable();
/** What {@link BundleDocument} requires, checked before a replay reads a file (other keys pass). */
const bundleDocumentSchema = z.looseObject({
  bundleVersion: z.literal(1),
  endUser: z.looseObject({ id: z.string() }),
  connection: z
    .looseObject({
      statusChanges: z
        .array(z.looseObject({ status: z.string(), statusReason: nullableString, changedAt: z.string() }))
        .optional(),
    })
    .nullish(),
  webhookDeliveries: z
    .array(z.looseObject({ eventId: z.string(), eventType: z.string(), requestId: nullableString }))
    .optional(),
  requests: z.array(
    z.looseObject({
      request: z.looseObject({
        id: z.string(),
        createdAt: z.string(),
        operationId: z.string(),
        method: z.string(),
        path: z.string(),
        mode: z.string(),
        status: z.string(),
        outcome: z.string(),
        sentAt: nullableString,
        completedAt: nullableString,
        recovered: z.boolean(),
        timeline: z.array(
          z.looseObject({ status: z.string(), detail: nullableString, elapsedMs: z.number() }),
        ),
        error: z.looseObject({ code: z.string() }).nullable(),
        waitingReason: nullableString,
        timings: z.looseObject({ ledgerMs: z.number().nullable() }),
      }),
      messages: z.looseObject({
        input: z.looseObject({ json: z.record(z.string(), z.unknown()).nullable() }),
        message: z.looseObject({ xml: nullableString }),
        answer: z.looseObject({ xml: nullableString }),
      }),
      background: z.boolean().optional(),
      waitingReasons: z.array(z.string()).optional(),
    }),
  ),
});

/**
 * A support bundle's text as the replay reads it; what is not one (not JSON, another
 * `bundleVersion`, a field missing or of another type) is an error naming the first place.
 */
export function readBundle(text: string): BundleDocument {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(
      `not a support bundle: not JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const checked = bundleDocumentSchema.safeParse(parsed);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "the document";
    throw new Error(
      `not a support bundle this replay reads (bundleVersion 1): ${where}: ${issue?.message ?? "invalid"}`,
    );
  }
  return parsed as BundleDocument;
}

/** How the recorded exchange of one Request ended at the application. */
export type RecordedFate =
  /** The application answered this document (the bundle holds it). */
  | { kind: "answer"; answerXml: string }
  /** The application failed the document with this HRESULT. */
  | { kind: "hresult"; hresult: string; message: string }
  /** The application processed it; the answer never reached the service (outcome_unknown). */
  | { kind: "answer_lost"; answerXml: string | null };

export interface ReplayEntry {
  requestId: string;
  /** The messages of the document, compared (see {@link comparable}). */
  expected: string;
  fate: RecordedFate;
  /** The application's recorded time on it (completedAt − sentAt), for `timing: "recorded"`. */
  ledgerMs: number | null;
}

export interface Divergence {
  /** Which document of the replay it was (0-based, recovery queries not counted). */
  index: number;
  /** What the service sent (masked, as compared). */
  sent: string;
  /** What the bundle holds next (null: the bundle holds nothing more). */
  expected: string | null;
  expectedRequestId: string | null;
}

const HRESULT = /^0x[0-9a-f]{8}$/i;

/** The messages of a request document as compared: masked, without set IDs and `requestID`s. */
export function comparable(xml: string): string | null {
  const parsed = parseDocument(maskSecretsInText(xml));
  const msgs = parsed?.root.children[0];
  if (!parsed || msgs?.name !== "QBXMLMsgsRq") return null;
  const strip = (element: XmlElement): XmlElement => ({
    ...element,
    attrs: element.attrs.filter(([name]) => name !== "requestID"),
    children: element.children.map(strip),
  });
  const onError = attr(msgs, "onError") ?? "";
  return `${onError}|${msgs.children.map((c) => renderElementText(strip(c))).join("")}`;
}

/** The bundle's sent Requests as replay entries, in the order they were handed over. */
export function replayEntries(bundle: BundleDocument): ReplayEntry[] {
  // The service's own Requests (change feed, mirror) are not made again, so not expected either.
  const sent = bundle.requests.filter(
    (r) => r.background !== true && r.request.sentAt !== null && r.messages.message.xml !== null,
  );
  sent.sort((a, b) => (a.request.sentAt ?? "").localeCompare(b.request.sentAt ?? ""));
  const entries: ReplayEntry[] = [];
  for (const { request, messages } of sent) {
    const expected = comparable(messages.message.xml ?? "");
    if (expected === null) continue;
    const answerXml = messages.answer.xml;
    const lost = request.timeline.some((e) => e.status === "outcome_unknown");
    const hresult = request.error?.integrationCode ?? "";
    const fate: RecordedFate = lost
      ? { kind: "answer_lost", answerXml }
      : answerXml !== null
        ? { kind: "answer", answerXml }
        : HRESULT.test(hresult)
          ? { kind: "hresult", hresult, message: request.error?.message ?? "" }
          : { kind: "answer_lost", answerXml: null };
    entries.push({ requestId: request.id, expected, fate, ledgerMs: request.timings.ledgerMs });
  }
  return entries;
}

export interface ReplayOptions {
  /** The normal simulated application: opens the company file, answers what the bundle lacks. */
  fallback: SimulatedApplication;
  entries: readonly ReplayEntry[];
  /**
   * Called when a recorded answer is to be lost: the connector's fault for it is set here
   * (`lose_answer_after_write` for a write, `send_again_without_answer` for a read), before the
   * answer would leave.
   */
  loseAnswer: (write: boolean) => void;
  /** Waits the recorded application time (none by default). */
  sleep?: (ms: number) => Promise<void>;
  /** Told of each divergence as it happens (the standalone simulator prints it). */
  onDivergence?: (divergence: Divergence) => void;
}

/** Answers as the bundle did; what it holds no answer for goes to the fallback, noted. */
export class ReplayApplication implements SimulatedApplication {
  private next = 0;
  private documents = 0;
  /** The Rs elements this replay answered, by the message set ID the service gave them. */
  private readonly answered = new Map<string, readonly XmlElement[]>();
  readonly divergences: Divergence[] = [];
  /** Bundle Requests answered, in order. */
  readonly played: string[] = [];

  constructor(private readonly options: ReplayOptions) {}

  private readonly skipped: string[] = [];

  /** Bundle Requests whose document the service never sent (passed over, or after the end). */
  get unplayed(): string[] {
    return [...this.skipped, ...this.options.entries.slice(this.next).map((e) => e.requestId)];
  }

  async beginSession(options: BeginSessionOptions): Promise<BeginSessionResult> {
    const opened = await this.options.fallback.beginSession(options);
    if (!opened.ok) return opened;
    const session = opened.session;
    const replay: ApplicationSession = {
      companyFilePath: session.companyFilePath,
      country: session.country,
      xmlVersion: session.xmlVersion,
      hostCompanyPreferencesXml: () => session.hostCompanyPreferencesXml(),
      processRequest: (xml) => this.process(xml, session),
      end: () => session.end(),
    };
    return { ok: true, session: replay };
  }

  private async process(xml: string, session: ApplicationSession): Promise<ProcessResult> {
    const parsed = parseDocument(xml);
    const msgs = parsed?.root.children[0];
    const setId = msgs ? attr(msgs, "newMessageSetID") : undefined;
    const oldSetId = msgs ? attr(msgs, "oldMessageSetID") : undefined;
    if (msgs && oldSetId !== undefined && msgs.children.length === 0) {
      // The recovery query: the answer this replay gave that set, as the application keeps it.
      const stored = this.answered.get(oldSetId);
      if (stored !== undefined)
        return {
          ok: true,
          response: renderDocument(
            node("QBXML", [
              node("QBXMLMsgsRs", stored, [
                ["newMessageSetID", oldSetId],
                ["messageSetStatusCode", "0"],
              ]),
            ]),
          ),
        };
      return session.processRequest(xml);
    }
    const index = this.documents++;
    const sent = comparable(xml);
    const entries = this.options.entries;
    // The next entry, or a later one when the service never sent those in between (they stay
    // unplayed); anything else is not in the bundle.
    let at = this.next;
    while (sent !== null && at < entries.length && entries[at]?.expected !== sent) at += 1;
    const entry = sent === null ? undefined : entries[at];
    if (entry === undefined || msgs === undefined) {
      const expected = entries[this.next];
      const divergence: Divergence = {
        index,
        sent: sent ?? maskSecretsInText(xml),
        expected: expected?.expected ?? null,
        expectedRequestId: expected?.requestId ?? null,
      };
      this.divergences.push(divergence);
      this.options.onDivergence?.(divergence);
      return session.processRequest(xml);
    }
    this.skipped.push(...entries.slice(this.next, at).map((e) => e.requestId));
    this.next = at + 1;
    this.played.push(entry.requestId);
    if (entry.ledgerMs !== null && this.options.sleep) await this.options.sleep(entry.ledgerMs);
    const fate = entry.fate;
    if (fate.kind === "hresult") return { ok: false, hresult: fate.hresult, message: fate.message };
    const answer = fate.answerXml === null ? null : this.answerFor(fate.answerXml, msgs, setId);
    if (fate.kind === "answer_lost") {
      // The application did its work: what it answered is what a recovery query gets back. A
      // bundle keeps no answer that never arrived (a recovered write's outcome came from the
      // recovery): then the simulated application does the work, and keeps its answer itself.
      const done = answer ?? (await session.processRequest(xml));
      this.options.loseAnswer(/(Add|Mod|Del|Void)Rq$/.test(msgs.children[0]?.name ?? ""));
      return done;
    }
    return answer ?? session.processRequest(xml);
  }

  /**
   * The recorded answer re-addressed to this document: its responses with the members'
   * `requestID`s of now, under the message set ID of now (kept for the recovery query).
   */
  private answerFor(answerXml: string, msgs: XmlElement, setId: string | undefined): ProcessResult | null {
    const recorded = parseDocument(answerXml)?.root.children[0];
    if (recorded?.name !== "QBXMLMsgsRs") return null;
    const responses = recorded.children.map((rs, i) => {
      const requestId = msgs.children[i] ? attr(msgs.children[i], "requestID") : undefined;
      const attrs = rs.attrs.filter(([name]) => name !== "requestID");
      return {
        ...rs,
        attrs: requestId === undefined ? attrs : [["requestID", requestId] as const, ...attrs],
      };
    });
    if (setId !== undefined) this.answered.set(setId, responses);
    const setAttrs = recorded.attrs.filter(([name]) => name !== "newMessageSetID");
    return {
      ok: true,
      response: renderDocument(
        node("QBXML", [
          node(
            "QBXMLMsgsRs",
            responses,
            setId === undefined ? setAttrs : [["newMessageSetID", setId], ...setAttrs],
          ),
        ]),
      ),
    };
  }
}
