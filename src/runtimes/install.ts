/**
 * Installs runtimes: `npm ci` in `runtimes/<id>`, from the lockfile committed
 * there, into its node_modules. npm does the fetching, so HTTP(S)_PROXY, a
 * registry mirror in .npmrc and the npm cache all work as they do for npm.
 * Install scripts are never run: a runtime's packages must not need them (the
 * Node.js binary comes whole in its tarball), and an install should not run
 * code from dozens of packages as whoever runs the agent.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { RuntimeInstallError, RuntimeNotInstallableError, UnknownRuntimeError } from '../errors/index.js';
import { RUNTIMES_SOURCE_DIR, type RuntimeRecord } from './catalog.js';
import { withInstallLock } from './install-lock.js';
import { installProgress, seconds, type InstallProgress, type ProgressStream } from './install-progress.js';
import { catalogAt, matchesLockfile, nodeVersion, runtimePaths, stampInstalled } from './installed.js';

export { installedRuntimes, runtimePaths, type RuntimePaths } from './installed.js';
export type { ProgressStream } from './install-progress.js';

/** What `outpost runtimes install` installs when given no ids: the current runtime and the stable one before it. */
export const DEFAULT_RUNTIMES: readonly string[] = ['2026.04', '2025.04'];

export interface SelectOptions {
  /** Every installable runtime, whatever ids are given. */
  all?: boolean;
  /** Directory of the runtime directories; the project's runtimes/ by default. */
  root?: string;
}

export interface InstallOptions extends SelectOptions {
  /** Where progress is shown (process.stdout in the CLI); nothing is shown without one. */
  progress?: ProgressStream;
  /** Run `npm ci` even where node_modules already matches the lockfile. */
  force?: boolean;
  /** npm's environment; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** The npm executable; `npm` from PATH by default. */
  npm?: string;
}

export interface InstallOutcome {
  id: string;
  /** `up-to-date`: node_modules already matched the lockfile and npm was not run. */
  status: 'installed' | 'up-to-date';
  ms: number;
}

/**
 * The runtimes named by `ids` (no ids: DEFAULT_RUNTIMES; `all`: every
 * installable one), each once. Unknown ids and records that cannot be
 * installed are refused before anything is installed.
 */
export function selectRuntimes(ids: readonly string[], options: SelectOptions = {}): RuntimeRecord[] {
  const catalog = catalogAt(options.root ?? RUNTIMES_SOURCE_DIR);
  const installable = catalog.filter((runtime) => runtime.installable);
  if (options.all) return [...installable];
  const wanted = [...new Set(ids.length > 0 ? ids : DEFAULT_RUNTIMES)];
  const choices = `Installable runtimes: ${installable.map((runtime) => runtime.name).join(', ')}`;
  const unknown = wanted.filter((id) => !catalog.some((runtime) => runtime.name === id));
  if (unknown.length > 0) {
    const names = unknown.map((id) => `"${id}"`).join(', ');
    throw new UnknownRuntimeError(`Unknown runtime ${names}. ${choices}`);
  }
  const records = wanted.map((id) => catalog.find((runtime) => runtime.name === id)!);
  const recordsOnly = records.filter((runtime) => !runtime.installable);
  if (recordsOnly.length > 0) {
    const names = recordsOnly.map((runtime) => `${runtime.name} (${runtime.stage})`).join(', ');
    throw new RuntimeNotInstallableError(
      `Runtime ${names} cannot be installed: only its record is kept, no packages. ${choices}`,
    );
  }
  return records;
}

/**
 * Installs the selected runtimes side by side. A runtime whose node_modules
 * matches its lockfile is left alone, so calling this on every start costs a
 * file read per runtime. Throws RuntimeInstallError naming every runtime that
 * failed once all have finished.
 */
export async function installRuntimes(ids: readonly string[], options: InstallOptions = {}): Promise<InstallOutcome[]> {
  const root = options.root ?? RUNTIMES_SOURCE_DIR;
  const runtimes = selectRuntimes(ids, options);
  const progress = installProgress(
    options.progress,
    runtimes.map((runtime) => runtime.name),
  );
  let settled: PromiseSettledResult<InstallOutcome>[];
  try {
    settled = await Promise.allSettled(
      runtimes.map(async (runtime) => {
        try {
          const outcome = await installOne(runtime, root, options, progress);
          const said = outcome.status === 'installed' ? `installed in ${seconds(outcome.ms)}` : 'already installed';
          progress.finished(runtime.name, true, said);
          return outcome;
        } catch (error) {
          progress.finished(runtime.name, false, 'failed');
          throw error instanceof RuntimeInstallError
            ? error
            : new RuntimeInstallError(
                [runtime.name],
                `Installing runtime ${runtime.name} failed: ${error instanceof Error ? error.message : String(error)}`,
                { cause: error },
              );
        }
      }),
    );
  } finally {
    progress.close();
  }
  const failures = settled.flatMap((result) => (result.status === 'rejected' ? [result.reason as RuntimeInstallError] : []));
  if (failures.length === 1) throw failures[0]!;
  if (failures.length > 1) {
    throw new RuntimeInstallError(
      failures.flatMap((failure) => failure.runtimes),
      failures.map((failure) => failure.message).join('\n\n'),
      { cause: failures[0] },
    );
  }
  return settled.map((result) => (result as PromiseFulfilledResult<InstallOutcome>).value);
}

async function installOne(
  runtime: RuntimeRecord,
  root: string,
  options: InstallOptions,
  progress: InstallProgress,
): Promise<InstallOutcome> {
  const id = runtime.name;
  const paths = runtimePaths(id, root);
  const started = Date.now();
  const upToDate = () => !options.force && matchesLockfile(paths.dir) && existsSync(paths.node);
  const outcome = (status: InstallOutcome['status']): InstallOutcome => ({ id, status, ms: Date.now() - started });

  if (upToDate()) return outcome('up-to-date');
  return withInstallLock(
    paths.dir,
    async () => {
      // Whoever held the lock may just have installed this very lockfile.
      if (upToDate()) return outcome('up-to-date');
      const packages = Object.keys(runtime.dependencies).length;
      progress.working(
        id,
        `installing Node.js ${runtime.nodeJsVersion} and ${packages} package${packages === 1 ? '' : 's'} (npm ci)`,
      );
      await npmCi(id, paths.dir, options);
      const reported = nodeVersion(paths.node);
      if (reported !== `v${runtime.nodeJsVersion}`) {
        throw new RuntimeInstallError(
          [id],
          `Installing runtime ${id} failed: npm ci succeeded, but ${paths.node} ` +
            `${reported ? `reports ${reported}` : 'does not run here'}, not v${runtime.nodeJsVersion}`,
        );
      }
      stampInstalled(paths.dir);
      return outcome('installed');
    },
    { onWait: () => progress.working(id, 'waiting for another install of it to finish') },
  );
}

const NPM_ARGS = ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'];
/** Lines of npm's output an error quotes: npm puts the cause first (code, reason, the offending package). */
const SUMMARY_LINES = 15;

function npmCi(id: string, dir: string, options: InstallOptions): Promise<void> {
  const npm = options.npm ?? 'npm';
  return new Promise((resolve, reject) => {
    const child = spawn(npm, NPM_ARGS, { cwd: dir, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      if (output.length < 64_000) output += chunk.toString();
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'ENOENT' ? `${npm} was not found on PATH (it comes with Node.js)` : error.message;
      reject(new RuntimeInstallError([id], `Installing runtime ${id} failed: ${reason}`, { cause: error }));
    });
    child.once('close', (code, signal) => {
      if (code === 0) return resolve();
      const lines = npmSummary(output);
      const said = lines.length > 0 ? `; npm said:\n${lines.map((line) => `  ${line}`).join('\n')}` : '';
      reject(new RuntimeInstallError([id], `Installing runtime ${id} failed: npm ci in ${dir} exited with ${signal ?? `code ${code}`}${said}`));
    });
  });
}

/**
 * The part of npm's output worth reading: its error lines up to the usage text
 * it appends to some errors, without stack frames or blank lines, and the line
 * naming its debug log, which holds the rest.
 */
function npmSummary(output: string): string[] {
  const lines: string[] = [];
  for (const line of output.split('\n').map((text) => text.trimEnd())) {
    if (/^npm error Usage:/.test(line)) break;
    if (line === '' || line === 'npm error' || /^npm error\s+at /.test(line)) continue;
    lines.push(line);
  }
  if (lines.length <= SUMMARY_LINES) return lines;
  const log = output.split('\n').find((line) => line.includes('A complete log of this run can be found in'));
  return [...lines.slice(0, SUMMARY_LINES), '…', ...(log ? [log.trimEnd()] : [])];
}
