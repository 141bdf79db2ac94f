import type { Logger } from '../logging.js';
import type { Job } from '../protocol/agent-api.js';
import { laneOfJob } from '../protocol/api-settings.js';
import type { Lane } from '../protocol/lanes.js';
import type { AgentConfig } from './config.js';
import type { JobLaneOptions } from './job-lane.js';
import type { JobHandler, JobQueue } from './job-queue.js';
import { MemoryJobQueue } from './memory-job-queue.js';
import type { AgentMetrics } from './metrics.js';
import type { QueueRedis } from './queue-redis.js';

/**
 * Whether a lane's jobs wait in Redis (BullMQ) rather than in memory: script
 * jobs in a full agent (an uptime agent claims none), uptime jobs with
 * UPTIME_QUEUE=redis. An agent needs Redis when either lane does.
 */
export function laneInRedis(lane: Lane, config: Pick<AgentConfig, 'mode' | 'uptimeQueue'>): boolean {
  return lane === 'script' ? config.mode === 'full' : config.uptimeQueue === 'redis';
}

export interface JobLanesOptions extends Pick<AgentConfig, 'mode' | 'uptimeQueue'> {
  agentId: string;
  uptimeConcurrency: number;
  scriptConcurrency: number;
  /** The BullMQ lanes' Redis; there when a lane is in Redis (laneInRedis). */
  redis: QueueRedis | undefined;
  logger: Logger;
  metrics: AgentMetrics;
  run: JobHandler;
  /** A BullMQ lane's trouble with Redis. */
  onQueueError: (error: Error) => void;
}

/** The agent's two lanes as one queue, each job routed to its own by check type. */
export interface JobLanes extends JobQueue {
  /** Whether the lane's jobs wait in Redis: while it is away they are not claimed, and those waiting are given back. */
  inRedis(lane: Lane): boolean;
}

export async function createJobLanes(options: JobLanesOptions): Promise<JobLanes> {
  const { redis, logger, metrics, run } = options;
  // Loaded only when a lane is in Redis: an uptime agent never loads BullMQ.
  const bullmq = redis && (await import('./job-lane.js'));
  // A handler that throws is a defect of the agent's; the job's lease brings it back elsewhere.
  const onJobError = (error: Error, job: Job) =>
    logger.error({ jobId: job.jobId, err: error }, 'a job failed inside the agent; it is offered again when its lease ends');
  const inRedis = (lane: Lane) => laneInRedis(lane, options);
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
