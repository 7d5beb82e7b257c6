/**
 * The shape of the derived schema table (request and response messages) (`generated/ledger-schema.json`), written by
 * `scripts/gen-ledger-schema.ts` from the application SDK's XSDs and read by `request-schema.ts`.
 *
 * Content models are strings in a small grammar, so the table stays compact and diffs stay readable:
 *
 * ```
 * model  := "" | item ("," item)*            a sequence
 * item   := term occurs?
 * term   := Name                             a global element (its type is in `elements`)
 *         | Name ":" typeKey                 a local element with its own type
 *         | "&" GroupName                    a named group (its model is in `groups`)
 *         | "(" model ("|" model)* ")"       a nested sequence, or a choice when there is a "|"
 * occurs := "?" | "*" | "+" | "{" min "," max? "}"      (no max: unbounded; default exactly once)
 * ```
 *
 * A type key names an entry of `simple` (leaf text, optionally with attributes) or of `complex`
 * (child elements); the two namespaces never share a key.
 */
export interface LedgerSchemaTable {
  /** Bumped when the layout of this table changes. */
  format: 2;
  /** Where the table came from and how to rebuild it. */
  source: string;
  /** The schema version the models describe. */
  xmlVersion: string;
  /** The older schema version compared against (`newerRequests`, `newerElements`). */
  olderXmlVersion: string;
  /** Every request element allowed in `QBXMLMsgsRq`; each one's type is `complex[name]`. */
  requests: string[];
  /** Every response element allowed in `QBXMLMsgsRs`; each one's type is `complex[name]`. */
  responses: string[];
  /** Request elements of `xmlVersion` that the older schema (13.0) does not have. */
  newerRequests: string[];
  /** Request elements of the older schema (13.0) that `xmlVersion` dropped. */
  droppedRequests: string[];
  /**
   * Per complex type key (or `&group`): the elements written directly in its model that the older
   * schema's same type lacks, so they need `xmlVersion` (spec: Versioning,
   * LEDGER_FIELD_UNSUPPORTED_BY_VERSION).
   */
  newerElements: Record<string, string[]>;
  /**
   * Global elements (referenced by name in models) → type key. A global element that is missing here
   * has the type `complex[name]`.
   */
  elements: Record<string, string>;
  /** Named groups → model. */
  groups: Record<string, string>;
  complex: Record<string, ComplexTypeEntry>;
  simple: Record<string, SimpleTypeEntry>;
  /** Attribute sets → attribute name → simple type key (prefixed with `!` when required). */
  attributes: Record<string, Record<string, string>>;
}

export interface ComplexTypeEntry {
  /** The content model. */
  m: string;
  /** Attribute set key. */
  a?: string;
}

/**
 * A leaf type. `b` is the base kind (the schema's named simple type, lower-cased without `TYPE`:
 * `str`, `id`, `bool`, `date`, `amt`, `enum`, `int`…); the facets narrow it.
 */
export interface SimpleTypeEntry {
  b: string;
  /** maxLength, in characters. */
  max?: number;
  /** The allowed values. */
  e?: string[];
  /** minInclusive / maxInclusive (integers). */
  lo?: number;
  hi?: number;
  /** Attribute set key (leaves that carry attributes, such as `useMacro`). */
  a?: string;
}
