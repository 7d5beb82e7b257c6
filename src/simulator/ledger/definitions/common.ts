/**
 * Building blocks shared by record definitions: reference and address models, the list and
 * transaction query models, address blocks, and a factory that fills in definition defaults.
 */
import Big from "big.js";
import { choice, many, opt, req, some, type Model, type Particle } from "../content-model.ts";
import type { FileView, LedgerRecord, RecordDefinition } from "../records.ts";
import { leaf, node, type XmlElement } from "../xml-tree.ts";

/** `<XRef><ListID/>?<FullName/>?</XRef>`. */
export const REF: Model = [opt("ListID"), opt("FullName")];

/** AddressData group. */
export const ADDRESS: Model = [
  opt("Addr1"),
  opt("Addr2"),
  opt("Addr3"),
  opt("Addr4"),
  opt("Addr5"),
  opt("City"),
  opt("State"),
  opt("PostalCode"),
  opt("Country"),
  opt("Note"),
];

const NAME_FILTER: Model = [req("MatchCriterion"), req("Name")];
const NAME_RANGE_FILTER: Model = [opt("FromName"), opt("ToName")];

/** Query model of list objects (ListID list | FullName list | filters), plus type filters. */
export function listQueryModel(extraFilters: readonly Particle[]): Model {
  return [
    choice(
      0,
      1,
      [some("ListID")],
      [some("FullName")],
      [
        opt("MaxReturned", "int"),
        opt("ActiveStatus"),
        opt("FromModifiedDate", "datetime"),
        opt("ToModifiedDate", "datetime"),
        choice(0, 1, [req("NameFilter", NAME_FILTER)], [req("NameRangeFilter", NAME_RANGE_FILTER)]),
        ...extraFilters,
      ],
    ),
    many("IncludeRetElement"),
    many("OwnerID"),
  ];
}

const ENTITY_FILTER: Model = [
  choice(
    1,
    1,
    [some("ListID")],
    [some("FullName")],
    [some("ListIDWithChildren")],
    [some("FullNameWithChildren")],
  ),
];

/** Query model of transactions (TxnID list | RefNumber list | TxnFilter), plus type filters. */
export function txnQueryModel(extraFilters: readonly Particle[]): Model {
  return [
    choice(
      0,
      1,
      [some("TxnID")],
      [some("RefNumber")],
      [some("RefNumberCaseSensitive")],
      [
        opt("MaxReturned", "int"),
        choice(
          0,
          1,
          [
            req("ModifiedDateRangeFilter", [
              opt("FromModifiedDate", "datetime"),
              opt("ToModifiedDate", "datetime"),
            ]),
          ],
          [
            req("TxnDateRangeFilter", [
              choice(1, 1, [opt("FromTxnDate", "date"), opt("ToTxnDate", "date")], [req("DateMacro")]),
            ]),
          ],
        ),
        opt("EntityFilter", ENTITY_FILTER),
        opt("AccountFilter", "any"),
        choice(
          0,
          1,
          [req("RefNumberFilter", [req("MatchCriterion"), req("RefNumber")])],
          [req("RefNumberRangeFilter", [opt("FromRefNumber"), opt("ToRefNumber")])],
        ),
        opt("CurrencyFilter", "any"),
        ...extraFilters,
      ],
    ),
    opt("IncludeLineItems", "bool"),
    opt("IncludeLinkedTxns", "bool"),
    many("IncludeRetElement"),
    many("OwnerID"),
  ];
}

/** Text of the first field named `name`. */
export function fieldText(fields: readonly XmlElement[], name: string): string | undefined {
  return fields.find((f) => f.name === name)?.text;
}

/** ListID stored in reference field `name`. */
export function refId(fields: readonly XmlElement[], name: string): string | undefined {
  return fields.find((f) => f.name === name)?.children.find((c) => c.name === "ListID")?.text;
}

/** An amount with two decimals. */
export function money(value: Big): string {
  return value.toFixed(2);
}

/** Sum of `amount(record)` over `records`. */
export function sum<T>(items: readonly T[], amount: (item: T) => Big): Big {
  return items.reduce((total, item) => total.plus(amount(item)), new Big(0));
}

/**
 * The `…AddressBlock` the application prints under an address: street lines, then
 * "City, State PostalCode", then Country.
 */
export function addressBlock(addressField: string, blockName: string) {
  return (record: LedgerRecord): XmlElement[] => {
    const address = record.fields.find((f) => f.name === addressField);
    if (address === undefined) return [];
    const get = (name: string): string | undefined => address.children.find((c) => c.name === name)?.text;
    const lines: string[] = [];
    for (const name of ["Addr1", "Addr2", "Addr3", "Addr4", "Addr5"]) {
      const value = get(name);
      if (value !== undefined && value !== "") lines.push(value);
    }
    const cityLine = [
      [get("City"), get("State")].filter((v) => v !== undefined && v !== "").join(", "),
      get("PostalCode"),
    ]
      .filter((v) => v !== undefined && v !== "")
      .join(" ");
    if (cityLine !== "") lines.push(cityLine);
    const country = get("Country");
    if (country !== undefined && country !== "") lines.push(country);
    return [
      node(
        blockName,
        lines.slice(0, 5).map((text, i) => leaf(`Addr${i + 1}`, text)),
      ),
    ];
  };
}

type DefinitionInput = Pick<RecordDefinition, "object" | "kind" | "retOrder"> &
  Partial<Omit<RecordDefinition, "object" | "kind" | "retOrder">>;

/** Fills in the optional parts of a definition. */
export function defineRecord(input: DefinitionInput): RecordDefinition {
  return {
    refKind: input.object,
    delType: input.object,
    hierarchical: false,
    addModel: undefined,
    modModel: undefined,
    queryModel: undefined,
    refs: {},
    amounts: [],
    unsupported: [],
    lines: undefined,
    defaults: (_file: FileView, _fields: readonly XmlElement[]) => [],
    computed: {},
    matchesFilters: () => true,
    ...input,
  };
}
