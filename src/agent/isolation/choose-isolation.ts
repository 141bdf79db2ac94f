/**
 * Picks the isolation backend at start: the one the operator named, or the
 * strongest this machine allows, found by really starting a confined process
 * with each (a seccomp profile, an AppArmor rule or a sysctl may refuse
 * namespaces, and only trying tells).
 */
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../errors/index.js';
import { runSandboxed } from '../sandbox/sandbox-process.js';
import { ISOLATION_KINDS, PRLIMIT, SETPRIV, type IsolationBackend, type IsolationKind, type JobLimits } from './isolation.js';
import { BWRAP, NamespacesBackend } from './namespaces.js';
import { NoIsolation } from './none.js';
import { UidPool } from './uid-pool.js';
import { UsersBackend } from './users.js';

export interface IsolationSettings {
  /** SANDBOX_ISOLATION: `auto` for the strongest available. */
  mode: IsolationKind | 'auto';
  /** SANDBOX_ALLOW_UNSAFE_NO_ISOLATION */
  allowUnsafe: boolean;
  uidBase: number;
  uidCount: number;
  limits: JobLimits;
  /** Where the trial run gets its directory: the sandbox root. */
  directory: string;
}

export interface ChosenIsolation {
  backend: IsolationBackend;
  /** Why each stronger backend was not taken, for the start-up log. */
  refused: Partial<Record<IsolationKind, string>>;
}

const TRIAL_TIMEOUT_MS = 15_000;

export async function chooseIsolation(settings: IsolationSettings): Promise<ChosenIsolation> {
  const refused: ChosenIsolation['refused'] = {};
  const candidates = settings.mode === 'auto' ? ISOLATION_KINDS : [settings.mode];
  for (const kind of candidates) {
    if (kind === 'none') {
      const why = Object.entries(refused).map(([name, reason]) => `${name}: ${reason}`).join('; ') || 'SANDBOX_ISOLATION=none';
      return { backend: new NoIsolation(settings.limits, settings.allowUnsafe, why), refused };
    }
    const backend = make(kind, settings);
    const problem = typeof backend === 'string' ? backend : await trial(backend, settings.directory);
    if (problem === undefined) return { backend: backend as IsolationBackend, refused };
    refused[kind] = problem;
  }
  throw new ConfigError(`SANDBOX_ISOLATION=${settings.mode} cannot be used on this machine: ${Object.values(refused).join('; ')}`);
}

function make(kind: Exclude<IsolationKind, 'none'>, settings: IsolationSettings): IsolationBackend | string {
  const root = process.getuid?.() === 0;
  const uids = () => new UidPool(settings.uidBase, settings.uidCount);
  if (!existsSync(PRLIMIT)) return `${PRLIMIT} (util-linux) is missing`;
  if (kind === 'namespaces') {
    if (!existsSync(BWRAP)) return `${BWRAP} (bubblewrap) is missing`;
    if (root && !existsSync(SETPRIV)) return `${SETPRIV} (util-linux) is missing`;
    return new NamespacesBackend(root ? uids() : undefined, settings.limits);
  }
  if (!root) return 'the agent does not run as root, so it cannot give jobs users of their own';
  if (!existsSync(SETPRIV)) return `${SETPRIV} (util-linux) is missing`;
  return new UsersBackend(uids(), settings.limits);
}

/** Runs /bin/true through the backend; undefined when it ran, else what went wrong. */
async function trial(backend: IsolationBackend, directory: string): Promise<string | undefined> {
  const cwd = await mkdtemp(join(directory, 'trial-'));
  const confinement = await backend.confine();
  try {
    if (confinement.owner) await chown(cwd, confinement.owner.uid, confinement.owner.gid);
    const outcome = await runSandboxed(
      confinement.spawn({ command: '/bin/true', args: [], cwd, env: { PATH: '/usr/bin:/bin' }, view: { writable: [cwd], readable: [] } }),
      { timeoutMs: TRIAL_TIMEOUT_MS, memoryLimitBytes: Number.MAX_SAFE_INTEGER, outputLimitBytes: 4096 },
    );
    if (outcome.exitCode === 0) return undefined;
    const said = outcome.stderr.trim().split('\n').at(-1);
    return said || `a trial run exited with ${outcome.exitSignal ?? String(outcome.exitCode)}`;
  } finally {
    await confinement.release();
    await rm(cwd, { recursive: true, force: true });
  }
}
