import { afterEach, describe, expect, it } from 'vitest';
import { expectNothingLost } from './support/expectations.js';
import { sleep, until } from './support/processes.js';
import { LEASE_SECONDS, World, type AgentHandle } from './support/world.js';

/**
 * Scenario 3: the agents' Redis restarts (on the same port) with 100 sessions
 * in flight, their uptime jobs queued in it (UPTIME_QUEUE=redis; by default an
 * uptime agent's jobs wait in memory and it uses no Redis), with persistence (append-only, fsync always) and without (every
 * queue entry gone), for one agent and for two agents sharing it. While Redis
 * is down each agent's /-/readiness answers 503; once it is back, claims
 * resume within 10 s (sessions triggered then finish promptly), and none of
 * the 100 is stranded: all end PASSED.
 */
const SESSIONS = 100;
const REDIS_DOWN_MS = 8000;
/** Readiness may take this long to notice Redis is gone; after it, every probe must answer 503. */
const READINESS_NOTICE_MS = 3000;
/** Claims resume within 10 s of Redis being back; 1 s more for the instant check to run and be reported. */
const RESUME_MS = 10_000;
const RESUME_RUN_MS = 1000;
const BOUND_MS = (LEASE_SECONDS + 15) * 1000;

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe.each([
  { persistent: true, agents: 1 },
  { persistent: false, agents: 1 },
  { persistent: true, agents: 2 },
  { persistent: false, agents: 2 },
])('Redis restart, persistence $persistent, $agents agent(s) sharing it', ({ persistent, agents: agentCount }) => {
  it('0 stranded, readiness 503 while Redis is down, claims resume within 10 s of it being back', async () => {
    const scenario = `3-redis-restart-${persistent ? 'persistent' : 'volatile'}-${agentCount}-agent${agentCount > 1 ? 's' : ''}`;
    world = await World.create({ scenario, delays: { '/c/': 2000, '/n/': 0 } });
    const redis = await world.startRedis({ persistent });
    const checks = await world.createChecks(10);
    const fresh = await world.createChecks(5, '/n/');
    const agents: AgentHandle[] = [];
    for (let index = 0; index < agentCount; index += 1) {
      // Uptime jobs wait in Redis only with UPTIME_QUEUE=redis: the queue this scenario restarts.
      agents.push(world.startAgent({ name: String.fromCharCode(65 + index), redis, concurrency: 50, queue: 'redis' }));
    }
    for (const agent of agents) await agent.ready();
    await world.trigger(checks, SESSIONS / 10);
    const inFlight = await until(() => world!.target.open >= 40, 20_000);
    expect(inFlight, 'jobs in flight before the fault (harness precondition)').toBe(true);
    const unfinishedAtFault = world.sessions.unfinished('main');

    await redis.stop();
    const downAt = Date.now();
    const samples: { agent: string; afterMs: number; status: number | undefined }[] = [];
    while (Date.now() - downAt < REDIS_DOWN_MS) {
      await Promise.all(
        agents.map(async (agent) => samples.push({ agent: agent.name, afterMs: Date.now() - downAt, status: await agent.readiness() })),
      );
      await sleep(250);
    }
    await redis.start();
    const backAt = Date.now();

    // New work after the restart: claimed and run at once (the target answers these instantly).
    await world.trigger(fresh, 1, 'after');
    await world.sessions.waitAllFinal(backAt + RESUME_MS + RESUME_RUN_MS, 'after');
    const after = world.sessions.all('after');
    const resumedMs = after.every((session) => session.status !== undefined && session.finalAt !== undefined)
      ? Math.max(...after.map((session) => session.finalAt! - backAt))
      : null;
    const readyAgainMs = await Promise.all(
      agents.map(async (agent) => ((await until(async () => (await agent.readiness()) === 200, 10_000, 100)) ? Date.now() - backAt : null)),
    );

    await world.sessions.waitAllFinal(backAt + BOUND_MS, 'main');
    const checked = samples.filter((sample) => sample.afterMs >= READINESS_NOTICE_MS);
    const notUnready = checked.filter((sample) => sample.status !== 503);
    const figures = await world.publish({
      group: 'main',
      faultEndAt: backAt,
      extra: {
        unfinishedAtFault,
        readinessWhileDown: `${checked.length - notUnready.length}/${checked.length} probes 503`,
        readinessAnswers: [...new Set(samples.map((sample) => String(sample.status)))].join(','),
        newSessionsPassed: `${after.filter((session) => session.status === 'PASSED').length}/${after.length}`,
        newSessionsDoneAfterRedisBackMs: resumedMs,
        readyAgainMs: readyAgainMs.join(','),
      },
    });

    expectNothingLost(world, figures, { triggered: SESSIONS, withinMsAfterFault: BOUND_MS, unfinishedAtFault });
    expect.soft(checked.length, 'readiness probes while Redis was down (harness check)').toBeGreaterThan(0);
    expect.soft(notUnready, `readiness is 503 from ${READINESS_NOTICE_MS / 1000} s after Redis went down until it is back`).toEqual([]);
    expect.soft(after.map((session) => session.status), 'sessions triggered after the restart PASSED').toEqual(after.map(() => 'PASSED'));
    expect
      .soft(resumedMs ?? Number.POSITIVE_INFINITY, 'sessions triggered after the restart finished within 10 s (+1 s to run) of Redis being back')
      .toBeLessThanOrEqual(RESUME_MS + RESUME_RUN_MS);
  });
});
