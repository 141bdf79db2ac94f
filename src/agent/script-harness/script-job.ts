/**
 * Everything a script job needs whatever its kind, written once: its
 * confinement (the isolation backend's), its directories under the sandbox
 * root, given to its user and removed at the end, its processes run under
 * the agent's limits, the reasons a run was stopped, its report read without
 * following the script's links, its artifacts copied out, scrubbed and
 * uploaded, its result scrubbed, and its errored result.
 */
import { chmod, lstat, mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { OutpostError, ScriptDiskError, ScriptError, ScriptMemoryError, ScriptTimeoutError } from '../../errors/index.js';
import type { ArtifactRef, Job, Result } from '../../protocol/agent-api.js';
import type { Confinement, JobLimits, SandboxView } from '../isolation/isolation.js';
import { resultFrame } from '../result-frame.js';
import { truncateLine } from '../sandbox/log-lines.js';
import { chownTree } from '../multistep/job-directory.js';
import { readContainedFile } from '../sandbox/contained-file.js';
import { removeTree } from '../sandbox/remove-tree.js';
import { sandboxEnvironment } from '../sandbox/sandbox-environment.js';
import { runSandboxed, superviseSandbox, type SandboxProcess, type SandboxRunOutcome } from '../sandbox/sandbox-process.js';
import type { ResultScrubber } from './scrubbers.js';

export interface ScriptJobSettings {
  sandboxRoot: string;
  limits: JobLimits;
  serviceSecrets: Record<string, string>;
  agentEnv: NodeJS.ProcessEnv;
  chromiumPath: string | undefined;
  dependencyCache: string | undefined;
  /** TMPDIR of every job: set when jobs have a /tmp of their own (namespaces); their directory otherwise. */
  privateTemp?: string;
}

export interface JobCommand {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  view: SandboxView;
  timeoutMs: number;
}

export interface Attachment {
  /** What the script called it; scrubbed and made safe before it is used as a name. */
  name: string;
  contentType: string;
  /** A path the script wrote, or wrote into its report: only a file of the job's own is taken. */
  path: string;
}

export type Uploader = (root: string, artifact: { name: string; contentType: string; path: string }) => Promise<ArtifactRef>;

const OUTPUT_LIMIT_BYTES = 1024 * 1024;
const REPORT_LIMIT_BYTES = 64 * 1024 * 1024;

export class ScriptJob {
  readonly startedAt = new Date();
  readonly #directories: string[] = [];
  #confinement: Confinement | undefined;

  constructor(
    readonly job: Job,
    readonly agentId: string,
    /** The job's seat, 0 to JOB_CONCURRENCY − 1: warm sandboxes wait per seat. */
    readonly seat: number,
    readonly signal: AbortSignal,
    readonly scrub: ResultScrubber,
    readonly settings: ScriptJobSettings,
    private readonly confine: () => Promise<Confinement>,
    private readonly uploader: Uploader,
  ) {}

  /** A result for the job with nothing found yet. */
  get base(): Result {
    return resultFrame(this.job, this.agentId, this.startedAt);
  }

  /** The job's confinement, made on first use: every process of the job runs in it. */
  async confinement(): Promise<Confinement> {
    this.#confinement ??= await this.confine();
    return this.#confinement;
  }

  /** Takes over a confinement made ahead (a warm sandbox's), which the job then owns and releases. */
  adopt(confinement: Confinement): void {
    if (this.#confinement) throw new Error('the job already has a confinement');
    this.#confinement = confinement;
  }

  /** A directory of the job's own under the sandbox root, readable by it alone, removed with the job. */
  async directory(prefix: string): Promise<string> {
    const root = await mkdtemp(join(this.settings.sandboxRoot, `${prefix}-`));
    this.#directories.push(root);
    await chmod(root, 0o700);
    return root;
  }

  /** Registers a directory made elsewhere (a warm sandbox's) to be removed with the job. */
  owns(root: string): void {
    this.#directories.push(root);
  }

  /** Hands a directory to the job's user; links are changed, never followed. */
  async giveToJob(root: string): Promise<void> {
    const owner = (await this.confinement()).owner;
    if (owner) await chownTree(root, owner);
  }

  /** The whole environment a process of the job sees: its variables, the secrets, nothing of the agent's. */
  environment(home: string, nodeBinDirectory: string): Record<string, string> {
    return sandboxEnvironment({
      job: this.job,
      serviceSecrets: this.settings.serviceSecrets,
      home,
      ...(this.settings.privateTemp ? { temp: this.settings.privateTemp } : {}),
      nodeBinDirectory,
      agentEnv: this.settings.agentEnv,
    });
  }

  /** Runs one process of the job to its end under the job's limits; everything it started is gone when this returns. */
  async run(command: JobCommand): Promise<SandboxRunOutcome> {
    const confinement = await this.confinement();
    const sandbox = confinement.spawn(command);
    return runSandboxed(sandbox, this.limits(command.timeoutMs, command.view));
  }

  /** Watches a process started ahead (a warm sandbox) from now, under the job's limits. */
  supervise(sandbox: SandboxProcess, timeoutMs: number, view: SandboxView): Promise<SandboxRunOutcome> {
    return superviseSandbox(sandbox, this.limits(timeoutMs, view));
  }

  private limits(timeoutMs: number, view: SandboxView) {
    return {
      timeoutMs,
      memoryLimitBytes: this.settings.limits.memoryBytes,
      diskLimitBytes: this.settings.limits.diskBytes,
      diskPaths: view.writable,
      outputLimitBytes: OUTPUT_LIMIT_BYTES,
      signal: this.signal,
    };
  }

  /** Why the agent ended a run, as the job's own error; undefined when the run ended by itself. */
  stoppedFor(outcome: SandboxRunOutcome, subject: string): OutpostError | 'cancelled' | undefined {
    const { limits } = this.settings;
    switch (outcome.killedFor) {
      case 'memory':
        return new ScriptMemoryError(`The ${subject} used more than ${Math.round(limits.memoryBytes / 1024 / 1024)} MB of memory and was stopped`);
      case 'disk':
        return new ScriptDiskError(`The ${subject} wrote more than ${Math.round(limits.diskBytes / 1024 / 1024)} MB to disk and was stopped`);
      case 'timeout':
        return new ScriptTimeoutError(`The ${subject} ran longer than ${this.job.timeoutSeconds} s and was stopped`);
      case 'cancelled':
        return 'cancelled';
      default:
        return undefined;
    }
  }

  /**
   * A report the job wrote: parsed when it is a regular file of the job's
   * own directory within the size limit; undefined when there is none.
   */
  async readReport<T>(path: string, root: string, parse: (text: string) => T): Promise<T | undefined> {
    const exists = await lstat(path).then(() => true, () => false);
    if (!exists) return undefined;
    let text: string;
    try {
      // Through a handle checked to be a regular file of the job's own: a link swapped in is never followed.
      text = (await readContainedFile(path, root, REPORT_LIMIT_BYTES)).toString('utf8');
    } catch (error) {
      throw new ScriptError(`the run's report was not read: ${(error as Error).message}`);
    }
    try {
      return parse(text);
    } catch (error) {
      if (error instanceof OutpostError) throw error;
      throw new ScriptError(`the run's report could not be read: ${(error as Error).message}`);
    }
  }

  /** Copies one file of the job out, scrubs and uploads it; never throws. */
  upload(root: string, artifact: { name: string; contentType: string; path: string }): Promise<ArtifactRef> {
    return this.uploader(root, artifact);
  }

  /** The job's result when it could not run to a verdict. */
  errored(error: unknown, durationMs: number, logs: Result['logs']): Result {
    const responseTime = Math.round(durationMs);
    if (error === 'cancelled') {
      return { ...errored(this.base, new ScriptError('The run was cancelled'), responseTime, logs), isCancelled: true, aborted: true };
    }
    return errored(this.base, error, responseTime, logs);
  }

  /** After the job: its processes and identity released, its directories removed. */
  async finish(): Promise<void> {
    await this.#confinement?.release();
    await Promise.all(this.#directories.map((root) => removeTree(root)));
  }
}

export function errored(base: Result, error: unknown, responseTime: number, logs: Result['logs']): Result {
  const described =
    error instanceof OutpostError ? error.toJSON() : { code: 'SCRIPT_ERROR', message: error instanceof Error ? error.message : String(error) };
  return {
    ...base,
    stoppedAt: new Date().toISOString(),
    responseTime,
    hasErrors: true,
    hasFailures: true,
    error: { code: described.code, message: truncateLine(described.message) },
    logs,
  };
}
