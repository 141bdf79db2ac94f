import type { Job, Result } from '../protocol/agent-api.js';
import type { CheckType } from '../protocol/enums.js';
import { executeJob } from './execute.js';
import { ProbeThreads } from './probe-threads/probe-threads.js';
import type { ProbeThreadData } from './probe-threads/messages.js';
import { ProbeRegistry } from './probes/registry.js';

/** Where the uptime lane's probes run. */
export interface UptimeRunner {
  start(): Promise<void>;
  /** The check types it runs, for the hello handshake; known once start() resolved. */
  checkTypes(): CheckType[];
  /** Never rejects: a failure is in the result. */
  run(job: Job, signal: AbortSignal): Promise<Result>;
  close(): Promise<void>;
}

/**
 * UPTIME_THREADS: probes on that many worker threads of their own (timings
 * not delayed by the queue's and the service calls' work), or 0: on the main
 * thread, which saves the memory of a second V8 heap (docs/performance.md).
 */
export function createUptimeRunner(
  threads: number,
  data: ProbeThreadData,
  onThreadLost: (error: Error) => void,
): UptimeRunner {
  return threads > 0 ? new ProbeThreads(threads, data, onThreadLost) : new InProcessProbes(data);
}

class InProcessProbes implements UptimeRunner {
  readonly #probes: ProbeRegistry;
  readonly #agentId: string;

  constructor(data: ProbeThreadData) {
    this.#probes = new ProbeRegistry(data.probes);
    this.#agentId = data.agentId;
  }

  async start(): Promise<void> {}

  checkTypes(): CheckType[] {
    return this.#probes.checkTypes();
  }

  run(job: Job, signal: AbortSignal): Promise<Result> {
    return executeJob(this.#probes, job, this.#agentId, signal);
  }

  async close(): Promise<void> {}
}
