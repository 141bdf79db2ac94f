/**
 * The agent's Playwright suite side: the engines it installs on first use, a
 * sandbox user per concurrent suite, a scrubber per job from that job's
 * secrets, and the uploader for the report and what the tests attached.
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Logger } from '../../logging.js';
import type { Job, Result } from '../../protocol/agent-api.js';
import type { ArtifactUploader } from '../artifact-uploader.js';
import type { AgentConfig } from '../config.js';
import { prepareSandboxRoot } from '../multistep/job-directory.js';
import { scrubAndUpload } from '../scrub-and-upload.js';
import { secretValues, serviceSecrets } from '../sandbox/sandbox-environment.js';
import { SandboxIdentities } from '../sandbox/sandbox-user.js';
import type { ScrubberFactory } from '../script-jobs.js';
import type { ServiceClient } from '../service-client.js';
import { EngineCache } from './engines.js';
import { runPlaywrightSuite } from './suite-runner.js';

/**
 * Suites run as users after the multi-step slots (JOB_CONCURRENCY is at most
 * 10), so a suite and a multi-step job never share a user id, and killing one
 * job's processes by user id never touches the other's.
 */
export const SUITE_UID_OFFSET = 10;

export class PlaywrightSuites {
  /** Whether this agent can run suites: engines come from the npm registry, through npm. */
  readonly available: boolean;
  readonly #identities: SandboxIdentities;
  readonly #secrets: Record<string, string>;
  readonly #engines: EngineCache;

  constructor(
    private readonly config: AgentConfig['sandbox'],
    concurrency: number,
    private readonly client: Pick<ServiceClient, 'downloadCodeBundle'>,
    private readonly uploader: ArtifactUploader,
    private readonly scrubbers: ScrubberFactory,
    private readonly agentEnv: NodeJS.ProcessEnv,
  ) {
    this.#identities = new SandboxIdentities({
      uidBase: config.uidBase + SUITE_UID_OFFSET,
      slots: concurrency,
      isolate: config.userIsolation,
    });
    this.#secrets = serviceSecrets(agentEnv);
    this.#engines = new EngineCache(config.enginesDirectory, agentEnv);
    this.available = onPath('npm', agentEnv.PATH ?? process.env.PATH ?? '');
  }

  async start(logger: Logger): Promise<void> {
    await prepareSandboxRoot(this.config.directory);
    if (!this.available) logger.warn('npm is not on the PATH: this agent takes no Playwright check suites');
    else if (!existsSync(this.config.chromiumPath)) {
      logger.warn(`${this.config.chromiumPath} is missing: Playwright suites can run API tests only`);
    }
  }

  run(job: Job, agentId: string, signal: AbortSignal): Promise<Result> {
    // Playwright from 1.51 on records credential headers in traces: hide them too.
    const scrubber = this.scrubbers(secretValues(job, this.#secrets), { sensitiveHeaders: true });
    return runPlaywrightSuite(job, agentId, {
      engines: this.#engines,
      client: this.client,
      identities: this.#identities,
      sandboxRoot: this.config.directory,
      memoryLimitBytes: this.config.memoryLimitBytes,
      serviceSecrets: this.#secrets,
      agentEnv: this.agentEnv,
      chromiumPath: existsSync(this.config.chromiumPath) ? this.config.chromiumPath : undefined,
      dependencyCache: this.config.dependencyCache,
      scrub: scrubber,
      upload: (name, contentType, path) => scrubAndUpload(scrubber, this.uploader, { jobId: job.jobId, name, contentType, path }, signal),
      signal,
    });
  }
}

function onPath(command: string, path: string): boolean {
  return path.split(delimiter).some((directory) => directory !== '' && existsSync(join(directory, command)));
}
