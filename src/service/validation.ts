import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
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

/**
 * PostgreSQL's `integer`: every integer a request carries ends up in such a
 * column, an OFFSET or an interval, so one past it is refused here with a 400
 * rather than by the database with a 500.
 */
export const PG_INTEGER_MIN = -2_147_483_648;
export const PG_INTEGER_MAX = 2_147_483_647;
/** Deeper than any request the API defines; much deeper JSON costs jsonb (and stacks) dearly. */
export const MAX_NESTING = 64;

/** Half of a UTF-16 pair: JSON may spell one, UTF-8 (so PostgreSQL) cannot. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

type SchemaNode = Record<string, unknown>;

function isIntegerSchema(schema: SchemaNode): boolean {
  const type = schema.type;
  return type === 'integer' || (Array.isArray(type) && type.includes('integer'));
}

/** A copy of the schema whose integers are bounded to what PostgreSQL stores; the route's own bounds stay when tighter. */
export function boundIntegers(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(boundIntegers);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: SchemaNode = {};
  for (const [key, value] of Object.entries(schema as SchemaNode)) {
    // Literal data (enum values, defaults, examples) is not schema.
    copy[key] = key === 'enum' || key === 'const' || key === 'default' || key === 'examples' ? value : boundIntegers(value);
  }
  if (isIntegerSchema(copy)) {
    if (typeof copy.maximum !== 'number' || copy.maximum > PG_INTEGER_MAX) copy.maximum = PG_INTEGER_MAX;
    if (typeof copy.minimum !== 'number' || copy.minimum < PG_INTEGER_MIN) copy.minimum = PG_INTEGER_MIN;
  }
  return copy;
}

function pointer(path: string, key: string | number): string {
  return `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1').replace(/\0/g, '\\u0000')}`;
}

/** Where a value sits, kept as a chain and spelled out as a JSON pointer only for a problem found there. */
interface Place {
  parent: Place | undefined;
  key: string | number;
}

function pathOf(place: Place | undefined): string {
  const keys: (string | number)[] = [];
  for (let at = place; at; at = at.parent) keys.push(at.key);
  let path = '';
  for (let index = keys.length - 1; index >= 0; index -= 1) path = pointer(path, keys[index]!);
  return path;
}

/**
 * What no schema says but PostgreSQL refuses in text and jsonb: the NUL
 * character and lone surrogates, in any string or key, typed by the schema
 * or not. Also refuses nesting beyond MAX_NESTING. Walks without recursion,
 * so depth cannot overflow the stack here. Runs on every request body (a
 * result batch is hundreds of values), so paths are only spelled out for problems.
 */
export function textProblems(data: unknown): ErrorObject[] {
  const errors: ErrorObject[] = [];
  const stack: { value: unknown; place: Place | undefined; depth: number }[] = [{ value: data, place: undefined, depth: 0 }];
  while (stack.length > 0 && errors.length < 20) {
    const { value, place, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\0')) errors.push(problem(pathOf(place), 'noNul', 'must not contain the NUL character (\\u0000)'));
      else if (LONE_SURROGATE.test(value)) errors.push(problem(pathOf(place), 'unicode', 'must be valid Unicode (no lone surrogate)'));
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_NESTING) {
      errors.push(problem(pathOf(place), 'maxNesting', `must not nest deeper than ${MAX_NESTING} levels`));
      continue;
    }
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index += 1) {
        stack.push({ value: value[index] as unknown, place: { parent: place, key: index }, depth: depth + 1 });
      }
      continue;
    }
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      if (key.includes('\0') || LONE_SURROGATE.test(key)) {
        errors.push(problem(pathOf(place), 'noNul', 'must not have a key with the NUL character (\\u0000) or a lone surrogate'));
        continue;
      }
      stack.push({ value: (value as Record<string, unknown>)[key], place: { parent: place, key }, depth: depth + 1 });
    }
  }
  return errors;
}

function problem(instancePath: string, keyword: string, message: string): ErrorObject {
  return { instancePath, keyword, message, params: {}, schemaPath: '' };
}

/**
 * The schema's verdict, then the database's own limits on what passed it
 * (fields the schema dropped are never stored, so never looked at).
 */
function guarded(validate: ValidateFunction): ValidateFunction {
  const wrapper = (data: unknown): boolean => {
    const valid = validate(data);
    const errors = [...(validate.errors ?? []), ...textProblems(data)];
    wrapper.errors = errors.length > 0 ? errors : null;
    return valid && errors.length === 0;
  };
  wrapper.errors = null as ErrorObject[] | null;
  // Same schema and metadata as ajv's own: callers may treat it as one.
  return Object.assign(wrapper, { schema: validate.schema, schemaEnv: validate.schemaEnv }) as unknown as ValidateFunction;
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return guarded(ajv.compile(boundIntegers(schema) as object));
};

/**
 * Validates a value the route assembled itself (an update merged over the
 * stored check) exactly as a request body would be, defaults included.
 */
export function compileBodyValidator(schema: object) {
  return guarded(bodyAjv.compile(boundIntegers(schema) as object));
}
