/**
 * The simulated accounting application: several company files by path, one of them open, a
 * switchable fault, and sessions that process request documents against the open file.
 */
import type {
  BeginSessionOptions,
  BeginSessionResult,
  ProcessResult,
  SimulatedApplication,
} from "../application.ts";
import { systemClock } from "../../platform/clock.ts";
import { randomGuid } from "../../platform/random.ts";
import { CompanyFile, type CompanyFileOptions, type LedgerClock } from "./company-file.ts";
import {
  HRESULT_ACCESS_NOT_GRANTED,
  HRESULT_ADMIN_REQUIRED,
  HRESULT_CANNOT_ACCESS,
  HRESULT_INVALID_FILE,
  HRESULT_MODAL_DIALOG,
  HRESULT_MODE_CONFLICT,
  HRESULT_NO_FILE_OPEN,
  HRESULT_NO_FILE_OPEN_RUNNING,
  HRESULT_OTHER_APPLICATION,
  HRESULT_PARSE_ERROR,
  HRESULT_NOT_RUNNING,
  HRESULT_STARTING,
  HRESULT_WRONG_FILE,
  hresultFailure,
  type LedgerFault,
} from "./faults.ts";
import type { HostInfo } from "./hcp.ts";
import { processDocument, processSteps } from "./processor.ts";
import { isNoLatency, NO_LATENCY, paced, type SimulatedLatency } from "../latency.ts";
import { seedSampleCompany } from "./seed.ts";
import { seedDemoCompany } from "./demo-company/demo-company.ts";
import { LedgerSession, type SessionHost } from "./session.ts";
import { STATUS_INSUFFICIENT_PERMISSION, statusNotAvailable, type Status } from "./status.ts";

/** Construction options; every dependency has a real default. */
export interface SimulatedLedgerOptions {
  /** Time source for IDs, EditSequence and timestamps (ms since epoch). */
  clock?: LedgerClock;
  /** Used by the `slow_processing` fault. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * The time the application spends per message set, request and record returned (its latency
   * profile, on its clock); none by default.
   */
  latency?: SimulatedLatency;
  /** Iterator IDs (`{GUID}`). */
  newGuid?: () => string;
  /** Highest message version the application speaks, `13.0` by default. */
  xmlVersion?: SimulatedXmlVersion | LegacyXmlVersion;
  /**
   * Regional edition, `US` by default (reported as `qbXMLCountry` and HostRet `Country`): requests
   * using an element the edition lacks are refused like unknown elements.
   */
  country?: SimulatedCountry;
  /** HostRet ProductName. */
  productName?: string;
}

/** The message versions the simulated application can speak. */
export const SIMULATED_XML_VERSIONS = ["13.0", "14.0", "15.0", "16.0"] as const;
export type SimulatedXmlVersion = (typeof SIMULATED_XML_VERSIONS)[number];

/**
 * Message versions of applications older than the service's floor (13.0): an end user can still run
 * one, and the service must refuse it (LEDGER_VERSION_UNSUPPORTED).
 */
export const LEGACY_XML_VERSIONS = ["12.0"] as const;
export type LegacyXmlVersion = (typeof LEGACY_XML_VERSIONS)[number];

/** The regional editions the simulated application can be (the connector's `qbXMLCountry`). */
export const SIMULATED_COUNTRIES = ["US", "CA", "UK"] as const;
export type SimulatedCountry = (typeof SIMULATED_COUNTRIES)[number];

/** The application's own major version per message version (2018 → 13.0 … 2023 → 16.0). */
const PRODUCT_MAJOR_VERSION: Readonly<Record<SimulatedXmlVersion | LegacyXmlVersion, number>> = {
  "12.0": 22,
  "13.0": 28,
  "14.0": 29,
  "15.0": 31,
  "16.0": 33,
};

/** The request messages of a message set (its `…Rq` elements but the set's own; no child ends so). */
function requestMessages(requestXml: string): number {
  return (requestXml.match(/<[A-Za-z]+Rq[\s/>]/g) ?? []).filter((tag) => !tag.startsWith("<QBXMLMsgsRq"))
    .length;
}

/** An answer grown to at least `bytes` with whitespace inside its message set (the `large_answer` fault). */
function padded(result: ProcessResult, bytes: number): ProcessResult {
  if (!result.ok) return result;
  const missing = bytes - Buffer.byteLength(result.response, "utf8");
  if (missing <= 0) return result;
  const close = result.response.lastIndexOf("</QBXMLMsgsRs>");
  if (close < 0) return result;
  const response = `${result.response.slice(0, close)}${" ".repeat(missing)}${result.response.slice(close)}`;
  return { ok: true, response };
}

/** Requests that change the company file (what a read-only role may not send). */
const WRITE_REQUEST_NAME = /(?:Add|Mod|Del|Void|Merge)Rq$/;

/** The status the current fault refuses a request with, before it runs (3250, 3260). */
function refusal(fault: LedgerFault | null, requestName: string): Status | undefined {
  if (fault?.kind === "feature_off" && fault.objects.some((object) => requestName.startsWith(object)))
    return statusNotAvailable(requestName);
  if (fault?.kind === "restricted_user" && WRITE_REQUEST_NAME.test(requestName))
    return STATUS_INSUFFICIENT_PERMISSION;
  return undefined;
}

/** C0 control characters XML 1.0 does not allow (tab, line feed and carriage return are allowed). */
const CONTROL_CHARACTERS = /(?![\t\n\r\u007F-\u009F])\p{Cc}/gu;

/**
 * The application's XML writer writes a control character of stored text (one typed or pasted
 * into its windows: `CompanyFile.editInWindow`) as a character reference, `&#1;`, which an XML 1.0
 * reader refuses: the answer is well-formed to the connector, which carries it as text, and not to
 * a strict reader of the document.
 */
function withControlReferences(result: ProcessResult): ProcessResult {
  if (!result.ok) return result;
  const response = result.response.replace(CONTROL_CHARACTERS, (c) => `&#${c.charCodeAt(0)};`);
  return response === result.response ? result : { ok: true, response };
}

/** Personal data elements the application leaves out when the application may not see them. */
const PERSONAL_DATA = /<(CreditCardNumber|SSN)>[^<]*<\/\1>|<(?:CreditCardNumber|SSN)\s*\/>/g;

/** The answer without card numbers and social security numbers (personal data access not granted). */
function withoutPersonalData(result: ProcessResult): ProcessResult {
  if (!result.ok) return result;
  return { ok: true, response: result.response.replace(PERSONAL_DATA, "") };
}

/** An answer whose end never arrived: its first `bytes` bytes (the `truncated_answer` fault). */
function truncated(result: ProcessResult, bytes: number): ProcessResult {
  if (!result.ok) return result;
  const cut = Buffer.from(result.response, "utf8").subarray(0, bytes).toString("utf8");
  return { ok: true, response: cut };
}

function samePath(a: string, b: string): boolean {
  // Company file paths are Windows paths: case-insensitive.
  return a.toLowerCase() === b.toLowerCase();
}

/** The simulated application behind the simulated Web Connector. */
export class SimulatedLedgerApplication implements SimulatedApplication, SessionHost {
  private hostInfo: HostInfo;
  private readonly clock: LedgerClock;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly newGuid: () => string;
  private readonly latency: SimulatedLatency;
  private readonly files: CompanyFile[] = [];
  private openPath: string | undefined;
  /** Whether the application runs while no company file is open (else it is closed). */
  private runningWithoutFile = false;
  private fault: LedgerFault | null = null;
  private faultWatchers: Array<() => void> = [];

  constructor(options: SimulatedLedgerOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.sleep = options.sleep ?? ((ms) => systemClock.sleep(ms));
    this.newGuid = options.newGuid ?? randomGuid;
    this.latency = options.latency ?? NO_LATENCY;
    const xmlVersion = options.xmlVersion ?? "13.0";
    const [major, minor] = xmlVersion.split(".").map(Number);
    this.hostInfo = {
      productName: options.productName ?? "Ledger Desktop Simulator",
      majorVersion: PRODUCT_MAJOR_VERSION[xmlVersion],
      country: options.country ?? "US",
      xmlVersion: { major: major ?? 13, minor: minor ?? 0 },
    };
  }

  /** The installed application: product, version, edition and the message versions it speaks. */
  get host(): HostInfo {
    return this.hostInfo;
  }

  /**
   * The administrator lets the integrated application see personal data, or takes that right away:
   * then card numbers and social security numbers are left out of every answer, and the company
   * file report says so.
   */
  setPersonalDataAccess(allowed: boolean): void {
    this.hostInfo = { ...this.hostInfo, personalDataAccessAllowed: allowed };
  }

  /**
   * The end user installs another version of the application (an upgrade, or an older one restored
   * on a new computer); the company files stay.
   */
  installVersion(xmlVersion: SimulatedXmlVersion | LegacyXmlVersion): void {
    const [major, minor] = xmlVersion.split(".").map(Number);
    this.hostInfo = {
      ...this.hostInfo,
      majorVersion: PRODUCT_MAJOR_VERSION[xmlVersion],
      xmlVersion: { major: major ?? 13, minor: minor ?? 0 },
    };
  }

  /** Creates (or replaces) the company file at `path`; the first file created is opened. */
  createCompanyFile(path: string, options: CompanyFileOptions): CompanyFile {
    const file = new CompanyFile(path, options, this.clock);
    if (options.seed === "sample") seedSampleCompany(file, this.host);
    if (options.seed === "demo")
      seedDemoCompany(file, this.host, {
        ...(options.demoSize === undefined ? {} : { size: options.demoSize }),
        ...(options.demoSeed === undefined ? {} : { seed: options.demoSeed }),
      });
    return this.add(file);
  }

  private add(file: CompanyFile): CompanyFile {
    const existing = this.files.findIndex((f) => samePath(f.path, file.path));
    if (existing >= 0) this.files.splice(existing, 1, file);
    else this.files.push(file);
    this.openPath ??= file.path;
    return file;
  }

  /**
   * Adds (or replaces) a company file from `CompanyFile.snapshot` data, as kept by a store between
   * runs; like {@link createCompanyFile}, the first file is opened.
   */
  restoreCompanyFile(data: unknown): CompanyFile {
    return this.add(CompanyFile.restore(data, this.clock));
  }

  /** Makes `path` the open company file. */
  openCompanyFile(path: string): void {
    this.openPath = this.companyFile(path).path;
  }

  /**
   * Closes the open company file (beginSession with `""` then fails): the application closes too
   * (0x80040416), or with `applicationStaysOpen` it keeps running without a file (0x80040417).
   */
  closeCompanyFile(options: { applicationStaysOpen?: boolean } = {}): void {
    this.openPath = undefined;
    this.runningWithoutFile = options.applicationStaysOpen ?? false;
  }

  /**
   * The end user moves or renames the company file at `from` to `to`: asking for the old path then
   * finds no file (0x80040406). Its data, FileID marker included, goes with it.
   */
  moveCompanyFile(from: string, to: string): void {
    const file = this.companyFile(from);
    const wasOpen = this.openPath !== undefined && samePath(this.openPath, from);
    const moved = CompanyFile.restore({ ...(file.snapshot() as object), path: to }, this.clock);
    this.files.splice(this.files.indexOf(file), 1, moved);
    if (wasOpen) this.openPath = moved.path;
  }

  /** The company file at `path`; throws when there is none. */
  companyFile(path: string): CompanyFile {
    const file = this.files.find((f) => samePath(f.path, path));
    if (file === undefined) throw new Error(`no company file at ${path}`);
    return file;
  }

  /** Path of the open company file, if any. */
  get openCompanyFilePath(): string | undefined {
    return this.openPath;
  }

  /** Switches a fault on (or off with `null`); a `not_responding` or `hang_on_open` wait ends when it changes. */
  setFault(fault: LedgerFault | null): void {
    this.fault = fault;
    for (const watcher of this.faultWatchers.splice(0)) watcher();
  }

  async beginSession(options: BeginSessionOptions): Promise<BeginSessionResult> {
    while (this.fault?.kind === "hang_on_open") {
      await new Promise<void>((resolve) => this.faultWatchers.push(resolve));
    }
    return this.begin(options);
  }

  private begin(options: BeginSessionOptions): BeginSessionResult {
    const fault = this.fault;
    if (fault?.kind === "app_not_running") return hresultFailure(HRESULT_NOT_RUNNING);
    if (fault?.kind === "modal_dialog") return hresultFailure(HRESULT_MODAL_DIALOG);
    if (fault?.kind === "file_mode_conflict") return hresultFailure(HRESULT_MODE_CONFLICT);
    if (fault?.kind === "access_not_granted") return hresultFailure(HRESULT_ACCESS_NOT_GRANTED);
    if (fault?.kind === "admin_required") return hresultFailure(HRESULT_ADMIN_REQUIRED);
    if (fault?.kind === "other_application_sharing") return hresultFailure(HRESULT_OTHER_APPLICATION);
    if (fault?.kind === "starting") return hresultFailure(HRESULT_STARTING);
    const requested = options.companyFilePath;
    let path: string;
    if (fault?.kind === "wrong_company_file") {
      if (requested !== "" && !samePath(requested, fault.path)) return hresultFailure(HRESULT_WRONG_FILE);
      path = fault.path;
    } else if (requested === "") {
      if (this.openPath === undefined)
        return hresultFailure(this.runningWithoutFile ? HRESULT_NO_FILE_OPEN_RUNNING : HRESULT_NO_FILE_OPEN);
      path = this.openPath;
    } else {
      path = requested;
    }
    const file = this.files.find((f) => samePath(f.path, path));
    if (file === undefined) return hresultFailure(HRESULT_INVALID_FILE);
    this.openPath = file.path;
    this.runningWithoutFile = false;
    const stamped = file.companyDataExts.some(
      (d) => d.name === "FileID" && samePath(d.ownerId, options.ownerId),
    );
    if (options.stampFileId && !stamped)
      file.companyDataExts.push({ ownerId: options.ownerId, name: "FileID", value: options.fileId });
    return { ok: true, session: new LedgerSession(this, file, options.ownerId) };
  }

  /**
   * Runs a request document for `session`, applying the current fault first, then spending the
   * latency profile's time on each step of the work.
   */
  async process(session: LedgerSession, requestXml: string): Promise<ProcessResult> {
    while (this.fault?.kind === "not_responding") {
      await new Promise<void>((resolve) => this.faultWatchers.push(resolve));
    }
    const fault = this.fault;
    if (fault?.kind === "modal_dialog") return hresultFailure(HRESULT_MODAL_DIALOG);
    if (fault?.kind === "app_not_running") return hresultFailure(HRESULT_CANNOT_ACCESS);
    if (fault?.kind === "slow_processing") await this.sleep(fault.ms);
    if (fault?.kind === "refuse_sets_over" && requestMessages(requestXml) > fault.requests)
      return hresultFailure(HRESULT_PARSE_ERROR);
    const context = {
      file: session.file,
      host: this.host,
      iterators: session.iterators,
      newGuid: this.newGuid,
      refuse: (requestName: string) => refusal(fault, requestName),
    };
    // The requests of a message set run in order, each after the time the ones before it took.
    const result = isNoLatency(this.latency)
      ? processDocument(requestXml, context)
      : await paced(processSteps(requestXml, context), this.latency);
    const shown = this.host.personalDataAccessAllowed === false ? withoutPersonalData(result) : result;
    const written = withControlReferences(shown);
    if (fault?.kind === "truncated_answer") return truncated(written, fault.bytes);
    return fault?.kind === "large_answer" ? padded(written, fault.bytes) : written;
  }
}
