/**
 * Helpers for the ledger simulator tests: an application on a settable clock, a session, and a
 * `send` that wraps request bodies in a message set and parses the response.
 */
import assert from "node:assert/strict";
import type { ApplicationSession, BeginSessionOptions, SimulatedApplication } from "../application.ts";
import { SimulatedLedgerApplication, type SimulatedLedgerOptions } from "./application.ts";
import { parseDocument } from "../../ledger/xml/parse.ts";
import { attr, type XmlElement } from "../../ledger/xml/tree.ts";

/** 2026-01-15T12:00:00Z = 07:00:00 at -05:00. */
export const START_MS = Date.UTC(2026, 0, 15, 12, 0, 0);

/** A clock tests can move. */
export interface TestClock {
  now(): number;
  advance(seconds: number): void;
}

/** A settable clock starting at {@link START_MS}. */
export function testClock(): TestClock {
  let current = START_MS;
  return { now: () => current, advance: (seconds) => void (current += seconds * 1000) };
}

/** The company file path used by the tests. */
export const PATH = "C:\\Company\\sample.company";

let guidCounter = 0;

/** An application with a sample company open and a fresh session on it. */
export async function setup(options: SimulatedLedgerOptions & { seed?: "sample" | "empty" } = {}) {
  const clock = testClock();
  const app = new SimulatedLedgerApplication({
    clock,
    newGuid: () => `{00000000-0000-0000-0000-${String(++guidCounter).padStart(12, "0")}}`,
    ...options,
  });
  app.createCompanyFile(PATH, { companyName: "Sample Co", seed: options.seed ?? "sample" });
  const session = await begin(app);
  return { app, clock, session, file: app.companyFile(PATH) };
}

/** A connector's session options with a GUID owner and a FileID to stamp (beginSession's own tests). */
export const BEGIN_OPTIONS: BeginSessionOptions = {
  companyFilePath: "",
  appName: "Bridge",
  ownerId: "{6B29FC40-CA47-1067-B31D-00DD010662DA}",
  fileId: "{FILE-1}",
  stampFileId: true,
};

/** Begins a session on the open file or fails the test. */
export async function begin(app: SimulatedApplication, path = ""): Promise<ApplicationSession> {
  const result = await app.beginSession({
    companyFilePath: path,
    appName: "Bridge",
    ownerId: "{OWNER}",
    fileId: "{FILE}",
    stampFileId: true,
  });
  if (!result.ok) assert.fail(`beginSession failed: ${result.hresult} ${result.message}`);
  return result.session;
}

/** A complete request document around `body`. */
export function requestXml(body: string, msgsAttrs = 'onError="stopOnError"', version = "13.0"): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n<?qbxml version="${version}"?>\n<QBXML>\n<QBXMLMsgsRq ${msgsAttrs}>\n${body}\n</QBXMLMsgsRq>\n</QBXML>`;
}

/** A parsed response. */
export interface Response {
  readonly raw: string;
  readonly msgs: XmlElement;
  readonly rs: readonly XmlElement[];
}

/** Sends `body` and returns the parsed response (fails the test on an HRESULT). */
export async function send(session: ApplicationSession, body: string, msgsAttrs?: string): Promise<Response> {
  const result = await session.processRequest(requestXml(body, msgsAttrs));
  if (!result.ok) assert.fail(`unexpected HRESULT ${result.hresult}: ${result.message}`);
  const doc = parseDocument(result.response);
  assert.ok(doc !== undefined, `response is not well-formed:\n${result.response}`);
  const msgs = doc.root.children[0];
  assert.ok(msgs !== undefined && msgs.name === "QBXMLMsgsRs", result.response);
  return { raw: result.response, msgs, rs: msgs.children };
}

/** The status attributes of an Rs element. */
export function statusOf(rs: XmlElement | undefined): { code: string; severity: string; message: string } {
  assert.ok(rs !== undefined, "missing Rs");
  return {
    code: attr(rs, "statusCode") ?? "",
    severity: attr(rs, "statusSeverity") ?? "",
    message: attr(rs, "statusMessage") ?? "",
  };
}

/** Child element names, in order. */
export function names(element: XmlElement | undefined): string[] {
  return element?.children.map((c) => c.name) ?? [];
}
