/**
 * A simulated Web Connector: a real HTTP SOAP client that checks in with the bridge the way the
 * desktop connector does (guide ledger-protocol.md §1.2–1.3, §6 "Simulator"), driving a
 * {@link SimulatedApplication} in place of the accounting application.
 *
 * One check-in (session) runs through these states:
 *
 *   versions   serverVersion → clientVersion        E:/O: reply → stop (version_rejected)
 *   auth       authenticate                         nvu / none / busy → stop; [2]/[3] kept for the schedule
 *   opening    beginSession                         failure → connectionError: "done" → stop,
 *                                                   "" → retry the open file, text → retry that path,
 *                                                   at most `connectionRetriesMax` retries
 *   exchange   sendRequestXML                       "" → getLastError: NoOp → pause, resend;
 *                                                   "Interactive mode" → interactive; other → closeConnection
 *              processRequest → receiveResponseXML  0–99 → exchange; 100 → closeConnection;
 *                                                   negative → getLastError → closeConnection
 *   ended      the application session is always ended, whatever happened.
 *
 * The scheduler runs sessions every RunEveryNSeconds/Minutes of the `.qwc` (no interval: manual
 * check-ins only), honouring authenticate's postpone ([2]) and minimum run-every ([3]) seconds.
 */
import type { ProcessResult, SimulatedApplication, ApplicationSession } from "./application.ts";
import { NO_LATENCY, soapLegsMs, spend, type SimulatedLatency } from "./latency.ts";
import { parseQwc, type QwcDocument } from "./qwc.ts";
import {
  SOAP_CONTENT_TYPE,
  parseSoapResponse,
  soapAction,
  soapRequest,
  type SoapCall,
  type SoapResult,
} from "../connector/soap.ts";

/** Connector-level faults a test can inject. */
export type ConnectorFault =
  /** No check-ins at all: sessions end before contacting the server. */
  | { kind: "offline" }
  /**
   * The next request document containing an Add/Mod/Del request is processed by the application,
   * then its answer is lost as if the network broke; the fault then clears itself.
   */
  | { kind: "lose_answer_after_write" }
  /**
   * The connector crashes after receiving the next write document and before handing it to the
   * application: nothing is applied, and the session ends silently; the fault then clears itself.
   */
  | { kind: "crash_before_write" }
  /**
   * Like `crash_before_write`, for the next request document that `match`es (a write, a read, or
   * any): the connector stops after receiving it, before the application sees it, and its session
   * ends silently; the fault then clears itself.
   */
  | { kind: "crash_on_hand_over"; match?: "write" | "read" }
  /**
   * The next request document (a write, a read, or any) is processed by the application, then the
   * connector asks for the next one with sendRequestXML instead of sending the answer, in the same
   * session (a client that lost its answer and carried on); the fault then clears itself.
   */
  | { kind: "send_again_without_answer"; match?: "write" | "read" }
  | null;

/** How a session ended. */
export type SessionOutcome =
  | "offline"
  | "version_rejected"
  | "invalid_user"
  | "no_work"
  | "busy"
  | "connection_failed"
  | "completed"
  | "closed_with_error"
  | "interactive"
  | "answer_lost"
  | "transport_error"
  | "failed"
  | "aborted";

/** Summary of one check-in. */
export interface SessionReport {
  outcome: SessionOutcome;
  /** Status text the real connector would show (closeConnection result, error text, …). */
  message: string;
  /** Request documents the application processed in this session. */
  requestsProcessed: number;
  /** authenticate [2], when the service sent a positive number. */
  postponeSeconds?: number;
  /** authenticate [3], when the service sent a positive number. */
  minimumRunEverySeconds?: number;
}

/** What the connector did, in order, for tests to assert on. */
export type ConnectorEvent =
  | { type: "call"; call: SoapCall; result: SoapResult }
  | { type: "call_failed"; call: SoapCall; error: string }
  | { type: "request_processed"; requestXml: string; result: ProcessResult }
  | { type: "answer_dropped"; requestXml: string }
  | { type: "session_ended"; report: SessionReport };

/** Sleeps `ms` milliseconds or until `signal` aborts, whichever is first; never rejects. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** Configuration, as an end user gives it: the `.qwc` file, the password and the application. */
export interface SimulatedWebConnectorOptions {
  /** Text of the `.qwc` file. */
  qwc: string;
  /** Password the user typed into the connector for the `.qwc` UserName. */
  password: string;
  application: SimulatedApplication;
  /** Pause after getLastError returned "NoOp", in ms (PG p.72: 5 seconds). */
  noOpPauseMs?: number;
  /** Retries after the first failed open before giving up (PG p.51: "a couple of times"). */
  connectionRetriesMax?: number;
  /** Deadline for one HTTP exchange, in ms (the .NET client's default is 100 s). */
  requestTimeoutMs?: number;
  /** Version sent in clientVersion. */
  clientVersion?: string;
  /** Whether the simulated user accepts interactive mode. */
  interactive?: "accept" | "reject";
  /** interactiveDone polls before giving up on interactive mode. */
  interactivePollsMax?: number;
  /** Restores the registry flag "FileID already stamped into a company file". */
  fileIdStamped?: boolean;
  sleep?: Sleep;
  /**
   * The network between this computer and the service: each SOAP call's round trip (the latency
   * profile's `soapCallMs`, on its clock), half before the call reaches the service and half after
   * its answer left it. None by default.
   */
  latency?: SimulatedLatency;
  fetch?: typeof fetch;
  /** Called for every event, after it is recorded. */
  onEvent?: (event: ConnectorEvent) => void;
}

/** The text the connector sends as strHCPResponse to point-of-sale services (PG p.22). */
export const POINT_OF_SALE_HCP_TEXT = "HOSTQUERY/COMPANYQUERY/PREFQUERY is currently not supported in QBPOS.";

const DEFAULT_CLIENT_VERSION = "2.3.0.215";
const EVENTS_MAX = 10_000;
const WRITE_REQUEST = /<[A-Za-z]*(?:Add|Mod|Del)Rq[\s>/]/;

/** Default {@link Sleep}: a timer cleared on abort; infinite waits end only on abort. */
export const abortableSleep: Sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const finish = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      resolve();
    };
    // Timers overflow above 2^31-1 ms and fire at once, so longer waits are left to the signal.
    const timer =
      Number.isFinite(ms) && ms <= 2_147_483_647 ? setTimeout(finish, Math.max(0, ms)) : undefined;
    signal.addEventListener("abort", finish, { once: true });
  });

class TransportError extends Error {
  override name = "TransportError";
}

class SessionAborted extends Error {
  override name = "SessionAborted";
}

function matches(kind: "write" | "read" | undefined, requestXml: string): boolean {
  if (kind === undefined) return true;
  return WRITE_REQUEST.test(requestXml) === (kind === "write");
}

function positiveSeconds(text: string | undefined): number | undefined {
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return undefined;
  const value = Number(text);
  return value > 0 ? value : undefined;
}

/** Simulates the desktop connector for one `.qwc` registration. */
export class SimulatedWebConnector {
  /** The parsed registration. */
  readonly registration: QwcDocument;
  private readonly options: SimulatedWebConnectorOptions;
  private readonly sleep: Sleep;
  private readonly fetchImpl: typeof fetch;
  private readonly latency: SimulatedLatency;
  private readonly recorded: ConnectorEvent[] = [];
  private fault: ConnectorFault = null;
  private fileIdStamped: boolean;
  private controller = new AbortController();
  private wake = new AbortController();
  private current: Promise<SessionReport> | undefined;
  private inFlight: SoapCall["method"] | null = null;

  /** The SOAP call waiting for the service's answer, if any. */
  get callInFlight(): SoapCall["method"] | null {
    return this.inFlight;
  }
  private loop: Promise<void> | undefined;
  private lastReport: SessionReport | undefined;
  private minimumRunEverySeconds: number | undefined;
  private sessionCount = 0;

  constructor(options: SimulatedWebConnectorOptions) {
    this.options = options;
    this.registration = parseQwc(options.qwc);
    this.sleep = options.sleep ?? abortableSleep;
    this.fetchImpl = options.fetch ?? fetch;
    this.latency = options.latency ?? NO_LATENCY;
    this.fileIdStamped = options.fileIdStamped ?? false;
  }

  /** Everything recorded so far (capped at the most recent 10 000 events). */
  get events(): readonly ConnectorEvent[] {
    return this.recorded;
  }

  /** The SOAP calls made so far, with their results (or errors), in order. */
  get calls(): readonly Extract<ConnectorEvent, { type: "call" | "call_failed" }>[] {
    return this.recorded.filter(
      (event): event is Extract<ConnectorEvent, { type: "call" | "call_failed" }> =>
        event.type === "call" || event.type === "call_failed",
    );
  }

  /** Whether the connector has stamped its FileID into a company file (kept like the registry). */
  get hasStampedFileId(): boolean {
    return this.fileIdStamped;
  }

  /** The interval between scheduled check-ins in seconds, after authenticate's lower bound. */
  get intervalSeconds(): number | undefined {
    const base = this.registration.scheduler?.intervalSeconds;
    if (base === undefined) return undefined;
    return Math.max(base, this.minimumRunEverySeconds ?? 0);
  }

  /** Injects a fault, or clears it with `null`. */
  setFault(fault: ConnectorFault): void {
    this.fault = fault;
  }

  /** Forgets recorded events. */
  clearEvents(): void {
    this.recorded.length = 0;
  }

  /**
   * Performs one check-in. A call while a session is running joins that session, like the real
   * connector's update lock.
   */
  runSession(): Promise<SessionReport> {
    if (this.current !== undefined) return this.current;
    const run = this.session(this.controller.signal).then((report) => {
      this.lastReport = report;
      this.record({ type: "session_ended", report });
      return report;
    });
    this.current = run.finally(() => {
      this.current = undefined;
    });
    return this.current;
  }

  /** "Update Selected": checks in now and restarts the schedule's timer from this session. */
  checkInNow(): Promise<SessionReport> {
    const report = this.runSession();
    const restartTimer = (): void => this.wake.abort();
    void report.then(restartTimer, restartTimer);
    return report;
  }

  /** Starts the scheduler; the first check-in happens at once. */
  start(): void {
    if (this.loop !== undefined) return;
    if (this.controller.signal.aborted) this.controller = new AbortController();
    const signal = this.controller.signal;
    this.loop = this.schedule(signal);
  }

  /** Stops the scheduler and aborts any session in flight (HTTP exchange or NoOp pause included). */
  async stop(): Promise<void> {
    this.controller.abort();
    const loop = this.loop;
    const current = this.current;
    this.loop = undefined;
    await Promise.allSettled([loop, current]);
    this.controller = new AbortController();
  }

  private async schedule(signal: AbortSignal): Promise<void> {
    let runNow = true;
    while (!signal.aborted) {
      if (runNow) await this.runSession();
      if (signal.aborted) return;
      if (this.wake.signal.aborted) this.wake = new AbortController();
      const wake = this.wake.signal;
      const delayMs = this.nextDelayMs();
      await this.sleep(delayMs, AbortSignal.any([signal, wake]));
      // Woken by checkInNow: that session already ran, so only the timer restarts.
      runNow = !wake.aborted;
    }
  }

  /**
   * Delay before the next scheduled check-in. PG pp.62–63, examples 1–6: a postpone ([2]) sets the
   * next run to last run + postpone; a minimum run-every ([3]) sets it to last run + that value and
   * raises the interval if it was lower; otherwise the interval applies.
   */
  private nextDelayMs(): number {
    const report = this.lastReport;
    const seconds = report?.postponeSeconds ?? report?.minimumRunEverySeconds ?? this.intervalSeconds;
    return seconds === undefined ? Number.POSITIVE_INFINITY : seconds * 1000;
  }

  private record(event: ConnectorEvent): void {
    this.recorded.push(event);
    if (this.recorded.length > EVENTS_MAX) this.recorded.shift();
    try {
      this.options.onEvent?.(event);
    } catch {
      // A failing observer must not change how the simulated connector behaves.
    }
  }

  private async session(signal: AbortSignal): Promise<SessionReport> {
    const report: SessionReport = { outcome: "completed", message: "", requestsProcessed: 0 };
    if (this.fault?.kind === "offline") return { ...report, outcome: "offline", message: "offline" };
    let appSession: ApplicationSession | undefined;
    try {
      await this.callText({ method: "serverVersion" }, signal);
      const version = this.options.clientVersion ?? DEFAULT_CLIENT_VERSION;
      const versionReply = await this.callText({ method: "clientVersion", strVersion: version }, signal);
      // PG p.21: only E: and O: stop the update; W: is a warning the user may dismiss.
      if (versionReply.startsWith("E:") || versionReply.startsWith("O:")) {
        return { ...report, outcome: "version_rejected", message: versionReply };
      }
      const auth = await this.callStrings(
        {
          method: "authenticate",
          strUserName: this.registration.userName,
          strPassword: this.options.password,
        },
        signal,
      );
      const ticket = auth[0] ?? "";
      const status = auth[1] ?? "";
      const postponeSeconds = positiveSeconds(auth[2]);
      const minimumRunEverySeconds = positiveSeconds(auth[3]);
      if (postponeSeconds !== undefined) report.postponeSeconds = postponeSeconds;
      if (minimumRunEverySeconds !== undefined) {
        report.minimumRunEverySeconds = minimumRunEverySeconds;
        this.minimumRunEverySeconds = Math.max(this.minimumRunEverySeconds ?? 0, minimumRunEverySeconds);
      }
      switch (status.toLowerCase()) {
        case "nvu":
          return { ...report, outcome: "invalid_user", message: "Invalid password for username" };
        case "none":
          return { ...report, outcome: "no_work", message: "No data exchange required" };
        case "busy":
          return { ...report, outcome: "busy", message: "Application busy" };
      }
      const opened = await this.open(ticket, status, signal);
      if (typeof opened === "string") return { ...report, outcome: "connection_failed", message: opened };
      appSession = opened;
      return await this.exchange(ticket, appSession, report, signal);
    } catch (err) {
      if (signal.aborted) return { ...report, outcome: "aborted", message: "stopped" };
      if (err instanceof TransportError)
        return { ...report, outcome: "transport_error", message: err.message };
      // An exception from the application is reported, never thrown, so the scheduler keeps running.
      return { ...report, outcome: "failed", message: err instanceof Error ? err.message : String(err) };
    } finally {
      appSession?.end();
    }
  }

  /** Opens the company file, going through connectionError; returns the session or a failure text. */
  private async open(
    ticket: string,
    status: string,
    signal: AbortSignal,
  ): Promise<ApplicationSession | string> {
    const retriesMax = this.options.connectionRetriesMax ?? 2;
    let companyFilePath = status;
    for (let attempt = 0; ; attempt += 1) {
      const result = await this.options.application
        .beginSession({
          companyFilePath,
          appName: this.registration.appName,
          ownerId: this.registration.ownerId,
          fileId: this.registration.fileId,
          stampFileId: !this.fileIdStamped,
        })
        .catch((err: unknown) => ({
          ok: false as const,
          hresult: "0x80004005",
          message: err instanceof Error ? err.message : String(err),
        }));
      if (result.ok) {
        this.fileIdStamped = true;
        return result.session;
      }
      const reply = await this.callText(
        { method: "connectionError", ticket, hresult: result.hresult, message: result.message },
        signal,
      );
      if (reply.toLowerCase() === "done" || attempt >= retriesMax)
        return `${result.hresult}: ${result.message}`;
      // "" means the file that is open now; any other text is the path to try instead (PG p.69).
      companyFilePath = reply;
    }
  }

  private async exchange(
    ticket: string,
    session: ApplicationSession,
    report: SessionReport,
    signal: AbortSignal,
  ): Promise<SessionReport> {
    let first = true;
    for (;;) {
      const hcp = !first
        ? ""
        : this.registration.qbType.toUpperCase() === "QBPOS"
          ? POINT_OF_SALE_HCP_TEXT
          : session.hostCompanyPreferencesXml();
      first = false;
      const requestXml = await this.callText(
        {
          method: "sendRequestXML",
          ticket,
          strHCPResponse: hcp,
          strCompanyFileName: session.companyFilePath,
          qbXMLCountry: session.country,
          qbXMLMajorVers: String(session.xmlVersion.major),
          qbXMLMinorVers: String(session.xmlVersion.minor),
        },
        signal,
      );
      if (requestXml === "") {
        const lastError = await this.callText({ method: "getLastError", ticket }, signal);
        if (lastError.toLowerCase() === "noop") {
          await this.pause(this.options.noOpPauseMs ?? 5000, signal);
          continue;
        }
        if (lastError.toLowerCase() === "interactive mode") {
          const message = await this.interactive(ticket, signal);
          return { ...report, outcome: "interactive", message };
        }
        await this.callText({ method: "closeConnection", ticket }, signal);
        return { ...report, outcome: "closed_with_error", message: lastError };
      }
      if (
        (this.fault?.kind === "crash_before_write" && WRITE_REQUEST.test(requestXml)) ||
        (this.fault?.kind === "crash_on_hand_over" && matches(this.fault.match, requestXml))
      ) {
        this.fault = null;
        this.record({ type: "answer_dropped", requestXml });
        return { ...report, outcome: "answer_lost", message: "The Web Connector stopped unexpectedly." };
      }
      const result = await session.processRequest(requestXml).catch((err: unknown): ProcessResult => ({
        ok: false,
        hresult: "0x80004005",
        message: err instanceof Error ? err.message : String(err),
      }));
      report.requestsProcessed += 1;
      this.record({ type: "request_processed", requestXml, result });
      if (this.fault?.kind === "lose_answer_after_write" && WRITE_REQUEST.test(requestXml)) {
        this.fault = null;
        this.record({ type: "answer_dropped", requestXml });
        return { ...report, outcome: "answer_lost", message: "The connection was closed unexpectedly." };
      }
      if (this.fault?.kind === "send_again_without_answer" && matches(this.fault.match, requestXml)) {
        this.fault = null;
        this.record({ type: "answer_dropped", requestXml });
        continue;
      }
      const percent = await this.callInt(
        result.ok
          ? { method: "receiveResponseXML", ticket, response: result.response, hresult: "", message: "" }
          : {
              method: "receiveResponseXML",
              ticket,
              response: "",
              hresult: result.hresult,
              message: result.message,
            },
        signal,
      );
      if (percent < 0) {
        const lastError = await this.callText({ method: "getLastError", ticket }, signal);
        await this.callText({ method: "closeConnection", ticket }, signal);
        return { ...report, outcome: "closed_with_error", message: lastError };
      }
      if (percent >= 100) {
        const message = await this.callText({ method: "closeConnection", ticket }, signal);
        return { ...report, outcome: "completed", message };
      }
    }
  }

  /** Minimal interactive mode (PG pp.23–24, 71–76): no browser, the simulated user just waits. */
  private async interactive(ticket: string, signal: AbortSignal): Promise<string> {
    if (this.options.interactive === "reject") {
      const message = await this.callText(
        { method: "interactiveRejected", wcTicket: ticket, reason: "The user declined interactive mode." },
        signal,
      );
      await this.callText({ method: "closeConnection", ticket }, signal);
      return message;
    }
    this.sessionCount += 1;
    await this.callText(
      { method: "getInteractiveURL", wcTicket: ticket, sessionID: `session-${this.sessionCount}` },
      signal,
    );
    let message = "";
    const pollsMax = this.options.interactivePollsMax ?? 3;
    for (let poll = 0; poll < pollsMax; poll += 1) {
      message = await this.callText({ method: "interactiveDone", wcTicket: ticket }, signal);
      if (message === "" || message.toLowerCase() === "done") break;
      await this.pause(this.options.noOpPauseMs ?? 5000, signal);
    }
    await this.callText({ method: "closeConnection", ticket }, signal);
    return message;
  }

  private async pause(ms: number, signal: AbortSignal): Promise<void> {
    await this.sleep(ms, signal);
    if (signal.aborted) throw new SessionAborted("stopped");
  }

  private async callText(call: SoapCall, signal: AbortSignal): Promise<string> {
    const result = await this.call(call, signal);
    if (typeof result !== "string") throw new TransportError(`${call.method} returned a non-string result`);
    return result;
  }

  private async callStrings(call: SoapCall, signal: AbortSignal): Promise<string[]> {
    const result = await this.call(call, signal);
    if (!Array.isArray(result)) throw new TransportError(`${call.method} returned a non-array result`);
    return result;
  }

  private async callInt(call: SoapCall, signal: AbortSignal): Promise<number> {
    const result = await this.call(call, signal);
    if (typeof result !== "number") throw new TransportError(`${call.method} returned a non-int result`);
    return result;
  }

  /**
   * One HTTP exchange. Like the .NET client, a 500 carrying a SOAP Fault is read as a fault; any
   * failure ends the session (the real connector reports errors 1041–1045 and stops). The calls of
   * a session are sequential, each one's network time spent around it (`latency`).
   */
  private async call(call: SoapCall, signal: AbortSignal): Promise<SoapResult> {
    if (signal.aborted) throw new SessionAborted("stopped");
    const timeoutMs = this.options.requestTimeoutMs ?? 100_000;
    const legs = soapLegsMs(this.latency.profile);
    this.inFlight = call.method;
    try {
      // The call travels to the service…
      await spend(this.latency, legs.out, signal);
      if (signal.aborted) throw new SessionAborted("stopped");
      const response = await this.fetchImpl(this.registration.appUrl, {
        method: "POST",
        headers: { "Content-Type": SOAP_CONTENT_TYPE, SOAPAction: soapAction(call.method) },
        body: soapRequest(call),
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      });
      const text = await response.text();
      // …and its answer travels back before the connector can use it.
      await spend(this.latency, legs.back, signal);
      if (signal.aborted) throw new SessionAborted("stopped");
      if (response.status !== 200 && response.status !== 500) {
        throw new TransportError(`${call.method} failed: HTTP ${response.status}`);
      }
      const result = parseSoapResponse(call.method, text);
      this.record({ type: "call", call, result });
      return result;
    } catch (err) {
      if (signal.aborted) throw new SessionAborted("stopped");
      const message = err instanceof Error ? err.message : String(err);
      this.record({ type: "call_failed", call, error: message });
      throw err instanceof TransportError ? err : new TransportError(`${call.method} failed: ${message}`);
    } finally {
      this.inFlight = null;
    }
  }
}
