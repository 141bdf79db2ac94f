/**
 * Who a sandbox runs as. When the agent may change user (root, as in the
 * image's entrypoint, or CAP_SETUID), each concurrent sandbox slot gets a user
 * id of its own that owns nothing else: the script then cannot read the
 * agent's /proc/<pid>/environ, its files or another job's directory, and
 * everything it started can be found and killed by that user id afterwards.
 */
import { existsSync } from 'node:fs';

export interface SandboxUser {
  uid: number;
  gid: number;
}

export interface SandboxIdentityOptions {
  /** First user id of the pool; slot n runs as base + n. */
  uidBase: number;
  slots: number;
  /** false forces running as the agent's own user (tests of the fallback). */
  isolate: boolean;
}

const SETPRIV = '/usr/bin/setpriv';
const PRLIMIT = '/usr/bin/prlimit';
/**
 * Processes one sandbox user may have at once. Counted per user id by the
 * kernel, so a fork bomb stops at this many instead of filling the host's
 * process table; Playwright with one worker and a browser needs a few dozen.
 */
export const SANDBOX_MAX_PROCESSES = 512;

export class SandboxIdentities {
  readonly #free: SandboxUser[] = [];
  readonly #waiting: ((user: SandboxUser | null) => void)[] = [];
  readonly isolated: boolean;

  constructor(options: SandboxIdentityOptions) {
    this.isolated = options.isolate && process.getuid?.() === 0 && existsSync(SETPRIV) && existsSync(PRLIMIT);
    if (this.isolated) {
      for (let slot = 0; slot < options.slots; slot += 1) {
        this.#free.push({ uid: options.uidBase + slot, gid: options.uidBase + slot });
      }
    }
  }

  /** Why a sandbox is weaker than it could be, for the start-up log; undefined when isolated. */
  get weakness(): string | undefined {
    if (this.isolated) return undefined;
    if (process.getuid?.() !== 0) {
      return 'the agent does not run as root, so scripts run as the agent\'s own user; Node.js permissions still confine them';
    }
    if (!existsSync(SETPRIV) || !existsSync(PRLIMIT)) {
      return `${SETPRIV} or ${PRLIMIT} (util-linux) is missing, so scripts run as the agent's own user`;
    }
    return 'sandbox user isolation is turned off';
  }

  /** A user for one job; null when not isolating. Waits when every slot is taken. */
  async acquire(): Promise<SandboxUser | null> {
    if (!this.isolated) return null;
    const user = this.#free.shift();
    if (user) return user;
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(user: SandboxUser | null): void {
    if (!user) return;
    const next = this.#waiting.shift();
    if (next) next(user);
    else this.#free.push(user);
  }

  /** The command prefix that drops to the user: a process limit, no groups, no capabilities, no setuid gains. */
  static wrap(user: SandboxUser, command: string, args: string[]): { command: string; args: string[] } {
    return {
      command: PRLIMIT,
      args: [
        `--nproc=${SANDBOX_MAX_PROCESSES}`,
        '--core=0',
        '--',
        SETPRIV,
        `--reuid=${user.uid}`,
        `--regid=${user.gid}`,
        '--clear-groups',
        '--no-new-privs',
        '--inh-caps=-all',
        '--bounding-set=-all',
        '--',
        command,
        ...args,
      ],
    };
  }
}
