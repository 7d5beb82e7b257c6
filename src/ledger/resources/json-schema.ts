import type { Shape } from "./shape.ts";

/**
 * JSON Schemas of output shapes for the OpenAPI document: every field present and nullable (spec:
 * "Response fields are all present. Absent values are null"), references as `{id, fullName}`, nested
 * records as shared components named by their object type (or schema type) so the document stays
 * small. Input schemas come from the Zod schemas the validator uses.
 */
export type JsonSchema = Record<string, unknown>;

const REFERENCE: JsonSchema = {
  type: ["object", "null"],
  properties: { id: { type: ["string", "null"] }, fullName: { type: ["string", "null"] } },
  required: ["id", "fullName"],
};

function leafSchema(kind: string | undefined): JsonSchema {
  switch (kind) {
    case "quantity":
      return { type: ["number", "null"] };
    case "integer":
      return { type: ["integer", "null"] };
    case "boolean":
      return { type: ["boolean", "null"] };
    case "amount":
    case "price":
    case "percent":
    case "decimal":
      return { type: ["string", "null"], description: "Decimal string" };
    case "date":
      return { type: ["string", "null"], format: "date" };
    case "dateTime":
      return {
        type: ["string", "null"],
        description: "ISO 8601 date-time with the application computer's UTC offset",
      };
    default:
      return { type: ["string", "null"] };
  }
}

/** Registers the shape (and its nested shapes) in `components`; returns a `$ref` to it. */
export function outputSchemaRef(
  shape: Shape,
  components: Record<string, JsonSchema>,
  name?: string,
): JsonSchema {
  const key = name ?? shape.objectType ?? shape.typeKey;
  if (!(key in components)) {
    components[key] = {};
    const properties: Record<string, JsonSchema> = {};
    let typed = false;
    for (const field of shape.fields) {
      let schema: JsonSchema;
      if (field.form === "ref") schema = REFERENCE;
      else if (field.form === "object" && field.shape) schema = outputSchemaRef(field.shape, components);
      else {
        schema = leafSchema(field.kind?.kind);
        const values =
          field.kind?.kind === "enum" ? (field.kind.jsonSchema().enum as unknown[] | undefined) : undefined;
        if (values) schema = { ...schema, description: `Open enumeration: ${values.join(", ")}` };
      }
      properties[field.json] = field.array ? { type: "array", items: schema } : schema;
      if (field.json === "id" && (shape.objectType || name)) {
        properties.objectType = { type: "string", const: name ?? shape.objectType };
        typed = true;
      }
    }
    if (!typed && (shape.objectType || name))
      properties.objectType = { type: "string", const: name ?? shape.objectType };
    components[key] = { type: "object", properties, required: Object.keys(properties) };
  }
  return { $ref: `#/components/schemas/${key}` };
}
