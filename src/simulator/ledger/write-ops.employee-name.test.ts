import assert from "node:assert/strict";
import { it } from "node:test";
import { child, childText } from "../../ledger/xml/tree.ts";
import { send, setup } from "./test-support.ts";

// The US edition's EmployeeAdd has no Name: the application names the employee after its first,
// middle and last names, which is the name references and lists then use.
it("an employee added with first and last names only is named from them, and found by that name", async () => {
  const { session } = await setup({ seed: "empty", xmlVersion: "16.0", country: "US" });
  const added = await send(
    session,
    "<EmployeeAddRq><EmployeeAdd><FirstName>Ada</FirstName><MiddleName>B</MiddleName><LastName>Lovelace</LastName></EmployeeAdd></EmployeeAddRq>",
  );
  const ret = child(added.rs[0] ?? added.msgs, "EmployeeRet");
  assert.ok(ret, added.raw);
  assert.equal(childText(ret, "Name"), "Ada B Lovelace");
  const found = await send(session, "<EmployeeQueryRq><FullName>Ada B Lovelace</FullName></EmployeeQueryRq>");
  assert.equal(
    childText(child(found.rs[0] ?? found.msgs, "EmployeeRet") ?? found.msgs, "LastName"),
    "Lovelace",
  );
});
