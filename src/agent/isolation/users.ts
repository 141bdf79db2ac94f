/**
 * The users backend: where namespaces are refused but the agent runs as
 * root, each job runs as a fresh user id of its own (UidPool) that owns
 * nothing of the agent's, with no groups, capabilities or setuid gains, under
 * its limits; it is ended by kill(-1) as that user and what it left in the
 * shared temporary directories is counted and then removed.
 */
import { killAll, listProcesses } from '../sandbox/process-tree.js';
import { spawnChild, type SandboxProcess } from '../sandbox/sandbox-process.js';
import { limitArgs, PRLIMIT, SETPRIV, type ConfinedCommand, type Confinement, type IsolationBackend, type JobLimits, type SandboxUser } from './isolation.js';
import { killUser } from './kill-as-user.js';
import { removeUserTemp, userTempBytes } from './shared-temp.js';
import type { UidPool } from './uid-pool.js';

/** The command prefix that drops to the user: no groups, no capabilities, no setuid gains. */
export function dropTo(user: SandboxUser): string[] {
  return [
    SETPRIV,
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    '--clear-groups',
    '--no-new-privs',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
  ];
}

export class UsersBackend implements IsolationBackend {
  readonly kind = 'users';
  readonly description = 'each script job runs as a fresh user id of its own';

  constructor(
    private readonly uids: UidPool,
    private readonly limits: JobLimits,
  ) {}

  async confine(): Promise<Confinement> {
    const user = await this.uids.acquire();
    const limits = this.limits;
    return {
      owner: user,
      spawn(command: ConfinedCommand): SandboxProcess {
        const started = spawnChild(PRLIMIT, [...limitArgs(limits), ...dropTo(user), command.command, ...command.args], {
          cwd: command.cwd,
          env: command.env,
        });
        const pgid = started.child.pid;
        return {
          ...started,
          processes: () => listProcesses({ uid: user.uid, ...(pgid ? { pgid } : {}) }),
          held: () => userTempBytes(user.uid),
          kill: async () => {
            // The group first: prlimit and setpriv run as the agent until they exec the job's process.
            if (pgid) await killAll({ pgid }, 3);
            await killUser(user.uid);
          },
        };
      },
      release: async () => {
        await killUser(user.uid);
        await removeUserTemp(user.uid);
        await this.uids.release(user);
      },
    };
  }
}
