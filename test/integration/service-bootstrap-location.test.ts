import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureLocationKey } from '../../src/service/store/private-locations.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

const KEY = `pl_${'b'.repeat(40)}`;
const hello = (service: TestService, key: string) =>
  service.raw(
    'POST',
    '/v1/agent/hello',
    { agentId: randomUUID(), version: '0.1.0', hostname: 'bootstrap', mode: 'uptime', checkTypes: ['URL'], runtimes: [], capacity: { uptime: 10, script: 0 } },
    { authorization: `Bearer ${key}` },
  );

describe.each(DB_KINDS)('a bootstrap private location (%s)', (kind) => {
  let service: TestService | undefined;
  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  it('exists with its key from the first start, so an agent given the key gets in without a setup step', async () => {
    service = await startTestService(kind, { env: { BOOTSTRAP_PRIVATE_LOCATION: 'compose', BOOTSTRAP_PRIVATE_LOCATION_KEY: KEY } });
    expect((await hello(service, KEY)).status).toBe(200);
    const locations = (await service.api('GET', '/v1/private-locations')).body as { slugName: string; name: string; agentCount: number; keys: unknown[] }[];
    expect(locations).toHaveLength(1);
    expect(locations[0]).toMatchObject({ slugName: 'compose', name: 'compose', agentCount: 1 });
    expect(locations[0]!.keys).toHaveLength(1);
    // Another key of no location is still refused.
    expect((await hello(service, `pl_${'x'.repeat(40)}`)).status).toBe(401);
  });

  it('is made once however often the service starts, and a key already in use stays where it is', async () => {
    service = await startTestService(kind, { env: { BOOTSTRAP_PRIVATE_LOCATION: 'compose', BOOTSTRAP_PRIVATE_LOCATION_KEY: KEY } });
    // What every later start does.
    await ensureLocationKey(service.service.db, service.accountId, 'compose', KEY);
    await ensureLocationKey(service.service.db, service.accountId, 'compose', KEY);
    const other = await service.privateLocation('other');
    await ensureLocationKey(service.service.db, service.accountId, 'compose', other.rawKey);
    const locations = (await service.api('GET', '/v1/private-locations')).body as { slugName: string; keys: unknown[] }[];
    expect(locations.map((location) => [location.slugName, location.keys.length]).sort()).toEqual([['compose', 1], ['other', 1]]);
  });
});
