import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobLane, type RejectedEntryReason } from '../../src/agent/job-lane.js';
import type { Job } from '../../src/protocol/agent-api.js';
import { eventually } from '../support/agent.js';
import { captureLogger } from '../support/logs.js';
import { startRedisServer, type TestRedis } from '../support/redis-server.js';

/** What a script that reaches the agent's Redis would like the agent to run, and must never see run. */
const INJECTED_SECRET = 'injected-payload-7f3a9c';
/** A value of a claimed job, which must never be written to Redis. */
const HELD_SECRET = 'held-secret-51b2e8';

let redis: TestRedis;
let connection: Redis;
const cleanup: (() => Promise<unknown> | void)[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
  connection = new Redis(redis.url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  connection?.disconnect();
  await redis?.stop();
});
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function job(overrides: Partial<Job> = {}): Job {
  return {
    jobId: randomUUID(),
    checkSessionId: randomUUID(),
    checkId: randomUUID(),
    checkType: 'MULTI_STEP',
    name: 'a check',
    runLocation: 'private-location',
    runSource: 'SCHEDULER',
    attempt: 1,
    leaseExpiresAt: new Date(Date.now() + 300_000).toISOString(),
    timeoutSeconds: 60,
    runtimeId: '2026.04',
    environmentVariables: [{ key: 'PASSWORD', value: HELD_SECRET, secret: true }],
    settings: { script: `console.log("${HELD_SECRET}")` },
    ...overrides,
  };
}

interface TestLane {
  lane: JobLane;
  agentId: string;
  /** The queue's BullMQ name, as a script would find it in Redis. */
  queueName: string;
  ran: Job[];
  rejected: RejectedEntryReason[];
  logs: string[];
  errors: Error[];
}

async function startLane(
  laneName: 'uptime' | 'script',
  options: { concurrency?: number; handler?: (job: Job) => Promise<void> } = {},
): Promise<TestLane> {
  const agentId = randomUUID();
  const { logger, logs } = captureLogger('job-lane-test');
  const ran: Job[] = [];
  const rejected: RejectedEntryReason[] = [];
  const errors: Error[] = [];
  const lane = new JobLane(
    connection,
    { lane: laneName, agentId, concurrency: options.concurrency ?? 4, logger, onRejected: (reason) => rejected.push(reason) },
    async (claimed) => {
      ran.push(claimed);
      await options.handler?.(claimed);
    },
    (error) => errors.push(error),
  );
  cleanup.push(() => lane.close());
  await lane.waitUntilReady();
  return { lane, agentId, queueName: `${laneName}-${agentId}`, ran, rejected, logs, errors };
}

/** A BullMQ queue of someone else's onto the lane's queue: what a hostile script would use. */
function intruder(queueName: string): Queue {
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue(queueName, { connection: client, prefix: 'outpost' });
  cleanup.push(async () => {
    await queue.close();
    client.disconnect();
  });
  return queue;
}

const warnings = (lane: TestLane) =>
  lane.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 40);

describe('job lane', () => {
  it('runs jobs it was given, in both lanes, and writes none of their payload to Redis', async () => {
    for (const laneName of ['uptime', 'script'] as const) {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const lane = await startLane(laneName, { handler: () => gate });
      const jobs = [job({ checkType: laneName === 'uptime' ? 'URL' : 'MULTI_STEP' }), job(), job({ attempt: 2 })];
      await lane.lane.add(jobs);

      await eventually(() => (lane.ran.length === 3 ? true : undefined), 5000, `${laneName} jobs started`);
      // While they run, their entries are in Redis: job id and attempt, nothing else.
      const keys = await connection.keys(`outpost:${lane.queueName}:*`);
      const dump = (
        await Promise.all(
          keys.map(async (key) => ((await connection.type(key)) === 'hash' ? JSON.stringify(await connection.hgetall(key)) : '')),
        )
      ).join('\n');
      expect(dump).not.toContain(HELD_SECRET);
      const entry = await connection.hget(`outpost:${lane.queueName}:${jobs[2]!.jobId}-2`, 'data');
      expect(JSON.parse(entry!)).toEqual({ jobId: jobs[2]!.jobId, attempt: 2 });

      release();
      expect(lane.ran).toHaveLength(3);
      expect([...lane.ran].sort(byId)).toEqual([...jobs].sort(byId));
      expect(lane.rejected).toEqual([]);
      expect(warnings(lane)).toEqual([]);
    }
  });

  it('never hands an entry added to its queue by someone else to the handler, and counts and logs it by id only', async () => {
    const lane = await startLane('script');
    const queue = intruder(lane.queueName);
    const payload = job({ environmentVariables: [{ key: 'LEAK', value: INJECTED_SECRET, secret: false }] });
    // What the lane used to accept: a whole job in the entry.
    await queue.add('MULTI_STEP', { jobId: payload.jobId, job: payload }, { jobId: 'injected-1' });
    // A pointer to a job the lane does not hold, and an entry with BullMQ's own id.
    await queue.add('URL', { jobId: payload.jobId, attempt: 1 }, { jobId: `${payload.jobId}-1` });
    await queue.add('URL', { jobId: payload.jobId, job: payload });
    // An entry whose data is not JSON at all (written behind BullMQ's back before it is due).
    const garbled = await queue.add('URL', {}, { jobId: 'injected-garbled', delay: 300 });
    await connection.hset(`outpost:${lane.queueName}:${garbled.id}`, 'data', `{"job": "${INJECTED_SECRET}`);
    // And one whose options are not JSON, which BullMQ itself cannot read.
    const unreadable = await queue.add('URL', {}, { jobId: 'injected-unreadable', delay: 300 });
    await connection.hset(`outpost:${lane.queueName}:${unreadable.id}`, 'opts', `{"x": "${INJECTED_SECRET}`);

    await eventually(() => (lane.rejected.length === 5 ? true : undefined), 5000, 'five entries rejected');
    expect(lane.rejected.sort()).toEqual(['not_held', 'not_held', 'not_held', 'not_held', 'unreadable']);
    expect(lane.ran).toEqual([]);
    const warned = warnings(lane);
    expect(warned).toHaveLength(5);
    expect(warned.map((line) => line.entryId)).toEqual(
      expect.arrayContaining(['injected-1', `${payload.jobId}-1`, 'injected-garbled']),
    );
    expect(warned.every((line) => line.lane === 'script')).toBe(true);
    expect(lane.logs.join('')).not.toContain(INJECTED_SECRET);
    expect(lane.errors).toEqual([]);

    // The lane is not stuck: its own jobs still run.
    const own = job();
    await lane.lane.add([own]);
    await eventually(() => (lane.ran.length === 1 ? true : undefined), 5000, 'its own job');
    expect(lane.ran).toEqual([own]);
  });

  it('runs the payload it holds when an entry of that id carries other data, and only once', async () => {
    const lane = await startLane('uptime');
    const queue = intruder(lane.queueName);
    const held = job({ checkType: 'URL', settings: { request: { url: 'http://127.0.0.1:1/held' } } });
    const forged = { ...held, settings: { request: { url: 'http://127.0.0.1:1/forged' } }, environmentVariables: [] };
    // The forged entry is there first, under the id the lane will use: BullMQ keeps it and
    // ignores the lane's own add of that id.
    await queue.add('URL', { jobId: held.jobId, job: forged }, { jobId: `${held.jobId}-1`, delay: 300 });
    await lane.lane.add([held]);

    await eventually(() => (lane.ran.length === 1 ? true : undefined), 5000, 'the held job');
    expect(lane.ran).toEqual([held]);
    expect(lane.rejected).toEqual(['unexpected_data']);
    expect(warnings(lane)).toMatchObject([{ entryId: `${held.jobId}-1`, reason: 'unexpected_data' }]);

    // Replayed afterwards (a duplicate of an entry that already ran): dropped.
    await eventually(async () => ((await queue.getJobState(`${held.jobId}-1`)) === 'unknown' ? true : undefined), 5000);
    await queue.add('URL', { jobId: held.jobId, attempt: 1 }, { jobId: `${held.jobId}-1` });
    await eventually(() => (lane.rejected.length === 2 ? true : undefined), 5000, 'the replay rejected');
    expect(lane.rejected).toEqual(['unexpected_data', 'not_held']);
    expect(lane.ran).toHaveLength(1);
    expect(lane.logs.join('')).not.toContain('forged');
  });

  it('never runs a job it forgot, and drops its entry quietly', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const lane = await startLane('script', { concurrency: 1, handler: () => gate });
    const jobs = [job(), job(), job()];
    await lane.lane.add(jobs);
    await eventually(() => (lane.ran.length === 1 ? true : undefined), 5000, 'the first job started');
    const [, second, third] = jobs;
    await lane.lane.forget([second!, third!]);
    expect(await intruder(lane.queueName).getJobState(`${second!.jobId}-1`)).toBe('unknown');
    release();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lane.ran).toEqual([jobs[0]]);
    expect(lane.rejected).toEqual([]);
  });

  it('queues again the jobs whose entries Redis lost, and only those', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const lane = await startLane('script', { concurrency: 1, handler: () => gate });
    const jobs = [job(), job(), job()];
    await lane.lane.add(jobs);
    await eventually(() => (lane.ran.length === 1 ? true : undefined), 5000, 'the first job started');
    // What a Redis restart without persistence does to the waiting entries.
    await intruder(lane.queueName).remove(`${jobs[2]!.jobId}-1`);
    expect(await lane.lane.reconcile([jobs[1]!, jobs[2]!])).toBe(1);
    release();
    await eventually(() => (lane.ran.length === 3 ? true : undefined), 5000, 'all three ran');
    expect(lane.ran.map((ran) => ran.jobId).sort()).toEqual(jobs.map((one) => one.jobId).sort());
    expect(lane.rejected).toEqual([]);
  });

  it('warns about at most 20 rejected entries a minute and counts them all', async () => {
    const lane = await startLane('uptime');
    const queue = intruder(lane.queueName);
    await queue.addBulk(Array.from({ length: 30 }, (_, index) => ({ name: 'URL', data: {}, opts: { jobId: `flood-${index}` } })));
    await eventually(() => (lane.rejected.length === 30 ? true : undefined), 5000, 'thirty rejected');
    expect(warnings(lane)).toHaveLength(20);
    expect(warnings(lane).at(-1)!.msg).toContain('logged at DEBUG');
    expect(lane.ran).toEqual([]);
  });
});

function byId(a: Job, b: Job): number {
  return a.jobId.localeCompare(b.jobId);
}
