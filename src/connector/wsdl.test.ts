import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it, type TestContext } from "node:test";
import { XMLParser } from "fast-xml-parser";
import { findReference, needReference } from "../testing/references.ts";
import { CONNECTOR_NAMESPACE } from "./soap.ts";
import { wsdlDocument } from "./wsdl.ts";

/** The parts of a WSDL that clients generated from it depend on. */
interface WsdlFacts {
  targetNamespace: string;
  service: string;
  port: string;
  portBinding: string;
  binding: string;
  bindingType: string;
  portType: string;
  actions: Map<string, string>;
  parameters: Map<string, string[]>;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  removeNSPrefix: true,
  isArray: (name) => ["operation", "element", "port", "binding"].includes(name),
});

type Node = Record<string, unknown>;
const nodes = (value: unknown): Node[] =>
  Array.isArray(value) ? (value as Node[]) : value ? [value as Node] : [];

function factsOf(wsdl: string): WsdlFacts {
  const definitions = (parser.parse(wsdl) as { definitions: Node }).definitions;
  const service = definitions["service"] as Node;
  const port = nodes(service["port"])[0] ?? {};
  // The SOAP 1.1 binding (a WSDL may add a SOAP 1.2 one).
  const binding = nodes(definitions["binding"])[0] ?? {};
  const actions = new Map<string, string>();
  for (const operation of nodes(binding["operation"])) {
    const soapOperation = nodes(operation["operation"])[0] ?? {};
    actions.set(String(operation["@name"]), String(soapOperation["@soapAction"]));
  }
  const parameters = new Map<string, string[]>();
  const schema = (definitions["types"] as Node)["schema"] as Node;
  for (const element of nodes(schema["element"])) {
    const sequence = ((element["complexType"] as Node | undefined)?.["sequence"] as Node | undefined) ?? {};
    parameters.set(
      String(element["@name"]),
      nodes(sequence["element"]).map((child) => String(child["@name"])),
    );
  }
  return {
    targetNamespace: String(definitions["@targetNamespace"]),
    service: String(service["@name"]),
    port: String(port["@name"]),
    portBinding: String(port["@binding"]),
    binding: String(binding["@name"]),
    bindingType: String(binding["@type"]),
    portType: String((definitions["portType"] as Node)["@name"]),
    actions,
    parameters,
  };
}

/** The published WSDL's facts, or null when the reference is absent (skipped outside CI, failed under CI). */
function publishedFacts(t: TestContext): WsdlFacts | null {
  const path = needReference(t, {
    what: "the connector's published WSDL",
    path: findReference("QBWebConnectorSvc.wsdl"),
  });
  return path === null ? null : factsOf(readFileSync(path, "utf8"));
}

void describe("wsdlDocument against the connector's published WSDL", () => {
  const ours = factsOf(wsdlDocument("http://127.0.0.1:8080/connector"));

  void it("names the service, port, binding and port type as the published WSDL does", (t) => {
    const published = publishedFacts(t);
    if (!published) return;
    assert.equal(ours.targetNamespace, CONNECTOR_NAMESPACE);
    assert.equal(ours.targetNamespace, published.targetNamespace);
    for (const name of ["service", "port", "portBinding", "binding", "bindingType", "portType"] as const) {
      assert.equal(ours[name], published[name], name);
    }
  });

  void it("binds every published operation with the same SOAPAction and parameter names", (t) => {
    const published = publishedFacts(t);
    if (!published) return;
    assert.ok(published.actions.size >= 8);
    for (const [operation, action] of published.actions) {
      assert.equal(ours.actions.get(operation), action, operation);
      const parameters: string[] = published.parameters.get(operation) ?? [];
      // The connector sends serverVersion without a parameter; the published WSDL declares one.
      if (operation === "serverVersion") continue;
      assert.deepEqual(ours.parameters.get(operation), parameters, operation);
      assert.ok(ours.parameters.has(`${operation}Response`), `${operation}Response`);
    }
  });
});
