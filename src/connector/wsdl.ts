/**
 * The WSDL the bridge serves at `GET <AppURL>?wsdl` (guide ledger-protocol.md §1.1).
 *
 * It is generated from the codec's parameter table so the contract cannot drift from what
 * `soap.ts` parses and writes. Facts taken from the connector's published contract: document/literal
 * SOAP 1.1, target namespace `http://developer.intuit.com/`, `SOAPAction` = namespace + method, every string
 * parameter optional (`minOccurs="0"`, as .NET omits null strings), the two version numbers of
 * `sendRequestXML` and the result of `receiveResponseXML` typed `int`, `authenticate` returning an
 * `ArrayOfString`, and `serverVersion` taking no parameters, which is what the connector sends.
 * The service, port type, binding and port carry the names of the connector's published WSDL, so
 * that tooling generated from either document finds the same service (a protocol fact, like the
 * namespace; our own identifiers stay neutral).
 */
import {
  CONNECTOR_NAMESPACE,
  SOAP_METHODS,
  SOAP_PARAMETERS,
  escapeXmlAttributeValue,
  type SoapMethod,
} from "./soap.ts";

/** `wsdl:service` name in the connector's published WSDL. */
export const WSDL_SERVICE_NAME = "QBWebConnectorSvc";
/** Port type, binding and port name in the connector's published WSDL. */
export const WSDL_PORT_NAME = `${WSDL_SERVICE_NAME}Soap`;

const INT_PARAMETERS: ReadonlySet<string> = new Set(["qbXMLMajorVers", "qbXMLMinorVers"]);

/** Short operation descriptions, shown by tooling that renders the WSDL. */
const DOCUMENTATION: { readonly [M in SoapMethod]: string } = {
  serverVersion: "Returns the service's version text; the connector calls it first.",
  clientVersion: "Receives the connector's version; W:, E: or O: prefixes warn or stop.",
  authenticate:
    "Returns [ticket, company file | none | nvu | busy, postpone seconds, minimum run-every seconds].",
  sendRequestXML:
    "Returns the next request document, or an empty string to make the connector call getLastError.",
  receiveResponseXML: "Receives a response document; returns percent done (0-100) or a negative error.",
  connectionError:
    "Told that the application could not be reached; returns done, a company file path, or an empty string.",
  getLastError: "Returns the last error text, NoOp to pause, or Interactive mode.",
  closeConnection: "Ends the session; returns a status text for the connector's window.",
  getInteractiveURL: "Returns the URL the connector opens for interactive mode.",
  interactiveDone: "Returns Done when the interactive session is over.",
  interactiveRejected: "Told that the user declined interactive mode; returns a message.",
  getServerVersion: "Returns the service's version text (older connectors).",
};

function requestElement(method: SoapMethod): string {
  const parameters: readonly string[] = SOAP_PARAMETERS[method];
  if (parameters.length === 0)
    return `      <s:element name="${method}">\n        <s:complexType />\n      </s:element>`;
  const children = parameters.map((parameter) =>
    INT_PARAMETERS.has(parameter)
      ? `            <s:element minOccurs="1" maxOccurs="1" name="${parameter}" type="s:int" />`
      : `            <s:element minOccurs="0" maxOccurs="1" name="${parameter}" type="s:string" />`,
  );
  return [
    `      <s:element name="${method}">`,
    "        <s:complexType>",
    "          <s:sequence>",
    ...children,
    "          </s:sequence>",
    "        </s:complexType>",
    "      </s:element>",
  ].join("\n");
}

function responseElement(method: SoapMethod): string {
  const result =
    method === "authenticate"
      ? `<s:element minOccurs="0" maxOccurs="1" name="${method}Result" type="tns:ArrayOfString" />`
      : method === "receiveResponseXML"
        ? `<s:element minOccurs="1" maxOccurs="1" name="${method}Result" type="s:int" />`
        : `<s:element minOccurs="0" maxOccurs="1" name="${method}Result" type="s:string" />`;
  return [
    `      <s:element name="${method}Response">`,
    "        <s:complexType>",
    "          <s:sequence>",
    `            ${result}`,
    "          </s:sequence>",
    "        </s:complexType>",
    "      </s:element>",
  ].join("\n");
}

function messages(method: SoapMethod): string {
  return [
    `  <wsdl:message name="${method}SoapIn">`,
    `    <wsdl:part name="parameters" element="tns:${method}" />`,
    "  </wsdl:message>",
    `  <wsdl:message name="${method}SoapOut">`,
    `    <wsdl:part name="parameters" element="tns:${method}Response" />`,
    "  </wsdl:message>",
  ].join("\n");
}

function portTypeOperation(method: SoapMethod): string {
  return [
    `    <wsdl:operation name="${method}">`,
    `      <wsdl:documentation>${DOCUMENTATION[method]}</wsdl:documentation>`,
    `      <wsdl:input message="tns:${method}SoapIn" />`,
    `      <wsdl:output message="tns:${method}SoapOut" />`,
    "    </wsdl:operation>",
  ].join("\n");
}

function bindingOperation(method: SoapMethod): string {
  return [
    `    <wsdl:operation name="${method}">`,
    `      <soap:operation soapAction="${CONNECTOR_NAMESPACE}${method}" style="document" />`,
    '      <wsdl:input><soap:body use="literal" /></wsdl:input>',
    '      <wsdl:output><soap:body use="literal" /></wsdl:output>',
    "    </wsdl:operation>",
  ].join("\n");
}

/**
 * Our WSDL for the connector protocol: the 8 core operations, the interactive-mode ones and
 * `getServerVersion`, bound to `endpointUrl` (the `.qwc` AppURL).
 */
export function wsdlDocument(endpointUrl: string): string {
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"',
    '  xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"',
    '  xmlns:s="http://www.w3.org/2001/XMLSchema"',
    `  xmlns:tns="${CONNECTOR_NAMESPACE}"`,
    `  targetNamespace="${CONNECTOR_NAMESPACE}">`,
    "  <wsdl:types>",
    `    <s:schema elementFormDefault="qualified" targetNamespace="${CONNECTOR_NAMESPACE}">`,
    '      <s:complexType name="ArrayOfString">',
    "        <s:sequence>",
    '          <s:element minOccurs="0" maxOccurs="unbounded" name="string" nillable="true" type="s:string" />',
    "        </s:sequence>",
    "      </s:complexType>",
    ...SOAP_METHODS.flatMap((method) => [requestElement(method), responseElement(method)]),
    "    </s:schema>",
    "  </wsdl:types>",
    ...SOAP_METHODS.map(messages),
    `  <wsdl:portType name="${WSDL_PORT_NAME}">`,
    ...SOAP_METHODS.map(portTypeOperation),
    "  </wsdl:portType>",
    `  <wsdl:binding name="${WSDL_PORT_NAME}" type="tns:${WSDL_PORT_NAME}">`,
    '    <soap:binding transport="http://schemas.xmlsoap.org/soap/http" style="document" />',
    ...SOAP_METHODS.map(bindingOperation),
    "  </wsdl:binding>",
    `  <wsdl:service name="${WSDL_SERVICE_NAME}">`,
    `    <wsdl:port name="${WSDL_PORT_NAME}" binding="tns:${WSDL_PORT_NAME}">`,
    `      <soap:address location="${escapeXmlAttributeValue(endpointUrl)}" />`,
    "    </wsdl:port>",
    "  </wsdl:service>",
    "</wsdl:definitions>",
    "",
  ].join("\n");
}
