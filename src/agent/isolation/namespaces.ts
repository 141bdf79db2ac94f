/**
 * The namespaces backend: each job in PID, mount, IPC and UTS namespaces of
 * its own, made by bubblewrap in a user namespace of its own (no privilege
 * needed, nested user namespaces refused). The job sees the system's
 * programs and libraries read-only, a short list of /etc, its runtime (or
 * engine) and browser read-only, its own directories, a fresh /proc with its
 * processes only, and a private /tmp, /var/tmp and /dev/shm of bounded size
 * that count against its memory. Nothing of the agent is mounted: not its
 * files, its environment, its Redis socket or its processes.
 *
 * A root agent first drops to a fresh user id per job (as the users backend
 * does), so even the job's outer identity is its own. The job ends with its
 * namespace: killing the namespace's first process makes the kernel kill
 * everything in it.
 */
import { existsSync, lstatSync, readlinkSync, statfsSync } from 'node:fs';
import { listProcesses, processGone } from '../sandbox/process-tree.js';
import { spawnChild, type HeldBytes, type SandboxProcess } from '../sandbox/sandbox-process.js';
import {
  limitArgs,
  PRLIMIT,
  type ConfinedCommand,
  type Confinement,
  type IsolationBackend,
  type JobLimits,
  type SandboxUser,
  type SandboxView,
} from './isolation.js';
import { killUser } from './kill-as-user.js';
import type { UidPool } from './uid-pool.js';
import { dropTo } from './users.js';

export const BWRAP = '/usr/bin/bwrap';

/** The system directories a job runs from, read-only (or as the links they are on merged-/usr systems). */
const SYSTEM_DIRECTORIES = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt'];
/**
 * What of /etc a script, Node.js, npm and Chromium read: names, resolver,
 * certificates, fonts, time zone, libraries. Never the whole of /etc, which
 * may hold the machine's own credentials.
 */
const ETC_ENTRIES = [
  'passwd', 'group', 'hosts', 'host.conf', 'resolv.conf', 'nsswitch.conf', 'gai.conf', 'services', 'protocols',
  'ssl', 'ca-certificates', 'ca-certificates.conf', 'pki', 'crypto-policies', 'fonts', 'localtime', 'timezone',
  'alternatives', 'chromium', 'chromium.d', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'mime.types', 'os-release',
  'debian_version', 'npmrc',
];
const TEMP_MOUNTS = ['/tmp', '/var/tmp', '/dev/shm'];
/** bwrap's info arrives on this descriptor: the namespace's first process, seen from outside. */
const INFO_FD = 3;

function systemArgs(): string[] {
  const args: string[] = [];
  for (const directory of SYSTEM_DIRECTORIES) {
    let link: string | undefined;
    try {
      link = lstatSync(directory).isSymbolicLink() ? readlinkSync(directory) : undefined;
    } catch {
      continue; // not on this system
    }
    args.push(...(link ? ['--symlink', link, directory] : ['--ro-bind', directory, directory]));
  }
  for (const entry of ETC_ENTRIES) args.push('--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`);
  return args;
}

export function bwrapArgs(view: SandboxView, cwd: string, tempBytes: number): string[] {
  return [
    '--die-with-parent',
    '--new-session',
    '--unshare-user',
    '--disable-userns',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--hostname', 'sandbox',
    ...systemArgs(),
    '--proc', '/proc',
    '--dev', '/dev',
    '--dir', '/var',
    ...TEMP_MOUNTS.flatMap((path) => ['--size', String(tempBytes), '--tmpfs', path]),
    // After the temporary mounts: the job's own directories may live under /tmp on the agent's side.
    ...view.readable.filter((path) => existsSync(path)).flatMap((path) => ['--ro-bind', path, path]),
    ...view.writable.flatMap((path) => ['--bind', path, path]),
    '--chdir', cwd,
    '--info-fd', String(INFO_FD),
    '--',
  ];
}

export class NamespacesBackend implements IsolationBackend {
  readonly kind = 'namespaces';
  readonly description: string;
  readonly privateTemp = '/tmp';

  /** `uids` when the agent runs as root: each job then also gets a fresh user id outside its namespace. */
  constructor(
    private readonly uids: UidPool | undefined,
    private readonly limits: JobLimits,
  ) {
    this.description = `each script job runs in PID, mount and IPC namespaces of its own${uids ? ', as a fresh user id' : ''}`;
  }

  async confine(): Promise<Confinement> {
    const user = this.uids ? await this.uids.acquire() : null;
    const limits = this.limits;
    const spawned: NamespacedProcess[] = [];
    return {
      owner: user,
      spawn(command: ConfinedCommand): SandboxProcess {
        const process = new NamespacedProcess(command, user, limits);
        spawned.push(process);
        return process;
      },
      release: async () => {
        await Promise.all(spawned.map((process) => process.kill()));
        if (user) {
          await killUser(user.uid);
          await this.uids!.release(user);
        }
      },
    };
  }
}

class NamespacedProcess implements SandboxProcess {
  readonly child: SandboxProcess['child'];
  readonly exited: SandboxProcess['exited'];
  readonly hasExited: () => boolean;
  /** The namespace's first process as the agent sees it; undefined until bwrap says. */
  #init: number | undefined;
  readonly #info: Promise<void>;
  readonly #tempBytes: number;

  constructor(
    command: ConfinedCommand,
    private readonly user: SandboxUser | null,
    limits: JobLimits,
  ) {
    this.#tempBytes = limits.memoryBytes;
    // /tmp, /var/tmp and /dev/shm are memory: each may hold all of it, and the watch counts them together.
    const argv = [
      ...(user ? dropTo(user) : []),
      BWRAP,
      ...bwrapArgs(command.view, command.cwd, limits.memoryBytes),
      PRLIMIT,
      ...limitArgs(limits),
      command.command,
      ...command.args,
    ];
    const started = spawnChild(argv[0]!, argv.slice(1), { cwd: '/', env: command.env, extraPipe: true });
    this.child = started.child;
    this.exited = started.exited;
    this.hasExited = started.hasExited;
    const info = this.child.stdio[INFO_FD] as NodeJS.ReadableStream | null;
    this.#info = new Promise((resolve) => {
      if (!info) return resolve();
      let text = '';
      info.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      info.on('error', () => resolve());
      info.on('end', () => {
        try {
          const pid = (JSON.parse(text) as { 'child-pid'?: unknown })['child-pid'];
          if (typeof pid === 'number') this.#init = pid;
        } catch {
          // bwrap failed before it said anything: its exit says why
        }
        resolve();
      });
    });
  }

  async processes() {
    const pid = this.child.pid;
    return listProcesses({
      ...(pid ? { root: pid, pgid: pid } : {}),
      ...(this.user ? { uid: this.user.uid } : {}),
    }).then(async (found) => {
      // Once bwrap itself is gone the namespace's processes hang below its first one.
      if (this.#init === undefined || found.some((info) => info.pid === this.#init)) return found;
      const below = await listProcesses({ root: this.#init });
      return [...found, ...below.filter((info) => !found.some((other) => other.pid === info.pid))];
    });
  }

  async held(): Promise<HeldBytes> {
    if (this.#init === undefined) return { memory: 0, disk: 0 };
    let memory = 0;
    for (const path of TEMP_MOUNTS) {
      try {
        const stats = statfsSync(`/proc/${this.#init}/root${path}`);
        // bwrap says who its first process is before that process has mounted anything: until
        // then its root is the agent's, whose /tmp holds the whole machine's files, not the job's.
        if (!isOwnTemp(stats, this.#tempBytes)) continue;
        memory += (stats.blocks - stats.bfree) * stats.bsize;
      } catch {
        // the namespace is gone or going
      }
    }
    return { memory, disk: 0 };
  }

  async kill(): Promise<void> {
    const pid = this.child.pid;
    if (pid) signal(-pid);
    // Its first process dying takes the whole namespace with it; the kernel waits for all of it.
    await Promise.race([this.#info, new Promise((done) => setTimeout(done, 1000))]);
    const init = this.#init;
    if (init !== undefined) {
      signal(init);
      for (let round = 0; round < 200 && !(await processGone(init)); round += 1) {
        await new Promise((done) => setTimeout(done, 10));
      }
    }
    if (this.user) await killUser(this.user.uid);
  }
}

const TMPFS_MAGIC = 0x01021994;

/** Whether a mount is one of the job's own: a tmpfs no larger than the size bwrap was given. */
function isOwnTemp(stats: { type: number; blocks: number; bsize: number }, sizeBytes: number): boolean {
  return stats.type === TMPFS_MAGIC && stats.blocks * stats.bsize <= sizeBytes + stats.bsize;
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}
