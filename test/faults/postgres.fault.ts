import { afterEach, expect, it } from 'vitest';
import { expectNothingLost } from './support/expectations.js';
import { sleep, until } from './support/processes.js';
import { LEASE_SECONDS, World } from './support/world.js';

/**
 * Scenario 4: PostgreSQL under the service fails with sessions in flight:
 * every backend of its database terminated (pg_terminate_backend) three
 * times, 3 s apart, then connections refused for 20 s (a proxy in front of
 * PostgreSQL stops listening). 200 sessions of 8 s each on a lane of 50 keep
 * work going through the whole fault (about 32 s of it), and while backends
 * are terminated, 10 more sessions of a quick check are triggered every
 * 500 ms, so that transactions are open when their connection dies. The
 * service process stays alive throughout, and every session it accepted ends
 * PASSED.
 */
const SESSIONS = 200;
const TERMINATIONS = 3;
const REFUSED_MS = 20_000;
const BOUND_MS = (LEASE_SECONDS + 20) * 1000;

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

it('backends terminated and connections refused for 20 s: the service stays up, 0 lost', async () => {
  world = await World.create({ scenario: '4-postgres-terminate-refuse', delays: { '/c/': 8000, '/f/': 200 }, databaseProxy: true });
  const redis = await world.startRedis({ persistent: false });
  const checks = await world.createChecks(20);
  const quick = await world.createChecks(10, '/f/');
  const agent = world.startAgent({ name: 'A', redis, concurrency: 50 });
  await agent.ready();
  await world.trigger(checks, SESSIONS / 20);
  const inFlight = await until(() => world!.target.open >= 45, 20_000);
  expect(inFlight, 'a full lane in flight before the fault (harness precondition)').toBe(true);
  const unfinishedAtFault = world.sessions.unfinished();
  const service = world.service.process;

  const terminated: number[] = [];
  let churning = true;
  let triggerCallsRefused = 0;
  const churn = (async () => {
    while (churning) {
      triggerCallsRefused += (await world.tryTrigger(quick)).refused;
      await sleep(500);
    }
  })();
  for (let round = 0; round < TERMINATIONS; round += 1) {
    terminated.push(await world.terminateBackends());
    await sleep(3000);
  }
  churning = false;
  await churn;
  const triggered = world.sessions.all().length;
  const unfinishedAtRefuse = world.sessions.unfinished();
  await world.proxy!.refuse();
  await sleep(REFUSED_MS);
  await world.proxy!.open();
  const openAt = Date.now();

  await world.sessions.waitAllFinal(openAt + BOUND_MS);
  const figures = await world.publish({
    faultEndAt: openAt,
    extra: {
      backendsTerminated: terminated.join(','),
      refusedMs: REFUSED_MS,
      unfinishedAtFault,
      unfinishedAtRefuse,
      triggerCallsRefused,
      serviceExit: service.exit() ?? null,
    },
  });

  expect.soft(service.exit(), `the service process stayed alive; it said:\n${service.tail(20)}`).toBeUndefined();
  expect.soft(terminated.some((count) => count > 0), 'backends were there to terminate (harness check)').toBe(true);
  expect.soft(unfinishedAtRefuse, 'sessions still in flight when connections were refused (harness check)').toBeGreaterThan(0);
  expectNothingLost(world, figures, { triggered, withinMsAfterFault: BOUND_MS, unfinishedAtFault: triggered });
});
