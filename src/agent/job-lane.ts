import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { Job } from '../protocol/agent-api.js';

export type JobHandler = (job: Job) => Promise<void>;

export interface JobLaneOptions {
  /** `uptime` or `script`; the queue is `<lane>-<agentId>`. */
  lane: string;
  agentId: string;
  concurrency: number;
  /**
   * Where a job's payload waits. Script jobs carry the check's variables,
   * secrets included, and those never go to Redis (which may be shared and
   * is readable by whoever reaches it): their queue entry is the job id, the
   * payload stays in this process.
   */
  payloads: 'redis' | 'memory';
}

interface Entry {
  job?: Job;
  jobId: string;
}

/**
 * A lane: claimed jobs wait in a BullMQ queue of this agent's own and run
 * in-process, as many at once as the lane's concurrency. One queue per agent
 * keeps agents that share an external Redis from running each other's leases.
 */
export class JobLane {
  readonly #queue: Queue<Entry>;
  readonly #worker: Worker<Entry>;
  readonly #held = new Map<string, Job>();
  readonly #payloads: JobLaneOptions['payloads'];

  constructor(
    connection: ConnectionOptions,
    options: JobLaneOptions,
    handler: JobHandler,
    onError: (error: Error) => void,
  ) {
    const name = `${options.lane}-${options.agentId}`;
    const prefix = 'outpost';
    const concurrency = options.concurrency;
    this.#payloads = options.payloads;
    this.#queue = new Queue(name, { connection, prefix });
    this.#worker = new Worker(name, async (bullJob) => {
      const job = this.#take(bullJob.data);
      if (job) await handler(job);
    }, {
      connection,
      prefix,
      concurrency,
      // A job is executed at most once by this lane; the service's lease, not a
      // BullMQ lock, decides when lost work is offered again, so the lane spares
      // Redis the lock renewals and stalled-job scans.
      maxStalledCount: 0,
      skipLockRenewal: true,
      skipStalledCheck: true,
      // Without renewal the first lock must outlast the longest job (a 30-minute check suite).
      lockDuration: 40 * 60_000,
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
    if (jobs.length === 0) return;
    if (this.#payloads === 'memory') for (const job of jobs) this.#held.set(job.jobId, job);
    await this.#queue.addBulk(
      jobs.map((job) => ({
        name: job.checkType,
        data: this.#payloads === 'memory' ? { jobId: job.jobId } : { jobId: job.jobId, job },
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
        const job = this.#take(bullJob.data);
        if (job) taken.push(job);
      } catch {
        // Started in the meantime: it runs to the end like the others.
      }
    }
    return taken;
  }

  #take(entry: Entry): Job | undefined {
    const job = entry.job ?? this.#held.get(entry.jobId);
    this.#held.delete(entry.jobId);
    return job;
  }

  async close(): Promise<void> {
    await this.#worker.close(true);
    await this.#queue.obliterate({ force: true }).catch(() => undefined);
    await this.#queue.close();
  }
}
