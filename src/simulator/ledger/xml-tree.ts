/** Moved: the element tree is shared with the service (`src/ledger/xml/tree.ts`). */
export * from "../../ledger/xml/tree.ts";
