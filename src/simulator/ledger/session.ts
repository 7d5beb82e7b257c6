/**
 * One BeginSession…EndSession of the simulated application. Holds the session's iterators; faults
 * and delays are applied by the application, which owns the fault state.
 */
import type { ApplicationSession, ProcessResult } from "../application.ts";
import type { CompanyFile } from "./company-file.ts";
import { hostCompanyPreferencesDocument, type HostInfo } from "./hcp.ts";
import type { IteratorStore } from "./query-ops.ts";

/** What a session asks of its application. */
export interface SessionHost {
  readonly host: HostInfo;
  process(session: LedgerSession, requestXml: string): Promise<ProcessResult>;
}

/** A session on one company file. */
export class LedgerSession implements ApplicationSession {
  /** Iterators started in this session; cleared by {@link end}. */
  readonly iterators: IteratorStore = new Map();
  readonly country: string;
  readonly xmlVersion: { major: number; minor: number };

  constructor(
    private readonly owner: SessionHost,
    readonly file: CompanyFile,
    private readonly ownerId: string,
  ) {
    this.country = owner.host.country;
    this.xmlVersion = { ...owner.host.xmlVersion };
  }

  get companyFilePath(): string {
    return this.file.path;
  }

  hostCompanyPreferencesXml(): string {
    return hostCompanyPreferencesDocument(this.owner.host, this.file, this.ownerId);
  }

  processRequest(requestXml: string): Promise<ProcessResult> {
    return this.owner.process(this, requestXml);
  }

  end(): void {
    this.iterators.clear();
  }
}
