import { afterEach, expect, it } from 'vitest';
import { expectNothingLost } from './support/expectations.js';
import { until } from './support/processes.js';
import { LEASE_SECONDS, World } from './support/world.js';

/**
 * Scenario 1: kill -9 of an agent with 500 sessions in flight. Agent A, alone
 * at first, claims nearly all of them (large lane and backlog) against a slow
 * target; agent B joins; A is killed without warning. B must run everything A
 * held: all 500 PASSED within 60 s of the kill.
 */
let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

it('kill -9 of an agent holding 500 sessions: the other agent finishes all of them within 60 s, 0 lost', async () => {
  world = await World.create({ scenario: '1-agent-kill-9', delays: { '/c/': 5000 } });
  const redisA = await world.startRedis({ persistent: false });
  const redisB = await world.startRedis({ persistent: false });
  const checks = await world.createChecks(50);
  // All 500 wait in the service's queue before A comes, so A's first claims take them all.
  await world.trigger(checks, 10);
  const a = world.startAgent({ name: 'A', redis: redisA, concurrency: 300, prefetch: 250 });
  await a.ready();
  // A is running a full lane of 300 and holds the other 200 in its backlog.
  const busy = await until(() => world!.target.open >= 290, 20_000);
  const b = world.startAgent({ name: 'B', redis: redisB, concurrency: 250 });
  await b.ready();

  const inFlightAtKill = world.target.open;
  const unfinishedAtKill = world.sessions.unfinished();
  a.process.signal('SIGKILL');
  const killedAt = Date.now();
  await a.process.waitExit(5000);

  await world.sessions.waitAllFinal(killedAt + 60_000);
  const figures = await world.publish({
    faultEndAt: killedAt,
    extra: { leaseSecondsAsked: LEASE_SECONDS, aBusyBeforeKill: busy, inFlightAtKill, unfinishedAtKill },
  });

  expect(busy, 'A had a full lane in flight before B came (harness precondition)').toBe(true);
  expectNothingLost(world, figures, { triggered: 500, withinMsAfterFault: 60_000, unfinishedAtFault: unfinishedAtKill });
});
