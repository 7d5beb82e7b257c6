import type { Shape } from "./shape.ts";

/**
 * JSON Schemas of output shapes for the OpenAPI document: every field present and nullable (spec:
 * "Response fields are all present. Absent values are null"), references as `{id, fullName}`, nested
 * records as shared components named by their object type (or schema type) so the document stays
 * small. Leaf values are described by their field kind (`outputSchema`), as inputs are (`jsonSchema`).
 */
export type JsonSchema = Record<string, unknown>;

const REFERENCE: JsonSchema = {
  type: ["object", "null"],
  properties: { id: { type: ["string", "null"] }, fullName: { type: ["string", "null"] } },
  required: ["id", "fullName"],
};

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
      else if (field.form === "object" && field.shape) {
        const nested = outputSchemaRef(field.shape, components);
        // An absent aggregate is null (an address never set); an array's items are records.
        schema = field.array ? nested : { anyOf: [nested, { type: "null" }] };
      } else schema = field.kind?.outputSchema() ?? { type: ["string", "null"] };
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
