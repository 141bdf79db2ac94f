/**
 * Bundles the agent into dist/agent-bundle/ for the uptime image: one ESM
 * graph, tree-shaken and minified, with each lazily imported part (the script
 * side, Redis, the service) its own chunk, loaded only when used.
 *
 * Why: an uptime agent's resident memory is mostly code. Loaded from hundreds
 * of module files (TypeBox alone is 684), Node.js keeps each one's source,
 * module record and loader bookkeeping; the bundle's peak under load is some
 * 12 MB lower.
 * Measured in docs/performance.md.
 *
 * Left out and loaded from node_modules as before: packages that find files of
 * their own at run time (pino's transports run a worker from pino's
 * directory), and packages an uptime agent never loads.
 */
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const { version } = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string };

const AGENT_BUNDLE_DIR = resolve(ROOT, 'dist/agent-bundle');

// Chunk names carry a content hash: a stale chunk from an earlier build would stay behind.
rmSync(AGENT_BUNDLE_DIR, { recursive: true, force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: {
    cli: 'src/cli.ts',
    // Started by path from the probe threads' pool: a sibling of the chunk that starts it.
    'probe-worker': 'src/agent/probe-threads/probe-worker.ts',
  },
  outdir: AGENT_BUNDLE_DIR,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  minify: true,
  // Error classes name themselves after new.target.name, and stack traces in logs and
  // error reports read functions' name properties: both keep the source's names.
  keepNames: true,
  // Third-party licence notices, kept beside the chunks they came from.
  legalComments: 'linked',
  logLevel: 'warning',
  define: { OUTPOST_BUNDLE: JSON.stringify({ version }) },
  // CommonJS packages inside an ESM bundle still call require() for Node's built-ins.
  banner: { js: "import { createRequire as __outpostRequire } from 'node:module'; const require = __outpostRequire(import.meta.url);" },
  external: ['pino', 'pino-pretty', 'playwright', 'playwright-core', '@electric-sql/pglite'],
});
