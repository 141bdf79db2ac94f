import { afterEach, expect, it } from 'vitest';
import { expectNothingLost } from './support/expectations.js';
import { sleep } from './support/processes.js';
import { LEASE_SECONDS, World } from './support/world.js';

/**
 * Scenario 5: SIGTERM during a claim, 20 rounds. An idle agent long-polls a
 * claim; sessions are triggered and the agent gets SIGTERM at nearly the same
 * moment (from 40 ms before the trigger to 150 ms after, 10 ms further each
 * round), and the next round starts a new agent. Jobs the service handed to
 * a claim the stopping agent dropped must not wait out a lease of minutes:
 * every session ends PASSED within a lease and 15 s of its trigger.
 */
const ROUNDS = 20;
const PER_ROUND = 5;
const GRACE_SECONDS = 10;
const BOUND_MS = (LEASE_SECONDS + 15) * 1000;
/** A session slower than this waited for something (a lease) rather than an agent. */
const PROMPT_MS = 10_000;
const roundGroup = (offsetMs: number) => `SIGTERM ${offsetMs >= 0 ? '+' : ''}${offsetMs} ms`;

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

it('SIGTERM at the moment jobs are claimed, 20 rounds: 0 stranded, each session PASSED within a lease', async () => {
  world = await World.create({ scenario: '5-sigterm-during-claim', delays: { '/c/': 200 } });
  const redis = await world.startRedis({ persistent: false });
  const checks = await world.createChecks(PER_ROUND);
  const rounds: { offsetMs: number; exitMs: number | null }[] = [];

  for (let round = 0; round < ROUNDS; round += 1) {
    const offsetMs = -40 + 10 * round;
    const agent = world.startAgent({ name: `round ${round}`, redis, concurrency: 10, graceSeconds: GRACE_SECONDS });
    await agent.ready();
    // Ready: hello answered and the first claim out; give it time to be held as a long poll.
    await sleep(300);
    let termAt: number;
    if (offsetMs < 0) {
      agent.process.signal('SIGTERM');
      termAt = Date.now();
      await sleep(-offsetMs);
      await world.trigger(checks, 1, roundGroup(offsetMs));
    } else {
      const triggered = world.trigger(checks, 1, roundGroup(offsetMs));
      await sleep(offsetMs);
      agent.process.signal('SIGTERM');
      termAt = Date.now();
      await triggered;
    }
    const exited = await agent.process.waitExit((GRACE_SECONDS + 10) * 1000);
    rounds.push({ offsetMs, exitMs: exited ? agent.process.exit()!.at - termAt : null });
    if (!exited) await agent.process.kill();
  }
  const lastRoundAt = Date.now();
  // Whatever the rounds left in the queue (released or never claimed) is for this one.
  const last = world.startAgent({ name: 'after the rounds', redis, concurrency: 10 });
  await last.ready();

  const lastTrigger = Math.max(...world.sessions.all().map((session) => session.triggeredAt));
  await world.sessions.waitAllFinal(lastTrigger + BOUND_MS);
  const sessions = world.sessions.all();
  const groupOf = new Map(
    rounds.flatMap((round) => world!.sessions.all(roundGroup(round.offsetMs)).map((session) => [session.id, roundGroup(round.offsetMs)] as const)),
  );
  const slow = sessions.filter((session) => session.finalAt === undefined || session.finalAt - session.triggeredAt > PROMPT_MS);
  const tooSlow = sessions.filter((session) => session.finalAt === undefined || session.finalAt - session.triggeredAt > BOUND_MS);
  const figures = await world.publish({
    faultEndAt: lastRoundAt,
    extra: {
      slowerThan10s: slow.length,
      roundsWithSlowSessions: [...new Set(slow.map((session) => groupOf.get(session.id)))].join('; ') || 'none',
      slowerThanLeasePlus15s: tooSlow.length,
      agentsNotExitedInGrace: rounds.filter((round) => round.exitMs === null).length,
      exitMsMax: Math.max(...rounds.map((round) => round.exitMs ?? Number.POSITIVE_INFINITY)),
    },
  });

  expectNothingLost(world, figures, { triggered: ROUNDS * PER_ROUND, withinMsAfterFault: BOUND_MS, unfinishedAtFault: ROUNDS * PER_ROUND });
  expect.soft(figures.slowestSessionMs ?? Number.POSITIVE_INFINITY, 'every session PASSED within a lease and 15 s of its trigger').toBeLessThanOrEqual(BOUND_MS);
  expect.soft(rounds.filter((round) => round.exitMs === null), 'every agent exited on SIGTERM').toEqual([]);
});
