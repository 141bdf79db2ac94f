import type { TObject } from 'typebox';
import { collapse } from '../http-errors.js';
import { compileBodyValidator } from '../validation.js';

const compiled = new Map<TObject, ReturnType<typeof compileBodyValidator>>();

/**
 * Validates (and fills the defaults of) a body exactly as the route with this
 * body schema would: undefined when it passes, else the problems by field.
 */
export function bodyProblems(schema: TObject, body: Record<string, unknown>): Record<string, string> | undefined {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = compileBodyValidator(schema);
    compiled.set(schema, validate);
  }
  return validate(body) ? undefined : collapse(validate.errors ?? []);
}
