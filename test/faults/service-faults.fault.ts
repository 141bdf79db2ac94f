import { afterEach, describe, expect, it } from 'vitest';
import { expectNothingLost } from './support/expectations.js';
import { sleep, until } from './support/processes.js';
import { LEASE_SECONDS, World } from './support/world.js';

/**
 * Scenario 2: the service goes away with sessions in flight — SIGTERM (then
 * started again on the same port and database), kill -9 (started again), and
 * SIGSTOP for 60 s then SIGCONT. One agent runs 200 sessions against a slow
 * target throughout; all 200 must end PASSED within a lease and 20 s of the
 * service being back.
 */
const SESSIONS = 200;
const BOUND_MS = (LEASE_SECONDS + 20) * 1000;

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** Starts the world with 200 sessions in flight; answers how many were unfinished when `fault` struck and when it was over. */
async function withSessionsInFlight(scenario: string, fault: (world: World) => Promise<Record<string, unknown>>) {
  world = await World.create({ scenario, delays: { '/c/': 3000 } });
  const redis = await world.startRedis({ persistent: false });
  const checks = await world.createChecks(20);
  const agent = world.startAgent({ name: 'A', redis, concurrency: 100 });
  await agent.ready();
  await world.trigger(checks, SESSIONS / 20);
  const inFlight = await until(() => world!.target.open >= 90, 20_000);
  expect(inFlight, 'a full lane in flight before the fault (harness precondition)').toBe(true);
  const unfinishedAtFault = world.sessions.unfinished();
  const inFlightAtFault = world.target.open;
  const extra = await fault(world);
  const faultEndAt = Date.now();
  await world.sessions.waitAllFinal(faultEndAt + BOUND_MS);
  const figures = await world.publish({
    faultEndAt,
    extra: { ...extra, inFlightAtFault, unfinishedAtFault, agentAlive: !agent.process.hasExited() },
  });
  expectNothingLost(world, figures, { triggered: SESSIONS, withinMsAfterFault: BOUND_MS, unfinishedAtFault });
  expect.soft(agent.process.hasExited(), 'the agent rode the outage out').toBe(false);
  return figures;
}

describe('service faults with 200 sessions in flight', () => {
  it('SIGTERM, then the service started again on the same port and database: 0 lost', async () => {
    await withSessionsInFlight('2a-service-sigterm-restart', async (world) => {
      const old = world.service.process;
      const sentAt = Date.now();
      old.signal('SIGTERM');
      const exited = await old.waitExit(30_000);
      const exitMs = exited ? old.exit()!.at - sentAt : null;
      // A service that will not stop is killed: the scenario is about what happens next.
      if (!exited) await old.kill();
      await world.service.restart();
      return { sigtermExitMs: exitMs, sigtermExitCode: old.exit()?.code ?? null, downMs: Date.now() - sentAt };
    });
  });

  it('kill -9, then the service started again on the same port and database: 0 lost', async () => {
    await withSessionsInFlight('2b-service-kill-9-restart', async (world) => {
      const old = world.service.process;
      const sentAt = Date.now();
      old.signal('SIGKILL');
      await old.waitExit(10_000);
      await world.service.restart();
      return { downMs: Date.now() - sentAt };
    });
  });

  it('SIGSTOP for 60 s, then SIGCONT: 0 lost', async () => {
    await withSessionsInFlight('2c-service-sigstop-60s', async (world) => {
      const service = world.service.process;
      service.signal('SIGSTOP');
      await sleep(60_000);
      service.signal('SIGCONT');
      return { pausedMs: 60_000, serviceAlive: !service.hasExited() };
    });
  });
});
