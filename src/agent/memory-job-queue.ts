import type { Job } from '../protocol/agent-api.js';
import { entryId, type JobHandler, type JobQueue } from './job-queue.js';

/**
 * UPTIME_QUEUE=memory: claimed jobs wait in this process, in claim order.
 *
 * A lane's queue in Redis never held more than a pointer to a payload kept
 * in memory (job-lane.ts), under a name of this process's own, so it gave
 * no durability: a restarted agent never read it again. For probes that
 * take milliseconds, its Redis round trips and Lua scripts per job were most
 * of the agent's CPU per check (docs/performance.md); here adding and taking
 * a job are an array push and shift.
 */
export class MemoryJobQueue implements JobQueue {
  readonly #waiting: Job[] = [];
  /** Where the next job to start sits in #waiting: shifting an array of thousands per job would cost more than the job. */
  #head = 0;
  #running = 0;
  #paused = false;
  #closed = false;

  constructor(
    private readonly concurrency: number,
    private readonly handler: JobHandler,
    /** A handler that rejected: it is logged; the job's lease brings it back elsewhere. */
    private readonly onError: (error: Error, job: Job) => void,
  ) {}

  async waitUntilReady(): Promise<void> {}

  async add(jobs: readonly Job[]): Promise<void> {
    if (this.#closed) return;
    this.#waiting.push(...jobs);
    this.#startWhatFits();
  }

  async pause(): Promise<void> {
    this.#paused = true;
  }

  async forget(jobs: readonly Job[]): Promise<void> {
    if (jobs.length === 0) return;
    const gone = new Set(jobs.map(entryId));
    const kept = this.#waiting.slice(this.#head).filter((job) => !gone.has(entryId(job)));
    this.#waiting.length = 0;
    this.#waiting.push(...kept);
    this.#head = 0;
  }

  /** Nothing outside this process held the jobs, so nothing was lost. */
  async reconcile(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#paused = true;
    this.#waiting.length = 0;
    this.#head = 0;
  }

  /** How many have not started. */
  get size(): number {
    return this.#waiting.length - this.#head;
  }

  #startWhatFits(): void {
    while (!this.#paused && this.#running < this.concurrency && this.#head < this.#waiting.length) {
      const job = this.#waiting[this.#head]!;
      this.#head += 1;
      this.#run(job);
    }
    // Compacted once the taken part outweighs what waits: amortised constant time per job.
    if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
      this.#waiting.splice(0, this.#head);
      this.#head = 0;
    }
  }

  #run(job: Job): void {
    this.#running += 1;
    // A handler that throws before its first await is settled the same way as one that rejects.
    Promise.resolve()
      .then(() => this.handler(job))
      .catch((error: unknown) => this.onError(error instanceof Error ? error : new Error(String(error)), job))
      .finally(() => {
        this.#running -= 1;
        this.#startWhatFits();
      });
  }
}
