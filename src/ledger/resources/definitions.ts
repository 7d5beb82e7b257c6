import { ledgerSchema } from "../xml/schema.ts";
import { slotsOf } from "../xml/slots.ts";
import { CATALOGUE, type CatalogueEntry, type ResourceAction } from "./catalogue.ts";
import { nameTable } from "./names.ts";
import { recordShape, shapeOf, type Shape } from "./shape.ts";

/**
 * The registry of typed resources (house style §2.3, "The registry is the only list"): each catalogue
 * entry joined with what the schema table says about its object — the record element(s) a query
 * answers with, the Add and Mod shapes, the delete, void, merge and custom-field request families
 * that exist for it. Routes, the operation table, OpenAPI, batch and the simulator all iterate this.
 */
export interface ResourceDefinition {
  readonly entry: CatalogueEntry;
  readonly operationPrefix: string;
  /** `TxnID` for transactions, `ListID` for list objects. */
  readonly idElement: "TxnID" | "ListID";
  readonly queryRequest: string;
  /** Element names the query request offers (filters, `IncludeLineItems`…). */
  readonly queryElements: ReadonlySet<string>;
  /**
   * Whether lists page with the application's iterators: the market pages the group and its query
   * takes `iterator` (payroll wage items are paged by the market but their query cannot iterate,
   * so they are answered whole, `limit` capping the count).
   */
  readonly pages: boolean;
  /** Record elements a query answers with, each with its objectType and output shape. */
  readonly records: ReadonlyMap<string, { objectType: string; shape: Shape }>;
  /** The main record element (`InvoiceRet`). */
  readonly ret: string;
  readonly output: Shape;
  readonly create: Shape | null;
  readonly update: Shape | null;
  /** `TxnDelType`/`ListDelType` value, when the object can be deleted. */
  readonly delType: string | null;
  readonly voidType: string | null;
  readonly mergeType: string | null;
  /** `ListDataExtType`/`TxnDataExtType` value, when custom fields can be set. */
  readonly dataExtType: string | null;
  /**
   * The query that says how many of the object its components allow building (`canBuild`): a
   * `…CanBuildQueryRq` of the schema whose first element references the object.
   */
  readonly canBuild: { readonly request: string; readonly ret: string } | null;
  readonly actions: readonly ResourceAction[];
  /** The group's own action set of the action table, when its messages follow no generic pattern. */
  readonly actionSet: CatalogueEntry["actionSet"] | null;
  /**
   * Actions the market offers for this group that the application's schema has no request for
   * (sales-tax payment checks cannot be voided): their routes answer LEDGER_OPERATION_UNSUPPORTED.
   */
  readonly unsupported: readonly ResourceAction[];
}

function enumValues(key: string): readonly string[] {
  return ledgerSchema().table.simple[key]?.e ?? [];
}

/** The record element names a query response may hold. */
function recordElements(queryResponse: string): string[] {
  const schema = ledgerSchema();
  if (!schema.isComplex(queryResponse)) return [];
  return slotsOf(schema, queryResponse)
    .map((slot) => slot.name)
    .filter((name) => name.endsWith("Ret"));
}

/** The `…CanBuildQueryRq` whose first element references `object` (`ItemInventoryAssemblyRef`). */
function canBuildQuery(object: string): { request: string; ret: string } | null {
  const schema = ledgerSchema();
  for (const request of schema.requests) {
    if (!request.endsWith("CanBuildQueryRq")) continue;
    if (slotsOf(schema, request)[0]?.name !== `${object}Ref`) continue;
    const ret = recordElements(request.replace(/Rq$/, "Rs"))[0];
    if (ret) return { request, ret };
  }
  return null;
}

/** Items answer to the `Item` custom-field owner type; everything else to its own object name. */
function dataExtOwner(entry: CatalogueEntry): string {
  return entry.kind === "list" && entry.object.startsWith("Item") ? "Item" : entry.object;
}

function define(entry: CatalogueEntry, objectTypes: ReadonlyMap<string, string>): ResourceDefinition {
  const schema = ledgerSchema();
  const queryRequest = entry.query?.request ?? `${entry.object}QueryRq`;
  const ret = entry.query?.ret ?? `${entry.object}Ret`;
  const records = new Map<string, { objectType: string; shape: Shape }>();
  const names = recordElements(queryRequest.replace(/Rq$/, "Rs"));
  for (const name of names.length > 0 ? names : [ret]) {
    const objectType =
      name === ret
        ? entry.objectType
        : (objectTypes.get(name) ?? nameTable().objectTypes[name] ?? entry.objectType);
    // Shapes are derived on first use: building all of them costs about a second at start-up.
    records.set(name, {
      objectType,
      get shape() {
        return recordShape(name);
      },
    });
  }
  const mainName = records.has(ret) ? ret : ([...records.keys()][0] ?? ret);
  const has = (name: string): boolean => schema.isComplex(name);
  // A group with its own action set offers exactly what it declares, through its own messages.
  const isQueryOnly = entry.query !== undefined || entry.actionSet !== undefined;
  const delType =
    !isQueryOnly &&
    enumValues(entry.kind === "transaction" ? "enum.TxnDelType" : "enum.ListDelType").includes(entry.object)
      ? entry.object
      : null;
  const voidType =
    !isQueryOnly && enumValues("enum.TxnVoidType").includes(entry.object) ? entry.object : null;
  const mergeType =
    !isQueryOnly && enumValues("enum.ListMergeType").includes(entry.object) ? entry.object : null;
  const owner = dataExtOwner(entry);
  const dataExtType =
    !isQueryOnly &&
    enumValues(entry.kind === "transaction" ? "enum.TxnDataExtType" : "enum.ListDisplayAddType").includes(
      owner,
    )
      ? owner
      : null;
  const canBuild = isQueryOnly ? null : canBuildQuery(entry.object);
  const canCreate = entry.actions.includes("create") && has(`${entry.object}Add`);
  const canUpdate = entry.actions.includes("update") && has(`${entry.object}Mod`);
  // Our spec adds list-object delete (with `confirm=true`), merge and setCustomField where the
  // application has the request family for the object.
  const actions = new Set<ResourceAction>(entry.actions);
  if (entry.actionSet) {
    return {
      entry,
      operationPrefix: `ledger.${entry.resource}`,
      idElement: "ListID",
      queryRequest,
      pages: false,
      queryElements: new Set(slotsOf(schema, queryRequest).map((s) => s.name)),
      records,
      ret: mainName,
      get output() {
        return recordShape(mainName);
      },
      // Its bodies are its own (typed/custom-field-definitions.ts), not the generic Add/Mod shapes.
      create: null,
      update: null,
      delType: null,
      voidType: null,
      mergeType: null,
      dataExtType: null,
      canBuild: null,
      actions: ORDER.filter((action) => actions.has(action)),
      actionSet: entry.actionSet,
      unsupported: [],
    };
  }
  if (delType) actions.add("delete");
  if (mergeType) actions.add("merge");
  if (dataExtType) actions.add("setCustomField");
  if (canBuild) actions.add("canBuild");
  // Upsert by key (issue 27, decision 0046): a group that can add and modify, keyed by full name
  // (a named list object the query finds by `FullName`) or by the caller's `externalId`.
  if (
    canCreate &&
    canUpdate &&
    upsertKeys(schema, entry.object, queryRequest).length > 0 &&
    linesUpdatable(shapeOf(`${entry.object}Add`, "input"), shapeOf(`${entry.object}Mod`, "input"))
  )
    actions.add("upsert");
  if (!canCreate) actions.delete("create");
  if (!canUpdate) actions.delete("update");
  if (!voidType) actions.delete("void");
  if (!delType) actions.delete("delete");
  return {
    entry,
    operationPrefix: `ledger.${entry.resource}`,
    idElement: entry.kind === "transaction" ? "TxnID" : "ListID",
    queryRequest,
    pages:
      entry.listKind === "cursor" &&
      schema.isComplex(queryRequest) &&
      "iterator" in schema.typeOf(queryRequest, null).attributes,
    queryElements: new Set(
      schema.isComplex(queryRequest) ? slotsOf(schema, queryRequest).map((s) => s.name) : [],
    ),
    records,
    ret: mainName,
    get output() {
      return recordShape(mainName);
    },
    get create() {
      return canCreate ? shapeOf(`${entry.object}Add`, "input") : null;
    },
    get update() {
      return canUpdate ? shapeOf(`${entry.object}Mod`, "input") : null;
    },
    delType,
    voidType,
    mergeType,
    dataExtType,
    canBuild,
    actions: ORDER.filter((action) => actions.has(action)),
    actionSet: null,
    unsupported: entry.actions.filter((action) => !actions.has(action)),
  };
}

/**
 * The keys an upsert of the object can find its record by (decision 0046): `fullName` when its query
 * filters by `FullName` and its Add names it (`Name`), `externalId` when its Add takes `ExternalGUID`.
 */
export function upsertKeys(
  schema: ReturnType<typeof ledgerSchema>,
  object: string,
  queryRequest: string,
): Array<"fullName" | "externalId"> {
  const add = new Set(slotsOf(schema, `${object}Add`).map((slot) => slot.name));
  const query = schema.isComplex(queryRequest)
    ? new Set(slotsOf(schema, queryRequest).map((slot) => slot.name))
    : new Set<string>();
  const keys: Array<"fullName" | "externalId"> = [];
  if (query.has("FullName") && add.has("Name")) keys.push("fullName");
  if (add.has("ExternalGUID")) keys.push("externalId");
  return keys;
}

/**
 * Whether an upsert can update the lines it would create (decision 0046): every line array of the Add
 * has one of the same name in the Mod sharing a value field, not only references (an inventory
 * adjustment's Add line adjusts a quantity, its Mod line states a difference: no upsert).
 */
function linesUpdatable(add: Shape, mod: Shape): boolean {
  return add.fields.every((field) => {
    if (!field.array || !field.shape) return true;
    const line = mod.fields.find((other) => other.json === field.json)?.shape;
    if (!line) return false;
    const modNames = new Set(line.fields.map((f) => f.json));
    return field.shape.fields.some((f) => modNames.has(f.json) && !/Ids?$/.test(f.json));
  });
}

const ORDER: readonly ResourceAction[] = [
  "list",
  "retrieve",
  "create",
  "update",
  "upsert",
  "delete",
  "void",
  "merge",
  "setCustomField",
  "canBuild",
];

let registry: readonly ResourceDefinition[] | null = null;

/** Every typed resource, in catalogue order. */
export function allResources(): readonly ResourceDefinition[] {
  if (registry) return registry;
  const objectTypes = new Map<string, string>();
  for (const entry of CATALOGUE) objectTypes.set(entry.query?.ret ?? `${entry.object}Ret`, entry.objectType);
  registry = CATALOGUE.map((entry) => define(entry, objectTypes));
  return registry;
}

/** The resource serving a path segment (`invoices`). */
export function resourceByPath(path: string): ResourceDefinition | undefined {
  return allResources().find((r) => r.entry.path === path);
}

/** The resource whose main record element is `ret` (`InvoiceRet`). */
export function resourceByRet(ret: string): ResourceDefinition | undefined {
  return allResources().find((r) => r.ret === ret);
}
