import { ConflictError, ServiceUnreachableError } from '../errors/index.js';
import type { OutageLog } from '../outage-log.js';
import { MAX_JOBS_PER_CALL } from '../protocol/agent-api.js';
import { sleep } from './backoff.js';
import type { JobSupervisor } from './job-supervisor.js';
import type { Readiness } from './readiness.js';
import type { ServiceClient } from './service-client.js';

export interface LeaseKeeperOptions {
  client: ServiceClient;
  agentId: string;
  supervisor: JobSupervisor;
  /** The lease length the service said in hello; beats go at a third of it. */
  leaseMs: () => number;
  /** Jobs the service says are no longer this agent's. */
  /** Jobs the service took back; `cancelled` are those a user cancelled. */
  onLost: (jobIds: string[], cancelled: ReadonlySet<string>) => void;
  outage: OutageLog;
  /** A heartbeat the service does not answer makes the agent not ready, as a failed claim does. */
  readiness: Readiness;
}

/**
 * One heartbeat for every job the agent holds, running or waiting, at a
 * third of the lease: leases can be short, so the jobs of an agent that died
 * go to another within one lease, and those that never started cost no
 * attempt. A beat the service misses is not a lost job: two more come before
 * the lease runs out.
 */
export class LeaseKeeper {
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(private readonly options: LeaseKeeperOptions) {}

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  /** One heartbeat now; never rejects. */
  async beat(signal?: AbortSignal): Promise<void> {
    const { client, agentId, supervisor, onLost, outage } = this.options;
    const { started, waiting } = supervisor.ids();
    for (let at = 0; at < Math.max(started.length, waiting.length); at += MAX_JOBS_PER_CALL) {
      try {
        const answer = await client.renewLeases(
          agentId,
          started.slice(at, at + MAX_JOBS_PER_CALL),
          waiting.slice(at, at + MAX_JOBS_PER_CALL),
          signal,
        );
        outage.recovered();
        // A busy agent may not claim for a while: its heartbeat is then what sees the service back.
        if (this.options.readiness.state === 'service-unreachable') this.options.readiness.set('ready', 'the service answers again');
        if (answer.lost.length > 0) onLost(answer.lost, new Set(answer.cancelled ?? []));
      } catch (error) {
        if (signal?.aborted) return;
        // The service forgot this agent (its database was reset): the poller says hello again.
        if (error instanceof ConflictError) return;
        outage.failed('lease heartbeat', error);
        if (error instanceof ServiceUnreachableError) this.options.readiness.set('service-unreachable', error.message);
        return;
      }
    }
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      await sleep(Math.max(1000, this.options.leaseMs() / 3), signal);
      if (!signal.aborted) await this.beat(signal);
    }
  }
}
