import { afterEach, expect, it } from 'vitest';
import { expectNothingLost } from './support/expectations.js';
import { sleep, until } from './support/processes.js';
import { LEASE_SECONDS, World } from './support/world.js';

/**
 * Scenario 6: SIGTERM while the service hangs. The service is paused
 * (SIGSTOP) with jobs running and waiting on the agent; the agent then gets
 * SIGTERM with SHUTDOWN_GRACE_SECONDS=5 and must exit within grace + 5 s,
 * though every call it makes to the service hangs. The service is resumed
 * afterwards and a new agent finishes everything: 0 lost.
 */
const GRACE_SECONDS = 5;
const EXIT_BOUND_MS = (GRACE_SECONDS + 5) * 1000;
const SESSIONS = 20;
const BOUND_MS = (LEASE_SECONDS + 20) * 1000;

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

it('an agent stopped while the service hangs exits within grace + 5 s; nothing is lost afterwards', async () => {
  world = await World.create({ scenario: '6-sigterm-while-service-hangs', delays: { '/c/': 8000 } });
  const redis = await world.startRedis({ persistent: false });
  const checks = await world.createChecks(SESSIONS);
  const agent = world.startAgent({ name: 'A', redis, concurrency: 5, graceSeconds: GRACE_SECONDS });
  await agent.ready();
  await world.trigger(checks, 1);
  // Five running (longer than the grace), five more claimed and waiting in its queue.
  const inFlight = await until(() => world!.target.open >= 5, 20_000);
  expect(inFlight, 'jobs in flight before the fault (harness precondition)').toBe(true);
  await sleep(500);
  const unfinishedAtFault = world.sessions.unfinished();

  const service = world.service.process;
  service.signal('SIGSTOP');
  await sleep(500);
  agent.process.signal('SIGTERM');
  const termAt = Date.now();
  const exited = await agent.process.waitExit(30_000);
  const exitMs = exited ? agent.process.exit()!.at - termAt : null;
  const exitCode = agent.process.exit()?.code ?? null;
  if (!exited) await agent.process.kill();
  service.signal('SIGCONT');
  const resumedAt = Date.now();

  const next = world.startAgent({ name: 'B', redis, concurrency: 20 });
  await next.ready();
  await world.sessions.waitAllFinal(resumedAt + BOUND_MS);
  const figures = await world.publish({
    faultEndAt: resumedAt,
    extra: { agentExitMs: exitMs ?? 'not within 30 s', agentExitCode: exitCode, unfinishedAtFault },
  });

  expect.soft(exitMs ?? Number.POSITIVE_INFINITY, `the agent exited within grace + 5 s; it said:\n${agent.process.tail(15)}`).toBeLessThanOrEqual(EXIT_BOUND_MS);
  expectNothingLost(world, figures, { triggered: SESSIONS, withinMsAfterFault: BOUND_MS, unfinishedAtFault });
});
