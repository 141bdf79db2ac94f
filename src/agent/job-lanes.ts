import type { Logger } from '../logging.js';
import type { Job } from '../protocol/agent-api.js';
import { laneOfJob } from '../protocol/api-settings.js';
import type { Lane } from '../protocol/lanes.js';
import type { JobLaneOptions } from './job-lane.js';
import type { JobHandler, JobQueue } from './job-queue.js';
import { MemoryJobQueue } from './memory-job-queue.js';
import type { AgentMetrics } from './metrics.js';
import type { QueueRedis } from './queue-redis.js';

export interface JobLanesOptions {
  agentId: string;
  uptimeConcurrency: number;
  scriptConcurrency: number;
  /** Where uptime jobs wait: in memory, or in BullMQ beside the script lane. */
  uptimeQueue: 'memory' | 'redis';
  /** The BullMQ lanes' Redis; without it (an uptime agent) every lane is in memory and no script job is ever claimed. */
  redis: QueueRedis | undefined;
  logger: Logger;
  metrics: AgentMetrics;
  run: JobHandler;
  /** A BullMQ lane's trouble with Redis. */
  onQueueError: (error: Error) => void;
}

/** The agent's two lanes, each job routed to its own by check type. */
export interface JobLanes {
  /** Whether the lane's jobs wait in Redis: while it is away they are not claimed, and those waiting are given back. */
  inRedis(lane: Lane): boolean;
  waitUntilReady(): Promise<void>;
  add(jobs: readonly Job[]): Promise<void>;
  pause(): Promise<void>;
  forget(jobs: readonly Job[]): Promise<void>;
  /** After Redis came back: answers how many of `waiting` were queued again. */
  reconcile(waiting: readonly Job[]): Promise<number>;
  close(): Promise<void>;
}

export async function createJobLanes(options: JobLanesOptions): Promise<JobLanes> {
  const { redis, logger, metrics, run } = options;
  // Loaded only when a lane is in Redis: an uptime agent never loads BullMQ.
  const bullmq = redis && (await import('./job-lane.js'));
  // A handler that throws is a defect of the agent's; the job's lease brings it back elsewhere.
  const onJobError = (error: Error, job: Job) =>
    logger.error({ jobId: job.jobId, err: error }, 'a job failed inside the agent; it is offered again when its lease ends');
  const inRedis = (lane: Lane) => redis !== undefined && (lane === 'script' || options.uptimeQueue === 'redis');
  const queue = (lane: Lane, concurrency: number): JobQueue => {
    if (!inRedis(lane)) return new MemoryJobQueue(concurrency, run, onJobError);
    const laneOptions: JobLaneOptions = {
      lane,
      agentId: options.agentId,
      concurrency,
      logger,
      onRejected: (reason) => metrics.queueEntriesRejected.inc({ lane, reason }),
    };
    return new bullmq!.JobLane(redis!.connection, laneOptions, run, options.onQueueError);
  };
  const lanes: Record<Lane, JobQueue> = {
    uptime: queue('uptime', options.uptimeConcurrency),
    script: queue('script', options.scriptConcurrency),
  };
  const both = <T>(act: (queue: JobQueue) => Promise<T>) => Promise.all([act(lanes.uptime), act(lanes.script)]);
  const each = <T>(jobs: readonly Job[], act: (queue: JobQueue, jobs: Job[]) => Promise<T>) =>
    Promise.all(
      (['uptime', 'script'] as const).map((lane) => {
        const mine = jobs.filter((job) => laneOfJob(job) === lane);
        return mine.length > 0 ? act(lanes[lane], mine) : Promise.resolve(undefined);
      }),
    );
  return {
    inRedis,
    waitUntilReady: async () => {
      await both((lane) => lane.waitUntilReady());
    },
    add: async (jobs) => {
      await each(jobs, (lane, mine) => lane.add(mine));
    },
    pause: async () => {
      await both((lane) => lane.pause());
    },
    forget: async (jobs) => {
      await each(jobs, (lane, mine) => lane.forget(mine));
    },
    reconcile: async (waiting) => {
      const counts = await each(waiting, (lane, mine) => lane.reconcile(mine));
      return counts.reduce<number>((sum, count) => sum + (count ?? 0), 0);
    },
    close: async () => {
      await both((lane) => lane.close());
    },
  };
}
