/**
 * compose.yaml as Docker Compose reads it: YAML 1.2 with merge keys, duplicate
 * keys an error, and `${VAR}` / `${VAR:-default}` interpolated from `env`
 * (nothing set: what a first `docker compose up` sees). Other interpolation
 * forms are an error here rather than a guess.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';

export const COMPOSE_FILE = resolve(import.meta.dirname, '../../compose.yaml');

export function interpolate(value: unknown, env: Record<string, string>, where = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([^}]*)\}|\$\$|\$(\w+)/g, (whole, braced: string | undefined, bare: string | undefined) => {
      if (whole === '$$') return '$';
      const match = /^(\w+)(?::-(.*))?$/.exec(braced ?? bare ?? '');
      if (!match) throw new Error(`${where}: unsupported interpolation ${whole}`);
      const [, name, fallback] = match;
      const set = env[name!];
      if (set !== undefined && set !== '') return set;
      if (fallback === undefined) throw new Error(`${where}: \${${name}} has no default, so a plain docker compose up would leave it empty`);
      return fallback;
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => interpolate(item, env, `${where}/${i}`));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, interpolate(child, env, `${where}/${key}`)]));
  }
  return value;
}

/** The file as parsed, before interpolation, and its YAML problems. */
export function parseCompose(): { raw: unknown; problems: string[] } {
  const document = parseDocument(readFileSync(COMPOSE_FILE, 'utf8'), { merge: true, uniqueKeys: true });
  return { raw: document.toJS(), problems: [...document.errors, ...document.warnings].map((problem) => problem.message) };
}

export function loadCompose(env: Record<string, string> = {}): Record<string, any> {
  const { raw, problems } = parseCompose();
  if (problems.length > 0) throw new Error(`compose.yaml: ${problems.join('; ')}`);
  return interpolate(raw, env) as Record<string, any>;
}
