/**
 * Where a runtime lives on disk and whether it is really there. A runtime is
 * installed into `runtimes/<id>/node_modules` by `npm ci` (install.ts); this
 * module only looks, so the agent can load it without the installer.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UnknownRuntimeError } from '../errors/index.js';
import { loadRuntimeCatalog, NODE_BINARY_PACKAGE, runtimeCatalog, RUNTIMES_SOURCE_DIR, type RuntimeRecord } from './catalog.js';

export interface RuntimePaths {
  /** `runtimes/<id>`: package.json, package-lock.json, node_modules. */
  dir: string;
  /** The runtime's own Node.js binary. */
  node: string;
  /** `@playwright/test`'s cli.js, run with `node`. */
  playwrightCli: string;
}

// Ids become path segments: anything that could climb out of the runtimes directory is refused.
const RUNTIME_ID = /^[0-9A-Za-z][0-9A-Za-z._-]{0,31}$/;

/** Paths of a runtime under `root` (the project's runtimes/ by default); nothing is checked on disk. */
export function runtimePaths(id: string, root: string = RUNTIMES_SOURCE_DIR): RuntimePaths {
  if (!RUNTIME_ID.test(id) || id.includes('..')) throw new UnknownRuntimeError(`"${id}" is not a runtime id`);
  const dir = join(root, id);
  const modules = join(dir, 'node_modules');
  return {
    dir,
    node: join(modules, NODE_BINARY_PACKAGE, 'bin', 'node'),
    playwrightCli: join(modules, '@playwright', 'test', 'cli.js'),
  };
}

/** The records under `root`: the shared, cached catalog for the project's own runtimes/. */
export function catalogAt(root: string = RUNTIMES_SOURCE_DIR): readonly RuntimeRecord[] {
  return root === RUNTIMES_SOURCE_DIR ? runtimeCatalog() : loadRuntimeCatalog(root);
}

/**
 * The installable runtimes whose Node.js binary reports the pinned version and
 * whose @playwright/test is the pinned one. Runs each binary once (`--version`),
 * so callers compute this once, at start.
 */
export function installedRuntimes(root: string = RUNTIMES_SOURCE_DIR): RuntimeRecord[] {
  return catalogAt(root).filter((runtime) => runtime.installable && isInstalled(runtime, root));
}

function isInstalled(runtime: RuntimeRecord, root: string): boolean {
  const paths = runtimePaths(runtime.name, root);
  if (!existsSync(paths.node) || !existsSync(paths.playwrightCli)) return false;
  const pinnedPlaywright = runtime.dependencies['@playwright/test'];
  if (pinnedPlaywright !== undefined && installedVersion(paths.dir, '@playwright/test') !== pinnedPlaywright) return false;
  return nodeVersion(paths.node) === `v${runtime.nodeJsVersion}`;
}

/** What `<node> --version` prints, or undefined when the binary does not run here. */
export function nodeVersion(binary: string): string | undefined {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

/** The version of a package installed in a runtime, from its package.json. */
export function installedVersion(dir: string, name: string): string | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : undefined;
  } catch {
    return undefined;
  }
}

// Inside node_modules, so `npm ci` removing node_modules removes the stamp first:
// an install that stops half-way never looks finished.
const STAMP = '.outpost-install-stamp';

function lockfileDigest(dir: string): string {
  return createHash('sha256').update(readFileSync(join(dir, 'package-lock.json'))).digest('hex');
}

/** node_modules was installed by the installer from exactly this package-lock.json. */
export function matchesLockfile(dir: string): boolean {
  try {
    return readFileSync(join(dir, 'node_modules', STAMP), 'utf8').trim() === lockfileDigest(dir);
  } catch {
    return false;
  }
}

/** Records that node_modules now matches package-lock.json; called after a successful `npm ci`. */
export function stampInstalled(dir: string): void {
  writeFileSync(join(dir, 'node_modules', STAMP), `${lockfileDigest(dir)}\n`);
}
