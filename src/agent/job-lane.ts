import { Queue, Worker, type ConnectionOptions, type Job as QueueEntry, type JobJson } from 'bullmq';
import type { Logger } from '../logging.js';
import type { Job } from '../protocol/agent-api.js';
import { entryId, type JobHandler, type JobQueue } from './job-queue.js';

/**
 * Why an entry found in a lane's queue was not taken as it stood:
 * - `not_held`: its id is not one this lane added and still holds (an entry
 *   someone else put there, a duplicate, one already run or drained); dropped.
 * - `unexpected_data`: its id is one this lane holds, but its data is not the
 *   pointer the lane wrote (a payload, other fields, not JSON); the data is
 *   ignored and the job this lane holds under that id runs.
 * - `unreadable`: BullMQ could not read the entry at all; it is never run.
 */
export type RejectedEntryReason = 'not_held' | 'unexpected_data' | 'unreadable';

export interface JobLaneOptions {
  /** `uptime` or `script`; the queue is `<lane>-<agentId>`. */
  lane: string;
  agentId: string;
  concurrency: number;
  /** Where entries found in the queue that this lane did not put there are reported (WARN, by id only). */
  logger: Logger;
  /** Counts each such entry. */
  onRejected?: (reason: RejectedEntryReason) => void;
}

/**
 * All a queue entry holds: which claimed job, and which attempt of it. The
 * entry's BullMQ id is `<jobId>-<attempt>`, the key of the payload this lane
 * holds in memory.
 */
interface Pointer {
  jobId: string;
  attempt: number;
}

const REJECTED: Record<RejectedEntryReason, string> = {
  not_held: 'dropped an entry in the <lane> job queue that this agent did not add or no longer holds; it was not run',
  unexpected_data:
    'an entry in the <lane> job queue carried data this agent did not put there; ' +
    'the data was ignored, and the job this agent claimed under that id runs',
  unreadable: 'dropped an entry in the <lane> job queue that could not be read; it was not run',
};

/** WARN lines about rejected entries per lane and minute; past that they go to DEBUG (the counter counts them all). */
const WARNINGS_PER_MINUTE = 20;
/** The most of an entry id a log line quotes: ids of entries someone else added can be anything. */
const ID_CHARS = 120;

/**
 * Reads an entry whose data is not JSON as one without data, so that the
 * lane sees it (and rejects it by id) instead of BullMQ failing on it with an
 * error that quotes the data.
 */
class LaneWorker extends Worker<unknown> {
  protected override createJob(json: JobJson, jobId: string): QueueEntry<unknown> {
    try {
      return super.createJob(json, jobId);
    } catch {
      return super.createJob({ ...json, data: 'null' }, jobId);
    }
  }
}

/**
 * A lane on BullMQ (script jobs; uptime jobs with UPTIME_QUEUE=redis): claimed jobs wait in a BullMQ queue of this agent's own and run
 * in-process, as many at once as the lane's concurrency. One queue per agent
 * keeps agents that share an external Redis from running each other's leases.
 *
 * Redis is not trusted with jobs. Whoever reaches it (a shared Redis on the
 * network, or a check script that finds the agent's) could read payloads
 * there (script jobs carry the check's variables, secrets included) or add
 * entries of its own for the lane to run with the operator's
 * SERVICE_SECRET_* values. So a queue entry is only a pointer (job id and
 * attempt), every payload stays in this process, and an entry runs only when
 * its id is one this lane added and still holds, with the payload held under
 * that id whatever the entry carries; anything else is dropped, counted and
 * logged by id, never by content. Nothing is lost by keeping payloads here:
 * the queue's name embeds this process's random agentId, so a payload in
 * Redis was never read by the agent after a restart anyway.
 */
export class JobLane implements JobQueue {
  readonly #queue: Queue<Pointer>;
  readonly #worker: LaneWorker;
  /** Claimed jobs not yet started, by entry id. */
  readonly #held = new Map<string, Job>();
  /** Entries of jobs let go whose removal Redis has not confirmed: met again, they are dropped quietly. */
  readonly #forgotten = new Set<string>();
  readonly #lane: string;
  readonly #logger: Logger;
  readonly #onRejected: (reason: RejectedEntryReason) => void;
  #warnedInWindow = 0;
  #windowStart = 0;

  constructor(
    connection: ConnectionOptions,
    options: JobLaneOptions,
    handler: JobHandler,
    onError: (error: Error) => void,
  ) {
    const name = `${options.lane}-${options.agentId}`;
    const prefix = 'outpost';
    const concurrency = options.concurrency;
    this.#lane = options.lane;
    this.#logger = options.logger;
    this.#onRejected = options.onRejected ?? (() => undefined);
    this.#queue = new Queue(name, { connection, prefix });
    this.#worker = new LaneWorker(name, async (entry) => {
      const job = this.#take(entry.id, entry.data);
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
    const report = (error: Error) => {
      // BullMQ could not parse an entry (its options): the error would quote
      // what someone else wrote into the queue. The entry stays unrun.
      if (error instanceof SyntaxError) {
        this.#reject(undefined, 'unreadable');
        return;
      }
      onError(error);
    };
    this.#worker.on('error', report);
    this.#queue.on('error', report);
  }

  async waitUntilReady(): Promise<void> {
    await Promise.all([this.#queue.waitUntilReady(), this.#worker.waitUntilReady()]);
  }

  async add(jobs: readonly Job[]): Promise<void> {
    if (jobs.length === 0) return;
    // Held before the entries exist: the worker may take one before addBulk returns.
    for (const job of jobs) this.#held.set(entryId(job), job);
    await this.#queue.addBulk(
      jobs.map((job) => ({
        name: job.checkType,
        data: { jobId: job.jobId, attempt: job.attempt },
        opts: { jobId: entryId(job), attempts: 1, removeOnComplete: true, removeOnFail: true },
      })),
    );
  }

  /** Stops taking jobs from the queue; running ones go on. */
  async pause(): Promise<void> {
    await this.#worker.pause(true);
  }

  /**
   * Lets go of jobs that will not run here (released, or taken back by the
   * service): their payloads are dropped at once, their entries removed as far
   * as Redis answers. An entry left behind is dropped when the worker meets it.
   */
  async forget(jobs: readonly Job[]): Promise<void> {
    const ids = jobs.map(entryId).filter((id) => this.#held.delete(id));
    for (const id of ids) this.#forgotten.add(id);
    await this.#removeForgotten();
  }

  async #removeForgotten(): Promise<void> {
    await Promise.all(
      [...this.#forgotten].map(async (id) => {
        try {
          await this.#queue.remove(id);
          this.#forgotten.delete(id);
        } catch {
          // Redis is away: tried again when it is back (reconcile).
        }
      }),
    );
  }

  /**
   * After Redis came back: every job given that has no entry any more (a Redis
   * that keeps nothing lost it) gets its entry again. Answers how many.
   */
  async reconcile(waiting: readonly Job[]): Promise<number> {
    await this.#removeForgotten();
    const states = await Promise.all(waiting.map((job) => this.#queue.getJobState(entryId(job))));
    const missing = waiting.filter((_, index) => states[index] === 'unknown');
    await this.add(missing);
    return missing.length;
  }

  /** The job held under an entry's id, once; the entry's data is only checked, never used. */
  #take(id: string | undefined, data: unknown): Job | undefined {
    if (id !== undefined && this.#forgotten.delete(id)) return undefined;
    const job = id === undefined ? undefined : this.#held.get(id);
    if (id === undefined || !job) {
      this.#reject(id, 'not_held');
      return undefined;
    }
    this.#held.delete(id);
    if (!pointsTo(data, job)) this.#reject(id, 'unexpected_data');
    return job;
  }

  #reject(id: string | undefined, reason: RejectedEntryReason): void {
    this.#onRejected(reason);
    const now = Date.now();
    if (now - this.#windowStart >= 60_000) {
      this.#windowStart = now;
      this.#warnedInWindow = 0;
    }
    this.#warnedInWindow += 1;
    const fields = { lane: this.#lane, entryId: id === undefined ? undefined : printable(id), reason };
    const message = `${REJECTED[reason].replace('<lane>', this.#lane)} (is something else writing to the agent's Redis?)`;
    if (this.#warnedInWindow < WARNINGS_PER_MINUTE) this.#logger.warn(fields, message);
    else if (this.#warnedInWindow === WARNINGS_PER_MINUTE) {
      this.#logger.warn(fields, `${message}; more like it this minute are logged at DEBUG, and all are counted`);
    } else this.#logger.debug(fields, message);
  }

  async close(): Promise<void> {
    await this.#worker.close(true);
    await this.#queue.obliterate({ force: true }).catch(() => undefined);
    await this.#queue.close();
    this.#held.clear();
  }
}

/** Whether an entry's data is exactly the pointer this lane wrote for `job`. */
function pointsTo(data: unknown, job: Job): boolean {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return false;
  const fields = data as Record<string, unknown>;
  return Object.keys(fields).length === 2 && fields.jobId === job.jobId && fields.attempt === job.attempt;
}

/** An id someone else chose, fit for a log line: printable ASCII, and not too long. */
function printable(id: string): string {
  const clean = id.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > ID_CHARS ? `${clean.slice(0, ID_CHARS)}…` : clean;
}
