import type { Job } from '../protocol/agent-api.js';

export type JobHandler = (job: Job) => Promise<void>;

/** A job and its attempt, as a queue keys its entries: a later attempt of the same job is another entry. */
export function entryId(job: Job): string {
  return `${job.jobId}-${job.attempt}`;
}

/**
 * Where a lane's claimed jobs wait for a slot, and from where they run: as
 * many at once as the lane's concurrency, in the order they were added. The
 * job supervisor owns what each job is doing; a queue only holds the order
 * and starts the handler.
 */
export interface JobQueue {
  waitUntilReady(): Promise<void>;
  add(jobs: readonly Job[]): Promise<void>;
  /** Stops starting jobs; running ones go on. */
  pause(): Promise<void>;
  /** Lets go of jobs that will not run here (released, or taken back by the service). */
  forget(jobs: readonly Job[]): Promise<void>;
  /** After the queue's store came back: adds again what it lost of `waiting`; answers how many. */
  reconcile(waiting: readonly Job[]): Promise<number>;
  close(): Promise<void>;
}
