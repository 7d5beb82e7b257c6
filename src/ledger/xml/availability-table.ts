/**
 * The shape of the derived availability table (`generated/ledger-availability.json`), written by
 * `scripts/gen-ledger-availability.ts` from the SDK's sample files and XSDs and read by
 * `availability.ts`: for each request element, in the context where it sits, the first message
 * version that has it and the regional editions that lack it (decision 0016).
 *
 * An availability is a short string, so the table stays compact and its diffs readable:
 *
 * ```
 * availability := version? (" -" country)*      e.g. "6.0", "14.0", "6.0 -US", "-CA -UK", ""
 * version      := major "." minor                the first message version with the element
 * country      := "US" | "CA" | "UK" | "AU"      a regional edition that lacks the element
 * ```
 *
 * No version means the element is as old as the message format the samples describe (1.0); no
 * country means every edition has it, or that nothing is known of the editions.
 */
export interface LedgerAvailabilityTable {
  /** Bumped when the layout of this table changes. */
  format: 1;
  /** Where the table came from and how to rebuild it. */
  source: string;
  /**
   * The first version given to elements only the newest schema has: the samples end at 14.0 and
   * the XSDs skip 14.0 and 15.0, so their true first version is 15.0 or 16.0 (decision 0016).
   */
  unknownFirstVersion: string;
  /** The regional editions the table speaks of, as the connector's `qbXMLCountry` names them. */
  countries: string[];
  /**
   * Context → element → availability. The context is the type key or `&group` whose model writes
   * the element directly (`Slot.owner`), or `QBXMLMsgsRq` for the request messages themselves.
   */
  elements: Record<string, Record<string, string>>;
  /**
   * `"<RequestName> <context>"` → element → availability: where one request's element differs from
   * the same context's in other requests (a shared line type that one transaction lacks).
   */
  overrides: Record<string, Record<string, string>>;
}
