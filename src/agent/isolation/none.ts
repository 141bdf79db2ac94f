/**
 * No isolation: the job runs as the agent's own user, confined only by
 * Node.js's permission model and its limits. A script can then read the
 * agent's key from /proc, so script jobs are refused unless the operator
 * opted in with SANDBOX_ALLOW_UNSAFE_NO_ISOLATION=true.
 */
import { ScriptIsolationError } from '../../errors/index.js';
import { allProcesses, killAll, listProcesses } from '../sandbox/process-tree.js';
import { spawnChild, type SandboxProcess } from '../sandbox/sandbox-process.js';
import { limitArgs, PRLIMIT, type ConfinedCommand, type Confinement, type IsolationBackend, type JobLimits } from './isolation.js';

export class NoIsolation implements IsolationBackend {
  readonly kind = 'none';
  readonly description: string;
  readonly refusal: ScriptIsolationError | undefined;

  constructor(
    private readonly limits: JobLimits,
    /** SANDBOX_ALLOW_UNSAFE_NO_ISOLATION: run scripts anyway. */
    private readonly allowed: boolean,
    /** Why nothing stronger could be had, for the refusal and the log. */
    private readonly why: string,
  ) {
    this.description = allowed
      ? `script jobs run as the agent's own user and can read its key (SANDBOX_ALLOW_UNSAFE_NO_ISOLATION=true; ${why})`
      : `script jobs are refused: ${why}`;
    this.refusal = allowed
      ? undefined
      : new ScriptIsolationError(
          `This agent runs no script checks: ${why}. See the security guide for the settings namespaces need, ` +
            'or set SANDBOX_ALLOW_UNSAFE_NO_ISOLATION=true to run scripts unisolated',
        );
  }

  async confine(): Promise<Confinement> {
    if (this.refusal) throw this.refusal;
    // RLIMIT_NPROC counts every thread of the user, the agent's own included: the job gets its share on top.
    const uid = process.getuid?.() ?? -1;
    const own = (await allProcesses()).filter((info) => info.uid === uid).reduce((total, info) => total + info.threads, 0);
    const limits = { ...this.limits, processes: this.limits.processes + own };
    return {
      owner: null,
      spawn(command: ConfinedCommand): SandboxProcess {
        const started = spawnChild(PRLIMIT, [...limitArgs(limits), command.command, ...command.args], { cwd: command.cwd, env: command.env });
        const pid = started.child.pid;
        const selector = pid ? { pgid: pid, root: pid } : {};
        return {
          ...started,
          processes: () => listProcesses(selector),
          held: async () => ({ memory: 0, disk: 0 }),
          kill: () => killAll(selector),
        };
      },
      release: async () => undefined,
    };
  }
}
