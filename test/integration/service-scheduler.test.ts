import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualAgent } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

describe.each(DB_KINDS)('the scheduler on %s', (kind) => {
  let service: TestService;
  let slug: string;
  let locationKey: string;

  beforeAll(async () => {
    // Ticks only when the test says.
    service = await startTestService(kind, { tickMs: 3_600_000 });
    const location = await service.privateLocation();
    slug = location.slugName;
    locationKey = location.rawKey;
  });
  afterAll(async () => {
    await service?.close();
  });

  const create = async (name: string) => {
    const created = await service.api('POST', '/v1/checks/url', {
      name,
      activated: true,
      frequency: 5,
      privateLocations: [slug],
      request: { url: 'http://127.0.0.1:9/' },
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const sessionsOf = async (checkId: string) =>
    (await service.service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM check_sessions WHERE check_id = $1', [checkId]))[0]!.n;
  const nextRun = async (checkId: string) =>
    (await service.service.db.query<{ next_run_at: Date; due: boolean }>(
      'SELECT next_run_at, next_run_at <= now() AS due FROM checks WHERE id = $1',
      [checkId],
    ))[0]!;

  it('starts each due check once, and moves its next run a frequency ahead in the same transaction', async () => {
    const id = await create('due');
    await service.service.scheduler.tick();
    expect(await sessionsOf(id)).toBe(1);
    expect((await nextRun(id)).due).toBe(false);
    await service.service.scheduler.tick();
    expect(await sessionsOf(id)).toBe(1);
  });

  it('skips the turn of a check whose run cannot be made, logged, and still runs the checks after it', async () => {
    const broken = await create('broken');
    const fine = await create('fine');
    // A definition the run cannot be made from: the job's timeout is not a number, which the database refuses.
    await service.service.db.query(
      "UPDATE checks SET definition = definition - 'maxResponseTime', next_run_at = now() - interval '1 minute' WHERE id = $1",
      [broken],
    );
    await service.service.scheduler.tick();
    expect(await sessionsOf(broken)).toBe(0);
    expect((await nextRun(broken)).due).toBe(false);
    expect(await sessionsOf(fine)).toBe(1);
    expect(service.logs.some((line) => line.includes('a scheduled run could not be made') && line.includes(broken))).toBe(true);
  });

  it('gives leases a grace period only when no instance swept for a while, whichever instance sweeps now', async () => {
    const agent = await new ManualAgent(service, locationKey).connect();
    const check = await create('leased');
    await service.service.db.query("UPDATE checks SET next_run_at = now() - interval '1 second' WHERE id = $1", [check]);
    await service.service.scheduler.tick();
    const job = await agent.claimOne();
    const state = async () =>
      (await service.service.db.query<{ state: string }>('SELECT state FROM jobs WHERE id = $1', [job.jobId]))[0]!.state;
    const expire = () => service.service.db.query("UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [job.jobId]);

    // Nobody swept for a day (every instance was down): agents get one lease length to renew first.
    await expire();
    await service.service.db.query("UPDATE lease_sweeps SET last_at = now() - interval '1 day'");
    await service.service.scheduler.tick();
    expect(await state()).toBe('leased');

    // Another instance swept a moment ago: this one, however long since its own last sweep, gives none.
    await expire();
    await service.service.db.query('UPDATE lease_sweeps SET last_at = now()');
    await service.service.scheduler.tick();
    expect(await state()).toBe('queued');
  });
});
