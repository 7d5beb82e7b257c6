/**
 * Keeps simulated company files across restarts. {@link PersistedApplication} wraps the simulated
 * application at the connector seam: whenever a session changes its company file (a write, a saved
 * message set, the FileID stamp), the file's snapshot is saved before the connector sees the answer.
 *
 * This is the order the real application keeps: a write is committed to the company file before its
 * response leaves. A write saved but never answered is found by the service's recovery query (the
 * saved message set is in the snapshot); a write that could not be saved is undone and answered as
 * a failure, so the service never believes in a change the file does not hold.
 */
import type {
  ApplicationSession,
  BeginSessionOptions,
  BeginSessionResult,
  HResultFailure,
  ProcessResult,
  SimulatedApplication,
} from "../application.ts";
import type { SimulatedLedgerApplication } from "./application.ts";
import type { CompanyFile } from "./company-file.ts";
import type { CompanyFileSnapshot } from "./snapshot.ts";

/** Where snapshots are kept (a database row, a JSON file…). */
export interface CompanyFileStore {
  /** Saves the latest snapshot of one company file; resolves once it is durable. */
  save(snapshot: CompanyFileSnapshot): Promise<void>;
}

/** The name of every element whose name ends in `Rq`: the message set's and its requests'. */
const REQUEST_NAMES = /<([A-Za-z]+Rq)[\s/>]/g;

/**
 * Whether a request document holds queries only (`…QueryRq`, reports included) and no error
 * recovery attributes (a saved or cleared message set is a change). Read from the text, and
 * cautious: anything else, or anything it cannot tell, counts as a possible change. That no query
 * changes a company file is pinned by `persisted-application.test.ts`, which runs every query the
 * application's schema has against the demo company and compares the snapshots.
 */
export function onlyQueries(requestXml: string): boolean {
  if (requestXml.includes("MessageSetID")) return false;
  let requests = 0;
  for (const [, name] of requestXml.matchAll(REQUEST_NAMES)) {
    if (name === "QBXMLMsgsRq") continue;
    if (!name?.endsWith("QueryRq")) return false;
    requests += 1;
  }
  return requests > 0;
}

/** HRESULT of a generic failure (E_FAIL), as the application reports an unexpected error. */
const E_FAIL = "0x80004005";

/** The simulated application, saving every change of a company file through a {@link CompanyFileStore}. */
export class PersistedApplication implements SimulatedApplication {
  /** Last saved snapshot of each file, as JSON: the baseline for "changed?" and for undoing. */
  private readonly saved = new Map<string, string>();

  constructor(
    readonly application: SimulatedLedgerApplication,
    private readonly store: CompanyFileStore,
  ) {}

  /** Records that `file` is already stored as it is now (after a restore or an explicit save). */
  markSaved(file: CompanyFile): void {
    this.saved.set(file.path.toLowerCase(), JSON.stringify(file.snapshot()));
  }

  /** Saves `file` if it changed since it was last saved. */
  async save(file: CompanyFile): Promise<void> {
    const snapshot = file.snapshot();
    const text = JSON.stringify(snapshot);
    const key = file.path.toLowerCase();
    if (this.saved.get(key) === text) return;
    await this.store.save(snapshot);
    this.saved.set(key, text);
  }

  async beginSession(options: BeginSessionOptions): Promise<BeginSessionResult> {
    const result = await this.application.beginSession(options);
    if (!result.ok) return result;
    const file = this.application.companyFile(result.session.companyFilePath);
    const failure = await this.saveOrUndo(file);
    if (failure) {
      result.session.end();
      return failure;
    }
    return { ok: true, session: this.wrap(result.session, file) };
  }

  private wrap(inner: ApplicationSession, file: CompanyFile): ApplicationSession {
    return {
      companyFilePath: inner.companyFilePath,
      country: inner.country,
      xmlVersion: inner.xmlVersion,
      hostCompanyPreferencesXml: () => inner.hostCompanyPreferencesXml(),
      processRequest: async (requestXml: string): Promise<ProcessResult> => {
        const result = await inner.processRequest(requestXml);
        // A set of queries changes nothing: the file is not compared (a whole snapshot as JSON,
        // ~15 ms for the small demo company, ~0.5 s for the large one) on every read.
        if (onlyQueries(requestXml)) return result;
        return (await this.saveOrUndo(file)) ?? result;
      },
      end: () => inner.end(),
    };
  }

  /** Saves; when saving fails, puts the file back as last saved and returns the failure to report. */
  private async saveOrUndo(file: CompanyFile): Promise<HResultFailure | null> {
    try {
      await this.save(file);
      return null;
    } catch (error) {
      const last = this.saved.get(file.path.toLowerCase());
      if (last !== undefined) file.revertTo(JSON.parse(last));
      const why = error instanceof Error ? error.message : String(error);
      return {
        ok: false,
        hresult: E_FAIL,
        message: `The company file could not be saved (${why}); nothing was changed.`,
      };
    }
  }
}
