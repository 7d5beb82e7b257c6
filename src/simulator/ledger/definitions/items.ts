/**
 * Minimal item types (service and non-inventory) so invoice lines have something real to reference.
 * Both answer to the reference kind `Item`, like the application's single item name space.
 * SalesOrPurchase / SalesAndPurchase are stored as given (their AccountRef is not validated).
 */
import { choice, opt, req, type Model } from "../content-model.ts";
import { leaf } from "../xml-tree.ts";
import { REF, defineRecord, listQueryModel } from "./common.ts";

const SALES_OR_PURCHASE: Model = [
  opt("Desc"),
  choice(0, 1, [req("Price", "amount")], [req("PricePercent", "quantity")]),
  opt("AccountRef", REF),
];

function itemDefinition(object: "ItemService" | "ItemNonInventory") {
  const partNumber = object === "ItemNonInventory";
  return defineRecord({
    object,
    kind: "list",
    refKind: "Item",
    hierarchical: true,
    addModel: [
      req("Name"),
      opt("BarCode", "any"),
      opt("IsActive", "bool"),
      ...(partNumber
        ? [opt("ParentRef", REF), opt("ClassRef", REF)]
        : [opt("ClassRef", REF), opt("ParentRef", REF)]),
      ...(partNumber ? [opt("ManufacturerPartNumber")] : []),
      opt("UnitOfMeasureSetRef", REF),
      opt("IsTaxIncluded", "bool"),
      opt("SalesTaxCodeRef", REF),
      choice(1, 1, [req("SalesOrPurchase", SALES_OR_PURCHASE)], [req("SalesAndPurchase", "any")]),
      opt("ExternalGUID"),
    ],
    queryModel: listQueryModel([opt("ClassFilter", "any")]),
    retOrder: [
      "ListID",
      "TimeCreated",
      "TimeModified",
      "EditSequence",
      "Name",
      "FullName",
      "BarCodeValue",
      "IsActive",
      "ClassRef",
      "ParentRef",
      "Sublevel",
      ...(partNumber ? ["ManufacturerPartNumber"] : []),
      "UnitOfMeasureSetRef",
      "IsTaxIncluded",
      "SalesTaxCodeRef",
      "SalesOrPurchase",
      "SalesAndPurchase",
      "ExternalGUID",
      "DataExtRet",
    ],
    refs: { ParentRef: "Item" },
    unsupported: ["BarCode"],
    defaults: () => [leaf("IsActive", "true")],
  });
}

/** ItemService definition. */
export const itemServiceDefinition = itemDefinition("ItemService");
/** ItemNonInventory definition. */
export const itemNonInventoryDefinition = itemDefinition("ItemNonInventory");
