/**
 * The seam between the simulated Web Connector (src/simulator/web-connector.ts) and the simulated
 * accounting application (src/simulator/ledger/). It mirrors what the real connector does through
 * the application's request processor: OpenConnection + BeginSession, ProcessRequest, EndSession.
 * Failures are HRESULTs (hex strings such as `0x80040408`) with the application's message text.
 */

export interface HResultFailure {
  ok: false;
  /** For example `0x80040414`. */
  hresult: string;
  message: string;
}

export interface BeginSessionOptions {
  /** Company file path returned by `authenticate` ([1]); `""` means the file that is open now. */
  companyFilePath: string;
  /** `.qwc` AppName (the integrated application's name). */
  appName: string;
  /** `.qwc` OwnerID (GUID of the integrated application). */
  ownerId: string;
  /** `.qwc` FileID (GUID). */
  fileId: string;
  /**
   * True the first time this connector registration opens a company file: like the real connector,
   * the application then stamps `FileID` as a private data extension (owner = `ownerId`) into the
   * company, so later sessions can tell whether the same file is open.
   */
  stampFileId: boolean;
}

export type BeginSessionResult = { ok: true; session: ApplicationSession } | HResultFailure;

export type ProcessResult = { ok: true; response: string } | HResultFailure;

export interface ApplicationSession {
  /** Full path of the company file this session opened. */
  readonly companyFilePath: string;
  /** Country edition: `US`, `CA` or `UK`. */
  readonly country: string;
  /** Highest message version the application supports, for example `{ major: 16, minor: 0 }`. */
  readonly xmlVersion: { major: number; minor: number };
  /**
   * The HostQuery + CompanyQuery + PreferencesQuery response document the connector sends as
   * `strHCPResponse` on the first `sendRequestXML` of a session (real format: see
   * shared/reference/qbxml-samples/11_hcp_host_company_preferences_rs.xml).
   */
  hostCompanyPreferencesXml(): string;
  /** Processes one request document (ProcessRequest). */
  processRequest(requestXml: string): Promise<ProcessResult>;
  /** Ends the session (EndSession): iterators of this session become invalid. */
  end(): void;
}

export interface SimulatedApplication {
  beginSession(options: BeginSessionOptions): Promise<BeginSessionResult>;
}
