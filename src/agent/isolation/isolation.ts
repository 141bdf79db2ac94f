/**
 * How a script job is kept apart from the agent and from other jobs. Each
 * backend is one file; the agent picks the strongest one this machine allows
 * at start (choose-isolation.ts) and every script kind runs through it.
 *
 * - namespaces: the job in PID, mount, IPC and UTS namespaces of its own
 *   (bubblewrap), seeing read-only system directories, its runtime and its
 *   own directory, with a private /tmp and /dev/shm; killed with its namespace.
 * - users: a fresh user id per job, never reused while anything of it lives,
 *   ended by kill(-1) as that user; for a root agent where namespaces are refused.
 * - none: the agent's own user; script jobs are refused unless the operator
 *   opted in with SANDBOX_ALLOW_UNSAFE_NO_ISOLATION.
 */
import type { SandboxProcess } from '../sandbox/sandbox-process.js';

export type IsolationKind = 'namespaces' | 'users' | 'none';

/** Strongest first: the order the agent tries them in. */
export const ISOLATION_KINDS: readonly IsolationKind[] = ['namespaces', 'users', 'none'];

export interface SandboxUser {
  uid: number;
  gid: number;
}

/** What one job may use, whatever the backend. */
export interface JobLimits {
  /** Processes (threads included) the job may have at once. */
  processes: number;
  openFiles: number;
  /** Memory of all the job's processes (proportional shares, so shared pages count once), its private /tmp and /dev/shm included. */
  memoryBytes: number;
  /** Bytes the job may write to disk, its directory and anything it left in shared temporary directories. */
  diskBytes: number;
}

/** What a job's processes may see of the file system. */
export interface SandboxView {
  /** Its own directories: the job directory, a dependency cache of its own. */
  writable: string[];
  /** Read-only: the runtime or engine, the browser. */
  readable: string[];
}

export interface ConfinedCommand {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  view: SandboxView;
}

/** One job's confinement: made for the job, released when it is over. */
export interface Confinement {
  /** Who the job's files must belong to; null: the agent's own user. */
  readonly owner: SandboxUser | null;
  /** Starts one process of the job, confined and limited. */
  spawn(command: ConfinedCommand): SandboxProcess;
  /**
   * Once the job is over: kills whatever of it is left, removes what it left
   * in shared places and frees its identity. Resolves when nothing of the
   * job runs any more.
   */
  release(): Promise<void>;
}

export interface IsolationBackend {
  readonly kind: IsolationKind;
  /** One line for the start-up log and /health: what the backend does here. */
  readonly description: string;
  /** A temporary directory of the job's own at a short path, when the backend gives it one. */
  readonly privateTemp?: string;
  /** Set when the backend runs no script at all: every script job fails with it. */
  readonly refusal?: Error;
  /** A confinement for one job; waits while none can be had. */
  confine(): Promise<Confinement>;
}

/** The flags that drop whatever started the job to its limits; prlimit applies them to the process it runs. */
export function limitArgs(limits: JobLimits): string[] {
  return [
    `--nproc=${limits.processes}`,
    `--nofile=${limits.openFiles}`,
    // No single file may be larger than the whole disk budget; the watch counts the sum.
    `--fsize=${limits.diskBytes}`,
    '--core=0',
    '--',
  ];
}

export const PRLIMIT = '/usr/bin/prlimit';
export const SETPRIV = '/usr/bin/setpriv';
