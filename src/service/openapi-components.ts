/**
 * Code generators make one type per entry of `components.schemas` and reuse it
 * wherever a `$ref` points at it; a schema written out inline at every route
 * becomes a new anonymous type each time. Routes keep using their TypeBox
 * schemas as they are (validation and serialisation see no `$ref`); a schema
 * meant to be shared carries a PascalCase `title`, and this pass moves it into
 * the components and points every identical occurrence at it.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const COMPONENT_NAME = /^[A-Z][A-Za-z0-9]*$/;
/** Keys whose values are data (examples, allowed values), never schemas to look into. */
const DATA_KEYS = new Set(['default', 'example', 'examples', 'enum', 'const']);

/** JSON with sorted keys: two occurrences of one schema compare equal whatever their key order. */
function canonical(node: Json): string {
  if (Array.isArray(node)) return `[${node.map(canonical).join(',')}]`;
  if (node === null || typeof node !== 'object') return JSON.stringify(node);
  return `{${Object.keys(node)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(node[key]!)}`)
    .join(',')}}`;
}

function isSchemaWithName(node: JsonObject): node is JsonObject & { title: string } {
  return typeof node.title === 'string' && COMPONENT_NAME.test(node.title) && ('type' in node || 'anyOf' in node || 'oneOf' in node || 'enum' in node);
}

/**
 * Moves every titled schema under `paths` into `components.schemas` (innermost
 * first, so a component refers to the ones inside it) and leaves a `$ref` in
 * its place. A schema whose title is already taken by a different schema stays
 * where it is, so no reference ever changes what a route says.
 */
export function hoistNamedSchemas<T extends { paths?: object; components?: object }>(document: T): T {
  const components = ((document.components ??= {} as NonNullable<T['components']>) as { schemas?: Record<string, Json> });
  const schemas = (components.schemas ??= {});
  const forms = new Map<string, string>(Object.entries(schemas).map(([name, schema]) => [name, canonical(schema)]));

  const visit = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const copy: JsonObject = {};
    for (const [key, value] of Object.entries(node)) copy[key] = DATA_KEYS.has(key) ? value : visit(value);
    if (!isSchemaWithName(copy)) return copy;
    const form = canonical(copy);
    const taken = forms.get(copy.title);
    if (taken === undefined) {
      forms.set(copy.title, form);
      schemas[copy.title] = copy;
    } else if (taken !== form) {
      return copy;
    }
    return { $ref: `#/components/schemas/${copy.title}` };
  };

  if (document.paths) Object.assign(document.paths, visit(document.paths as Json));
  return document;
}

/** The tags operations use, each declared once at the top, as linters and generated docs expect. */
export function declareTags<T extends { paths?: object; tags?: { name: string }[] }>(document: T): T {
  const used = new Set<string>();
  for (const item of Object.values((document.paths ?? {}) as Record<string, Record<string, { tags?: string[] }>>)) {
    for (const operation of Object.values(item)) for (const tag of operation?.tags ?? []) used.add(tag);
  }
  const declared = new Set((document.tags ?? []).map((tag) => tag.name));
  document.tags = [...(document.tags ?? []), ...[...used].filter((tag) => !declared.has(tag)).sort().map((name) => ({ name }))];
  return document;
}
