import { Ajv, type Options } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats ships CommonJS with a default export property.
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

const shared: Options = { allErrors: true, useDefaults: true, strict: false };

/**
 * Bodies are strict JSON: "5" is not 5, and unknown fields are dropped rather
 * than stored. Query strings and paths are text by nature, so they coerce.
 */
const bodyAjv = addFormats(new Ajv({ ...shared, coerceTypes: false, removeAdditional: 'all' }));
const textAjv = addFormats(new Ajv({ ...shared, coerceTypes: 'array', removeAdditional: true }));

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(schema);
};

/**
 * Validates a value the route assembled itself (an update merged over the
 * stored check) exactly as a request body would be, defaults included.
 */
export function compileBodyValidator(schema: object) {
  return bodyAjv.compile(schema);
}
