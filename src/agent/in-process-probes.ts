import type { Job, Result } from '../protocol/agent-api.js';
import type { CheckType } from '../protocol/enums.js';
import { executeJob } from './execute.js';
import { ProbePacer } from './probe-pacer.js';
import type { ProbeThreadData } from './probe-threads/messages.js';
import { ProbeRegistry } from './probes/registry.js';
import type { UptimeRunner } from './uptime-runner.js';

/** UPTIME_THREADS=0: the probes run on the main thread, beside the queue and the service calls. */
export class InProcessProbes implements UptimeRunner {
  readonly #probes: ProbeRegistry;
  readonly #agentId: string;
  readonly #pacer = new ProbePacer();

  constructor(data: ProbeThreadData) {
    this.#probes = new ProbeRegistry(data.probes);
    this.#agentId = data.agentId;
  }

  async start(): Promise<void> {}

  checkTypes(): CheckType[] {
    return this.#probes.checkTypes();
  }

  run(job: Job, signal: AbortSignal): Promise<Result> {
    return new Promise((resolve) => this.#pacer.later(() => resolve(executeJob(this.#probes, job, this.#agentId, signal))));
  }

  async close(): Promise<void> {}
}
