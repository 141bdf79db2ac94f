/**
 * The agent's script side: which runtimes it can run, a sandbox user per
 * concurrent job, a scrubber per job built from that job's secrets, and the
 * uploader for what the script leaves behind.
 */
import { existsSync } from 'node:fs';
import { RuntimeMissingError } from '../errors/index.js';
import type { Logger } from '../logging.js';
import type { Job, Result } from '../protocol/agent-api.js';
import { installedRuntimes, runtimePaths } from '../runtimes/installed.js';
import type { ArtifactUploader } from './artifact-uploader.js';
import type { AgentConfig } from './config.js';
import { prepareSandboxRoot } from './multistep/job-directory.js';
import { errored, runMultiStep, type InstalledRuntime, type ResultScrubber } from './multistep/multistep-runner.js';
import { resultFrame } from './result-frame.js';
import { scrubAndUpload } from './scrub-and-upload.js';
import { secretValues, serviceSecrets } from './sandbox/sandbox-environment.js';
import { SandboxIdentities } from './sandbox/sandbox-user.js';
import type { WarmPool } from './sandbox/warm-pool.js';
import { createWarmPool } from './multistep/warm-sandbox.js';

export interface JobScrubber extends ResultScrubber {
  /** Writes a scrubbed copy of a file; zips (traces) entry by entry. */
  file(input: string, output: string, contentType: string): Promise<void>;
}

export type ScrubberFactory = (secrets: string[], options: { sensitiveHeaders: boolean }) => JobScrubber;

/** Runtimes from 2025.04 on also hide Authorization, cookie and API-key headers in traces. */
const SENSITIVE_HEADERS_FROM = '2025.04';
/** An idle warm sandbox is replaced after this long, so none sits for hours on what it loaded. */
const WARM_MAX_AGE_MS = 5 * 60_000;

export class ScriptJobs {
  readonly runtimes: ReadonlyMap<string, InstalledRuntime>;
  readonly #identities: SandboxIdentities;
  readonly #secrets: Record<string, string>;
  #warm: WarmPool<InstalledRuntime> | undefined;

  constructor(
    private readonly config: AgentConfig['sandbox'],
    concurrency: number,
    private readonly uploader: ArtifactUploader,
    private readonly scrubbers: ScrubberFactory,
    private readonly agentEnv: NodeJS.ProcessEnv,
  ) {
    this.runtimes = new Map(
      installedRuntimes().map((record) => {
        const paths = runtimePaths(record.name);
        return [record.name, { id: record.name, nodeJsVersion: record.nodeJsVersion, directory: paths.dir, node: paths.node, playwrightCli: paths.playwrightCli }];
      }),
    );
    this.#identities = new SandboxIdentities({ uidBase: config.uidBase, slots: concurrency, isolate: config.userIsolation });
    this.#secrets = serviceSecrets(agentEnv);
  }

  async start(logger: Logger): Promise<void> {
    await prepareSandboxRoot(this.config.directory);
    const weakness = this.#identities.weakness;
    if (weakness) logger.warn(`script sandboxes are weaker than they could be: ${weakness}`);
    if (this.runtimes.size === 0) logger.warn('no runtime is installed: this agent takes no script jobs (outpost runtimes install)');
    else logger.info({ runtimes: [...this.runtimes.keys()] }, 'script runtimes installed');
    if (this.config.warm && this.runtimes.size > 0) {
      // Started by each slot's first job, not here: an agent that never gets a script job never pays for one.
      this.#warm = createWarmPool({
        sandboxRoot: this.config.directory,
        memoryLimitBytes: this.config.memoryLimitBytes,
        agentEnv: this.agentEnv,
        chromiumPath: () => this.#chromiumPath(),
        maxAgeMs: WARM_MAX_AGE_MS,
        onError: (error) => logger.warn(`warm sandbox: ${error instanceof Error ? error.message : String(error)}`),
      });
    }
  }

  /** Warm sandboxes waiting for a job now. */
  get idleSandboxes(): number {
    return this.#warm?.idleCount ?? 0;
  }

  /** Kills the idle warm sandboxes; call once no script job runs any more. */
  async stop(): Promise<void> {
    await this.#warm?.stop();
  }

  #chromiumPath(): string | undefined {
    return existsSync(this.config.chromiumPath) ? this.config.chromiumPath : undefined;
  }

  /** Never throws: a job that cannot run is a failed check with the reason, not a crashed lane. */
  async run(job: Job, agentId: string, signal: AbortSignal): Promise<Result> {
    let scrubber: JobScrubber;
    try {
      scrubber = this.scrubbers(secretValues(job, this.#secrets), {
        sensitiveHeaders: (job.runtimeId ?? '') >= SENSITIVE_HEADERS_FROM,
      });
    } catch (error) {
      // A secret the scrubber cannot take (over 128 KiB) could leak through anything the script
      // prints, so the script does not run. The message names no value.
      return errored(resultFrame(job, agentId, new Date()), error, 0, []);
    }
    const runtime = job.runtimeId ? this.runtimes.get(job.runtimeId) : undefined;
    if (!runtime) {
      return scrubber.value(missingRuntime(job, agentId, [...this.runtimes.keys()]));
    }
    try {
      return await runMultiStep(job, agentId, {
        runtime,
        identities: this.#identities,
        sandboxRoot: this.config.directory,
        memoryLimitBytes: this.config.memoryLimitBytes,
        serviceSecrets: this.#secrets,
        agentEnv: this.agentEnv,
        chromiumPath: this.#chromiumPath(),
        scrub: scrubber,
        upload: (uploadJob, name, contentType, path) =>
          scrubAndUpload(scrubber, this.uploader, { jobId: uploadJob.jobId, name, contentType, path }, signal),
        signal,
        ...(this.#warm ? { warm: this.#warm } : {}),
      });
    } catch (error) {
      return scrubber.value(errored(resultFrame(job, agentId, new Date()), error, 0, []));
    }
  }

}

function missingRuntime(job: Job, agentId: string, installed: string[]): Result {
  const error = new RuntimeMissingError(
    `Runtime ${job.runtimeId ?? '(none)'} is not installed on this agent (installed: ${installed.join(', ') || 'none'})`,
  );
  return errored(resultFrame(job, agentId, new Date()), error, 0, []);
}
