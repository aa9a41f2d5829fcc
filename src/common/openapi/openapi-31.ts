/*
 * @nestjs/swagger writes OpenAPI 3.0 schemas; the document is served as OpenAPI 3.1, whose
 * schemas are JSON Schema 2020-12. In 3.0 a nullable reference comes out as
 * `{nullable: true, type: "object", allOf: [{$ref}]}`, which validators read as "an object" and
 * so reject `null`. 3.1 states it plainly: `type: [..., "null"]` and `oneOf: [{$ref}, {type: "null"}]`.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Rewrites one schema (and, recursively, the schemas inside it) from the 3.0 to the 3.1 form. */
export function toJsonSchema2020(schema: Json): void {
  for (const key of ['items', 'additionalProperties', 'not']) if (isObject(schema[key])) toJsonSchema2020(schema[key]);
  for (const key of ['allOf', 'oneOf', 'anyOf'])
    if (Array.isArray(schema[key])) (schema[key] as Json[]).forEach(toJsonSchema2020);
  if (isObject(schema.properties)) Object.values(schema.properties).forEach((p) => isObject(p) && toJsonSchema2020(p));
  if (typeof schema.exclusiveMinimum === 'boolean' || typeof schema.exclusiveMaximum === 'boolean') {
    throw new Error('exclusiveMinimum/exclusiveMaximum must be numbers in OpenAPI 3.1');
  }
  if (schema.nullable !== true) {
    delete schema.nullable;
    return;
  }
  delete schema.nullable;
  const wrapped = Array.isArray(schema.allOf) && schema.allOf.length === 1 ? (schema.allOf[0] as Json) : undefined;
  if (wrapped?.$ref) {
    delete schema.allOf;
    delete schema.type;
    schema.oneOf = [wrapped, { type: 'null' }];
  } else if (typeof schema.type === 'string') {
    schema.type = [schema.type, 'null'];
  } else if (schema.$ref) {
    schema.oneOf = [{ $ref: schema.$ref }, { type: 'null' }];
    delete schema.$ref;
  } else {
    throw new Error(`nullable schema without a type: ${JSON.stringify(schema)}`);
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
}

/** Every schema object of a document: components, parameters, request bodies and responses. */
export function everySchema(document: Json, visit: (schema: Json) => void): void {
  const components = (document.components ?? {}) as Json;
  Object.values((components.schemas ?? {}) as Json).forEach((s) => isObject(s) && visit(s));
  for (const item of Object.values((document.paths ?? {}) as Record<string, Json>)) {
    for (const operation of Object.values(item).filter(isObject)) {
      for (const parameter of (operation.parameters ?? []) as Json[])
        if (isObject(parameter.schema)) visit(parameter.schema);
      const bodies = [operation.requestBody, ...Object.values((operation.responses ?? {}) as Json)];
      for (const body of bodies.filter(isObject)) {
        for (const media of Object.values((body.content ?? {}) as Json).filter(isObject))
          if (isObject(media.schema)) visit(media.schema);
      }
    }
  }
}

const INT4 = { min: -2_147_483_648, max: 2_147_483_647 };

/**
 * Every integer of the API is a PostgreSQL int4 (ids, counts, pages): documented as such
 * (`format: int32` and the int4 bounds where no tighter bound was declared), so client
 * generators and contract-test tools pick a 32-bit type and never generate out-of-range values.
 */
export function boundIntegers(schema: Json): void {
  for (const key of ['items', 'additionalProperties', 'not']) if (isObject(schema[key])) boundIntegers(schema[key]);
  for (const key of ['allOf', 'oneOf', 'anyOf'])
    if (Array.isArray(schema[key])) (schema[key] as Json[]).forEach(boundIntegers);
  if (isObject(schema.properties)) Object.values(schema.properties).forEach((p) => isObject(p) && boundIntegers(p));
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (!types.includes('integer')) return;
  schema.format ??= 'int32';
  schema.minimum ??= INT4.min;
  schema.maximum ??= INT4.max;
}
