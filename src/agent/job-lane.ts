import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { Job } from '../protocol/agent-api.js';

export type JobHandler = (job: Job) => Promise<void>;

/**
 * The uptime lane: claimed jobs wait in a BullMQ queue of this agent's own and
 * run in-process, many at once. One queue per agent keeps agents that share an
 * external Redis from running each other's leases.
 */
export class UptimeLane {
  readonly #queue: Queue<{ job: Job }>;
  readonly #worker: Worker<{ job: Job }>;

  constructor(
    connection: ConnectionOptions,
    agentId: string,
    concurrency: number,
    handler: JobHandler,
    onError: (error: Error) => void,
  ) {
    const name = `uptime-${agentId}`;
    const prefix = 'outpost';
    this.#queue = new Queue(name, { connection, prefix });
    this.#worker = new Worker(name, async (bullJob) => handler(bullJob.data.job), {
      connection,
      prefix,
      concurrency,
      // A job is executed at most once by this lane; the service's lease, not a
      // BullMQ lock, decides when lost work is offered again, so the lane spares
      // Redis the lock renewals and stalled-job scans.
      maxStalledCount: 0,
      skipLockRenewal: true,
      skipStalledCheck: true,
      // Without renewal the first lock must outlast the longest uptime job (35 s).
      lockDuration: 10 * 60_000,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    });
    // Job outcomes are reported to the service by the handler; these are Redis troubles.
    this.#worker.on('error', onError);
    this.#queue.on('error', onError);
  }

  async waitUntilReady(): Promise<void> {
    await Promise.all([this.#queue.waitUntilReady(), this.#worker.waitUntilReady()]);
  }

  async add(jobs: readonly Job[]): Promise<void> {
    await this.#queue.addBulk(
      jobs.map((job) => ({
        name: job.checkType,
        data: { job },
        opts: { jobId: `${job.jobId}-${job.attempt}`, attempts: 1, removeOnComplete: true, removeOnFail: true },
      })),
    );
  }

  /** Stops taking jobs from the queue; running ones go on. */
  async pause(): Promise<void> {
    await this.#worker.pause(true);
  }

  /** Takes every job that has not started out of the queue and returns it. */
  async drainWaiting(): Promise<Job[]> {
    const waiting = await this.#queue.getJobs(['waiting', 'prioritized', 'delayed']);
    const taken: Job[] = [];
    for (const bullJob of waiting) {
      try {
        await bullJob.remove();
        taken.push(bullJob.data.job);
      } catch {
        // Started in the meantime: it runs to the end like the others.
      }
    }
    return taken;
  }

  async close(): Promise<void> {
    await this.#worker.close(true);
    await this.#queue.obliterate({ force: true }).catch(() => undefined);
    await this.#queue.close();
  }
}
