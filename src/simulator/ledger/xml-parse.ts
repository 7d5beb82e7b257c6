/** Moved: the document parser is shared with the service (`src/ledger/xml/parse.ts`). */
export * from "../../ledger/xml/parse.ts";
