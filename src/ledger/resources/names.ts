import { readFileSync } from "node:fs";
import type { Slot } from "../xml/slots.ts";

/**
 * How XML element names become JSON names (house style §2.3, "Names follow one documented rule").
 *
 * 1. The spec's shared fields have fixed names: `TxnID`/`ListID`/`TxnLineID` → `id`, `TimeCreated` →
 *    `createdAt`, `TimeModified` → `updatedAt`, `EditSequence` → `revisionNumber`, `TxnNumber` →
 *    `transactionNumber`, `ExternalGUID` → `externalId`, `DataExtRet` → `customFields`.
 * 2. Otherwise the element name is split into words (`ARAccountRef` → AR, Account, Ref), a trailing
 *    `Ref`/`Ret`/`Add`/`Mod` is dropped, abbreviations are spelled out (`Txn` → transaction, `Addr` →
 *    address, `Msg` → message, `Rep` → representative) and the words are joined in camelCase; an
 *    element that repeats gets a plural name.
 * 3. A reference is `{id, fullName}` on output under that name and `<name>Id` (`<singular>Ids` when it
 *    repeats) on input.
 * 4. Where the market already publishes another name for the same element, that name wins: the
 *    generated table (`generated/names.json`, from `scripts/import-market-names.ts`) holds those names
 *    globally per element, with per-type exceptions, plus the object types of nested records and the
 *    enumeration values that differ from rule 5. `OVERRIDES` below holds our own reviewed choices.
 * 5. Enumeration values are snake_case words (`AccountsPayable` → `accounts_payable`), except where
 *    the market publishes the same element's enumeration: then its spelling (`CustomerMsg` →
 *    `customer_message`), from the generated table or `OVERRIDES`. Enumeration values are named
 *    per element, so the same XML value may be spelled differently in two elements, as the market
 *    does (`ShipMethod` is `ship_method` among deleted list types, `shipping_method` in reports).
 */

export interface NameTable {
  /** Element → output name, wherever the element appears (unless `byType` says otherwise). */
  global: Record<string, string>;
  /** Type key → element → the output name in that type (inputs add `Id` to references). */
  byType: Record<string, Record<string, string>>;
  /** Type key of a nested record → its `objectType`. */
  objectTypes: Record<string, string>;
  /** Element → XML value → JSON value, where rule 5 gives another value. */
  enumValues: Record<string, Record<string, string>>;
}

const FIXED: Readonly<Record<string, string>> = {
  TxnID: "id",
  ListID: "id",
  TxnLineID: "id",
  TimeCreated: "createdAt",
  TimeModified: "updatedAt",
  EditSequence: "revisionNumber",
  TxnNumber: "transactionNumber",
  ExternalGUID: "externalId",
  DataExtRet: "customFields",
};

/** Abbreviations rule 2 spells out (also used to match the market's enumeration values). */
export const EXPANSIONS: Readonly<Record<string, string>> = {
  txn: "transaction",
  addr: "address",
  msg: "message",
  rep: "representative",
  qty: "quantity",
  num: "number",
};

/** Splits an element name into words: `ARAccountRef` → [AR, Account, Ref]; `Addr1` → [Addr, 1]. */
export function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z0-9])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .replace(/([0-9])([A-Za-z])/g, "$1 $2")
    .split(/[\s_]+/)
    .filter(Boolean);
}

function camel(words: readonly string[]): string {
  return words
    .map((word, index) => {
      const lower = word.toLowerCase();
      const expanded = EXPANSIONS[lower] ?? lower;
      return index === 0 ? expanded : expanded.charAt(0).toUpperCase() + expanded.slice(1);
    })
    .join("");
}

/** English plural of a camelCase name's last word. */
export function plural(name: string): string {
  if (/s$/.test(name)) return name;
  if (/[^aeiou]y$/.test(name)) return name.replace(/y$/, "ies");
  if (/(x|ch|sh)$/.test(name)) return `${name}es`;
  return `${name}s`;
}

/** English singular of a camelCase name's last word. */
export function singular(name: string): string {
  if (/ies$/.test(name)) return name.replace(/ies$/, "y");
  if (/(x|ch|sh|ss)es$/.test(name)) return name.replace(/es$/, "");
  if (/[^s]s$/.test(name)) return name.replace(/s$/, "");
  return name;
}

export interface NameOptions {
  repeated: boolean;
  ref: boolean;
  direction: "input" | "output";
  /** The output name given by the name table, when there is one. */
  base?: string | undefined;
}

/** Rules 1–3: the JSON name of an element. */
export function defaultJsonName(element: string, options: NameOptions): string {
  let name = options.base ?? FIXED[element];
  if (name === undefined) {
    const words = wordsOf(element);
    if (words.length > 1 && /^(Ref|Ret|Add|Mod)$/.test(words[words.length - 1] ?? "")) words.pop();
    name = camel(words);
    if (options.repeated) name = plural(name);
  }
  if (options.ref && options.direction === "input") {
    return options.repeated ? `${singular(name)}Ids` : `${name}Id`;
  }
  return name;
}

/** Rule 5: `AccountsPayable` → `accounts_payable`. */
export function defaultEnumValue(value: string): string {
  return wordsOf(value)
    .map((word) => word.toLowerCase())
    .join("_");
}

const CONTACTS_RET = { AdditionalContactRef: "customContactFields", ContactsRet: "additionalContacts" };
/** Custom field definitions (the market's names: `objectTypes`; ours for the rest). */
const DEFINITION = {
  AssignToObject: "objectTypes",
  DataExtID: "definitionNumber",
  DataExtListRequire: "isRequiredOnLists",
  DataExtTxnRequire: "isRequiredOnTransactions",
  DataExtFormatString: "formatString",
};
const CONTACTS_ADD = { AdditionalContactRef: "customContactFields", Contacts: "additionalContacts" };
const CONTACTS_MOD = { AdditionalContactRef: "customContactFields", ContactsMod: "additionalContacts" };

const YES_NO = (yes: string, no: string): Record<string, string> => ({ Yes: yes, No: no });

/**
 * Our own reviewed name choices, applied over the generated table (rule 4): where the importer's
 * alignment chose wrongly (customers' and vendors' contacts, where the market's order differs from
 * the schema's), names the importer cannot find (an element the market moved and publishes nowhere
 * else), the spec's own names for groups the market lacks (leads), and enumeration values the
 * market spells with other words than the application, which no letter-by-letter match can find
 * (spec: custom field `type`, linked transaction `linkType`; the market's employee and report
 * values). Each value below is the same value of the same element in the market's document
 * (decision 0015). An empty object type means "none".
 */
const OVERRIDES: Partial<NameTable> = {
  global: {
    AdditionalContactRef: "customContactFields",
    MinFinanceCharge: "minimumFinanceCharge",
    // Misaligned by the importer (the market omits these elements; they took a neighbour's name).
    LastCheckNumber: "lastCheckNumber",
    CompanyEmailForCustomer: "companyEmailForCustomer",
    CompanyWebSite: "website",
    // The market moved it to the end of `salesAndPurchaseDetails` and has it nowhere else.
    ApplyExpenseAccountRefToExistingTxns: "updateExistingTransactionsExpenseAccount",
  },
  byType: {
    CustomerRet: CONTACTS_RET,
    VendorRet: CONTACTS_RET,
    CustomerAdd: CONTACTS_ADD,
    VendorAdd: CONTACTS_ADD,
    CustomerMod: CONTACTS_MOD,
    VendorMod: CONTACTS_MOD,
    // Spec "Lead": `contacts[]`.
    LeadRet: { LeadContactsRet: "contacts" },
    LeadAdd: { LeadContacts: "contacts" },
    LeadMod: { LeadContactsMod: "contacts" },
    AdditionalContactRef: { ContactName: "name", ContactValue: "value" },
    ContactsRet: { Contact: "name" },
    Contacts: { Contact: "name" },
    ContactsMod: { Contact: "name" },
    DataExtDefRet: DEFINITION,
    DataExtDefAdd: DEFINITION,
    DataExtDefMod: {
      ...DEFINITION,
      DataExtNewName: "newName",
      AssignToObject: "addObjectTypes",
      RemoveFromObject: "removeObjectTypes",
    },
  },
  objectTypes: { AdditionalContactRef: "", ContactsRet: "ledger_contact" },
  enumValues: {
    LinkType: { AMTTYPE: "amount", QUANTYPE: "quantity" },
    // Employees: the market names each yes/no answer by what it says.
    Disabled: YES_NO("disabled", "non_disabled"),
    KeyEmployee: YES_NO("key_employee", "non_key_employee"),
    OnFile: YES_NO("on_file", "not_on_file"),
    USCitizen: YES_NO("citizen", "non_citizen"),
    USVeteran: YES_NO("veteran", "non_veteran"),
    // Sick and vacation hours: when hours accrue.
    AccrualPeriod: {
      BeginningOfYear: "accrues_annually",
      EveryHourOnPaycheck: "accrues_hourly",
      EveryPaycheck: "accrues_per_paycheck",
    },
    // Transactions list: the summary is the transaction without its lines.
    TransactionDetailLevelFilter: {
      SummaryOnly: "transactions_without_lines",
      AllExceptSummary: "transaction_lines_only",
    },
    // Report columns: the market's names of these columns follow its field names (`FOB` →
    // `shipmentOrigin`, `TimeModified` → `updatedAt`).
    IncludeColumn: {
      FOB: "shipment_origin",
      ItemDesc: "description",
      ModifiedTime: "updated_at",
      NameZip: "name_postal_code",
    },
  },
};

let loaded: NameTable | null = null;

/** The name table: generated market names with our overrides applied. */
export function nameTable(): NameTable {
  if (loaded) return loaded;
  const generated = JSON.parse(
    readFileSync(new URL("./generated/names.json", import.meta.url), "utf8"),
  ) as NameTable;
  const merged = (
    base: Record<string, Record<string, string>>,
    over: Record<string, Record<string, string>> = {},
  ): Record<string, Record<string, string>> => {
    const out = { ...base };
    for (const [key, value] of Object.entries(over)) out[key] = { ...base[key], ...value };
    return out;
  };
  loaded = {
    global: { ...generated.global, ...OVERRIDES.global },
    byType: merged(generated.byType, OVERRIDES.byType),
    objectTypes: { ...generated.objectTypes, ...OVERRIDES.objectTypes },
    enumValues: merged(generated.enumValues, OVERRIDES.enumValues),
  };
  return loaded;
}

/** The JSON name of a slot of type `typeKey`. */
export function jsonNameOf(
  table: NameTable,
  typeKey: string,
  slot: Slot,
  ref: boolean,
  direction: "input" | "output",
): string {
  return defaultJsonName(slot.name, {
    repeated: slot.max > 1,
    ref,
    direction,
    base: table.byType[typeKey]?.[slot.name] ?? table.global[slot.name],
  });
}

/** The JSON value of an enumeration value of element `element`. */
export function jsonEnumValue(table: NameTable, element: string, value: string): string {
  return table.enumValues[element]?.[value] ?? defaultEnumValue(value);
}
