/**
 * Turns typebox validation errors into one readable line per settings field,
 * so an INVALID_SETTINGS result tells the user which field to fix.
 */
import type { TSchema } from 'typebox';
import Value from 'typebox/value';

export function describeSchemaErrors(schema: TSchema, value: unknown): string {
  // Unions report one error per member; fold them into one line per field.
  const byPath = new Map<string, { messages: Set<string>; allowed: Set<unknown> }>();
  const entryFor = (path: string) => {
    const entry = byPath.get(path) ?? { messages: new Set<string>(), allowed: new Set<unknown>() };
    byPath.set(path, entry);
    return entry;
  };
  for (const error of Value.Errors(schema, value)) {
    if (error.keyword === 'required') {
      // Named on the missing field itself ("request.port: is required"), not on its parent object.
      for (const property of error.params.requiredProperties) {
        entryFor(toFieldPath(`${error.instancePath}/${property}`)).messages.add('is required');
      }
      continue;
    }
    const entry = entryFor(toFieldPath(error.instancePath));
    if (error.keyword === 'const') entry.allowed.add(error.params.allowedValue);
    else if (error.keyword === 'enum') error.params.allowedValues.forEach((v) => entry.allowed.add(v));
    else if (error.keyword !== 'anyOf') entry.messages.add(error.message);
  }
  return [...byPath]
    .map(([path, { messages, allowed }]) => {
      const parts = [...messages];
      if (allowed.size > 0) parts.push(`must be one of ${[...allowed].map((v) => JSON.stringify(v)).join(', ')}`);
      if (parts.length === 0) parts.push('is invalid');
      return `${path}: ${parts.join(', ')}`;
    })
    .join('; ');
}

/** "/request/assertions/0/target" → "request.assertions[0].target". */
export function toFieldPath(instancePath: string): string {
  const segments = instancePath.split('/').slice(1);
  if (segments.length === 0) return '(settings)';
  return segments
    .map((segment, index) => (/^\d+$/.test(segment) ? `[${segment}]` : index === 0 ? segment : `.${segment}`))
    .join('');
}
