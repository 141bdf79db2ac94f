/**
 * A query parameter's `style` and `explode` (how a list is written: `a,b` or
 * `x=a&x=b`) sit on its TypeBox schema, the one place a route describes it;
 * in OpenAPI they belong to the parameter, and a schema that keeps them is
 * invalid, so they move there.
 */
const SERIALIZATION_KEYS = ['style', 'explode'] as const;

interface Parameter {
  schema?: Record<string, unknown>;
  [key: string]: unknown;
}

export function liftParameterSerialization<T extends { paths?: object }>(document: T): T {
  for (const item of Object.values((document.paths ?? {}) as Record<string, Record<string, { parameters?: Parameter[] }>>)) {
    for (const operation of Object.values(item)) {
      for (const parameter of operation?.parameters ?? []) {
        for (const key of SERIALIZATION_KEYS) {
          if (parameter.schema && key in parameter.schema) {
            parameter[key] ??= parameter.schema[key];
            delete parameter.schema[key];
          }
        }
      }
    }
  }
  return document;
}
