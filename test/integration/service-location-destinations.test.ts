import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorB, ManualAgent, urlCheckBody } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

/** A private location's destination policy: set through the API, handed to its agents with every job. */
describe.each(DB_KINDS)('private location destination policies (%s)', (kind) => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService(kind);
  });
  afterAll(() => service?.close());

  async function claimedJob(slugName: string, rawKey: string) {
    const agent = await new ManualAgent(service, rawKey).connect();
    const check = await service.api('POST', '/v1/checks/url', urlCheckBody([slugName], { activated: false }));
    expect(check.status, JSON.stringify(check.body)).toBe(201);
    await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.body.id] } });
    return agent.claimOne();
  }

  it('is empty by default, and then no job carries one', async () => {
    const location = await service.privateLocation();
    const read = await service.api('GET', `/v1/private-locations/${location.id}`);
    expect(read.body.destinationPolicy).toEqual({ allowed: [], denied: [] });
    expect(await claimedJob(location.slugName, location.rawKey)).not.toHaveProperty('destinationPolicy');
  });

  it('is set at creation and replaced later, normalized, and each job claimed after carries the current one', async () => {
    const slugName = `rack-${Date.now()}`;
    const created = await service.api('POST', '/v1/private-locations', {
      name: 'Rack',
      slugName,
      destinationPolicy: { denied: ['10.1.2.3/8', '::FFFF:169.254.0.0/112'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.destinationPolicy).toEqual({ allowed: [], denied: ['10.0.0.0/8', '169.254.0.0/16'] });
    const key = await service.api('POST', `/v1/private-locations/${created.body.id}/keys`);
    const first = await claimedJob(slugName, key.body.rawKey);
    expect(first.destinationPolicy).toEqual({ allowed: [], denied: ['10.0.0.0/8', '169.254.0.0/16'] });

    const replaced = await service.api('PUT', `/v1/private-locations/${created.body.id}/destination-policy`, {
      allowed: ['10.20.0.0/16'],
      denied: ['0.0.0.0/0', '::/0'],
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body.destinationPolicy).toEqual({ allowed: ['10.20.0.0/16'], denied: ['0.0.0.0/0', '::/0'] });
    const second = await claimedJob(slugName, key.body.rawKey);
    expect(second.destinationPolicy).toEqual({ allowed: ['10.20.0.0/16'], denied: ['0.0.0.0/0', '::/0'] });

    const cleared = await service.api('PUT', `/v1/private-locations/${created.body.id}/destination-policy`, {});
    expect(cleared.body.destinationPolicy).toEqual({ allowed: [], denied: [] });
  });

  it('refuses what is not an address range: 400 naming the list', async () => {
    const location = await service.privateLocation();
    expectErrorB(
      await service.api('PUT', `/v1/private-locations/${location.id}/destination-policy`, { allowed: ['intranet'], denied: ['10.0.0.0/33'] }),
      ['allowed', 'denied'],
    );
    expectErrorB(
      await service.api('POST', '/v1/private-locations', { name: 'x', slugName: `bad-${Date.now()}`, destinationPolicy: { denied: ['0x7f.1'] } }),
      ['destinationPolicy.denied'],
    );
    const missing = await service.api('PUT', '/v1/private-locations/00000000-0000-4000-8000-000000000000/destination-policy', {});
    expect(missing.status).toBe(404);
  });
});
