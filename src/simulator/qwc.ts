/**
 * Reads the `.qwc` file an end user opens to register an application with the connector
 * (guide ledger-protocol.md §1.5, PG pp.33–39, Table 4-1). The simulated connector is configured
 * only from this document plus the password the user types, exactly like the real one.
 */
import { XmlReadError, readXml } from "../ledger/xml/parse.ts";
import type { XmlElement } from "../ledger/xml/tree.ts";

/** Default update interval from the `<Scheduler>` aggregate. */
export interface QwcSchedule {
  /** Which element supplied the interval; the first of the two in the file wins (PG p.38). */
  unit: "minutes" | "seconds";
  /** The number as written in the file. */
  value: number;
  /** The interval in seconds. */
  intervalSeconds: number;
}

/** A parsed `.qwc` document. Text values are trimmed; optional tags absent from the file are absent here. */
export interface QwcDocument {
  /** Name shown by the connector and passed to the application when opening a connection. */
  appName: string;
  /** Passed to the application when opening a connection; required but may be empty. */
  appId: string;
  /** The SOAP endpoint. */
  appUrl: string;
  appDescription: string;
  appSupport: string;
  /** Sent as `strUserName` in `authenticate`; the password is never in the file. */
  userName: string;
  /** GUID of the integrated application, owner of the `FileID` data extension. */
  ownerId: string;
  /** GUID the connector stamps into the company file the first time it opens it. */
  fileId: string;
  /** `QBFS` (financial software) or `QBPOS` (point of sale); other values are kept as written. */
  qbType: string;
  appDisplayName?: string;
  appUniqueName?: string;
  certUrl?: string;
  /** Raw `AuthFlags` text, for example `0xF`. */
  authFlags?: string;
  isReadOnly?: boolean;
  /** `pdpNotNeeded`, `pdpOptional` or `pdpRequired`. */
  personalDataPref?: string;
  /** `umpRequired` or `umpOptional`. */
  unattendedModePref?: string;
  notify?: boolean;
  /** `Document` (default), `DocWrapped` or `RPC`. */
  style?: string;
  scheduler?: QwcSchedule;
}

/** Thrown when a `.qwc` document is not well-formed or lacks a required tag. */
export class QwcParseError extends Error {
  override name = "QwcParseError";
}

/** An element's name without its namespace prefix. */
function localName(element: XmlElement): string {
  return element.name.slice(element.name.indexOf(":") + 1);
}

function parseSchedule(scheduler: XmlElement): QwcSchedule | undefined {
  // Order matters: the first of RunEveryNMinutes/RunEveryNSeconds wins.
  for (const element of scheduler.children) {
    const tag = localName(element);
    if (tag !== "RunEveryNMinutes" && tag !== "RunEveryNSeconds") continue;
    const text = element.text;
    if (!/^\d+$/.test(text) || Number(text) <= 0) {
      throw new QwcParseError(`<${tag}> must be a positive whole number, got "${text}"`);
    }
    const number = Number(text);
    return tag === "RunEveryNMinutes"
      ? { unit: "minutes", value: number, intervalSeconds: number * 60 }
      : { unit: "seconds", value: number, intervalSeconds: number };
  }
  return undefined;
}

const REQUIRED = [
  "AppName",
  "AppID",
  "AppURL",
  "AppDescription",
  "AppSupport",
  "UserName",
  "OwnerID",
  "FileID",
  "QBType",
];

/** Parses a `.qwc` document. Tag order does not matter except inside `<Scheduler>`. */
export function parseQwc(text: string): QwcDocument {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  let root: XmlElement;
  try {
    root = readXml(source, { keepMixedText: true }).root;
  } catch (error) {
    if (error instanceof XmlReadError) throw new QwcParseError(`not well-formed XML: ${error.message}`);
    throw error;
  }
  if (localName(root) !== "QBWCXML") throw new QwcParseError("the root element must be <QBWCXML>");
  const fields = new Map<string, string>();
  let scheduler: QwcSchedule | undefined;
  for (const element of root.children) {
    const tag = localName(element);
    if (tag === "Scheduler") scheduler ??= parseSchedule(element);
    else if (!fields.has(tag)) fields.set(tag, element.text);
  }
  const missing = REQUIRED.filter((tag) => !fields.has(tag));
  if (missing.length > 0) throw new QwcParseError(`missing required tag(s): ${missing.join(", ")}`);
  const field = (tag: string): string => fields.get(tag) ?? "";
  const document: QwcDocument = {
    appName: field("AppName"),
    appId: field("AppID"),
    appUrl: field("AppURL"),
    appDescription: field("AppDescription"),
    appSupport: field("AppSupport"),
    userName: field("UserName"),
    ownerId: field("OwnerID"),
    fileId: field("FileID"),
    qbType: field("QBType"),
  };
  const optional = (tag: string): string | undefined => fields.get(tag);
  const appDisplayName = optional("AppDisplayName");
  if (appDisplayName !== undefined) document.appDisplayName = appDisplayName;
  const appUniqueName = optional("AppUniqueName");
  if (appUniqueName !== undefined) document.appUniqueName = appUniqueName;
  const certUrl = optional("CertURL");
  if (certUrl !== undefined) document.certUrl = certUrl;
  const authFlags = optional("AuthFlags");
  if (authFlags !== undefined) document.authFlags = authFlags;
  const isReadOnly = optional("IsReadOnly");
  if (isReadOnly !== undefined) document.isReadOnly = isReadOnly.toLowerCase() === "true";
  const personalDataPref = optional("PersonalDataPref");
  if (personalDataPref !== undefined) document.personalDataPref = personalDataPref;
  const unattendedModePref = optional("UnattendedModePref");
  if (unattendedModePref !== undefined) document.unattendedModePref = unattendedModePref;
  // PG p.36: "Value of true will enable notification … Anything else will disable notification."
  const notify = optional("Notify");
  if (notify !== undefined) document.notify = notify.toLowerCase() === "true";
  const style = optional("Style");
  if (style !== undefined) document.style = style;
  if (scheduler !== undefined) document.scheduler = scheduler;
  return document;
}

/** The name the connector keys a registration by: `AppUniqueName` if given, else `AppName` (PG p.35). */
export function registrationKey(document: QwcDocument): string {
  return document.appUniqueName ?? document.appName;
}
