/**
 * The agent's script side: every script job, whatever its kind, goes
 * through here. The harness gives the job a seat, a scrubber of its secrets
 * (the agent's own key among them), a ScriptJob with the isolation backend's
 * confinement, and hands it to the kind's JobRunner (runners.ts); whatever
 * happens, the job ends in one scrubbed result and leaves nothing behind.
 */
import type { Logger } from '../../logging.js';
import type { Job, Result } from '../../protocol/agent-api.js';
import type { CheckType } from '../../protocol/enums.js';
import type { ArtifactUploader } from '../artifact-uploader.js';
import type { IsolationBackend } from '../isolation/isolation.js';
import { prepareSandboxRoot } from '../multistep/job-directory.js';
import { resultFrame } from '../result-frame.js';
import { secretValues } from '../sandbox/sandbox-environment.js';
import { scrubAndUpload } from '../scrub-and-upload.js';
import type { JobRunner } from './job-runner.js';
import { errored, ScriptJob, type ScriptJobSettings } from './script-job.js';
import type { JobScrubber, ScrubberFactory } from './scrubbers.js';

export interface ScriptHarnessOptions {
  settings: ScriptJobSettings;
  isolation: IsolationBackend;
  runners: Partial<Record<CheckType, JobRunner>>;
  /** Jobs at once: JOB_CONCURRENCY. */
  seats: number;
  uploader: ArtifactUploader;
  scrubbers: ScrubberFactory;
  /** The agent's own key: never in anything a job reports, whatever the script does with it. */
  agentKey: string;
}

export class ScriptHarness {
  readonly #free: number[];
  readonly #waiting: ((seat: number) => void)[] = [];
  readonly #available = new Set<CheckType>();

  constructor(private readonly options: ScriptHarnessOptions) {
    this.#free = Array.from({ length: options.seats }, (_, seat) => seat);
  }

  get isolation(): IsolationBackend {
    return this.options.isolation;
  }

  /** Check types this agent offers: those whose runner could be set up. */
  get checkTypes(): CheckType[] {
    return [...this.#available];
  }

  get runtimes(): string[] {
    return this.#runners().flatMap(([, runner]) => runner.runtimes?.() ?? []);
  }

  get idleSandboxes(): number {
    return this.#runners().reduce((total, [, runner]) => total + (runner.idleSandboxes?.() ?? 0), 0);
  }

  async start(logger: Logger): Promise<void> {
    await prepareSandboxRoot(this.options.settings.sandboxRoot);
    for (const [checkType, runner] of this.#runners()) {
      if (await runner.start(logger)) this.#available.add(checkType);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.#runners().map(async ([, runner]) => runner.stop?.()));
  }

  #runners(): [CheckType, JobRunner][] {
    return Object.entries(this.options.runners).filter((entry): entry is [CheckType, JobRunner] => entry[1] !== undefined);
  }

  /** Never throws: a job that cannot run is a failed check with the reason, not a crashed lane. */
  async run(job: Job, agentId: string, signal: AbortSignal): Promise<Result> {
    const runner = this.options.runners[job.checkType];
    const startedAt = Date.now();
    let scrubber: JobScrubber;
    try {
      const secrets = [...secretValues(job, this.options.settings.serviceSecrets), this.options.agentKey];
      scrubber = this.options.scrubbers(secrets, { sensitiveHeaders: runner?.hidesSensitiveHeaders(job) ?? true });
    } catch (error) {
      // A secret the scrubber cannot take (over 128 KiB) could leak through anything the script
      // prints, so the script does not run. The message names no value.
      return errored(resultFrame(job, agentId, new Date()), error, 0, []);
    }
    if (this.options.isolation.refusal) {
      return scrubber.value(errored(resultFrame(job, agentId, new Date()), this.options.isolation.refusal, 0, []));
    }
    const seat = await this.#seat();
    const script = new ScriptJob(
      job,
      agentId,
      seat,
      signal,
      scrubber,
      this.options.settings,
      () => this.options.isolation.confine(),
      (root, artifact) =>
        scrubAndUpload(scrubber, this.options.uploader, { jobId: job.jobId, root, ...artifact }, signal),
    );
    try {
      if (!runner) throw new Error(`${job.checkType} is not a script check type`);
      // Once more over the whole result: whatever path a text took into it, no secret leaves.
      return scrubber.value(await runner.run(script));
    } catch (error) {
      return scrubber.value(script.errored(error, Date.now() - startedAt, []));
    } finally {
      await script.finish();
      this.#release(seat);
    }
  }

  async #seat(): Promise<number> {
    const seat = this.#free.shift();
    if (seat !== undefined) return seat;
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(seat: number): void {
    const next = this.#waiting.shift();
    if (next) next(seat);
    else this.#free.push(seat);
  }
}
