import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecondAccount, expectErrorA, expectErrorB, urlCheckBody } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type ApiAnswer, type TestService } from '../support/service.js';

const MAX_PER_CHECK = 2;
/** The spec's data-center locations, written out here rather than read from the code under test. */
const DATA_CENTER = [
  'us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'ca-central-1', 'sa-east-1', 'eu-west-1', 'eu-central-1',
  'eu-west-2', 'eu-west-3', 'eu-north-1', 'eu-south-1', 'me-south-1', 'ap-southeast-1', 'ap-northeast-1', 'ap-east-1',
  'ap-southeast-2', 'ap-southeast-3', 'ap-northeast-2', 'ap-northeast-3', 'ap-south-1', 'af-south-1',
];
const SCRIPT = "const { test } = require('@playwright/test');\ntest('t', async () => {});\n";

describe.each(DB_KINDS)('account entitlements (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind, { env: { MAX_LOCATIONS_PER_CHECK: String(MAX_PER_CHECK) } });
  });
  afterAll(async () => service?.close());

  /** An account of its own, so its private locations are exactly the ones a test makes. */
  async function freshAccount() {
    const account = await createSecondAccount(service);
    const headers = { authorization: `Bearer ${account.apiKey}`, 'x-service-account': account.accountId };
    const call = (method: string, path: string, body?: unknown): Promise<ApiAnswer> => service.raw(method, path, body, headers);
    const location = async (name = 'Rack') => {
      const slugName = `loc-${randomUUID().slice(0, 8)}`;
      expect((await call('POST', '/v1/private-locations', { name, slugName })).status).toBe(201);
      return slugName;
    };
    return { call, location };
  }

  it('names the plan, every data-center location as unavailable, the account\'s private locations, and maxPerCheck', async () => {
    const { call, location } = await freshAccount();
    const basement = await location('Basement');
    const answer = await call('GET', '/v1/accounts/me/entitlements');
    expect(answer.status).toBe(200);
    expect(answer.body.plan).toBe('SELF_HOSTED');
    expect(answer.body.planDisplayName).toBe('Self-hosted');
    expect(answer.body.locations.maxPerCheck).toBe(MAX_PER_CHECK);
    const all = answer.body.locations.all as { id: string; name: string; available: boolean }[];
    expect(all.map((entry) => entry.id)).toEqual([...DATA_CENTER, basement]);
    for (const entry of all.slice(0, DATA_CENTER.length)) {
      expect(entry).toEqual({ id: entry.id, name: expect.stringMatching(/\S/), available: false });
    }
    expect(all.at(-1)).toEqual({ id: basement, name: 'Basement', available: true });
  });

  it('lists features as this installation has them, with the limits it enforces', async () => {
    const { call, location } = await freshAccount();
    await location();
    await location();
    const { entitlements } = (await call('GET', '/v1/accounts/me/entitlements')).body as {
      entitlements: { key: string; enabled: boolean; quantity: number }[];
    };
    for (const entry of entitlements) {
      expect(entry).toEqual({
        key: expect.stringMatching(/^[A-Z_]+$/),
        name: expect.stringMatching(/\S/),
        description: expect.stringMatching(/\S/),
        enabled: expect.any(Boolean),
        quantity: expect.any(Number),
        requiredPlan: 'SELF_HOSTED',
        requiredPlanDisplayName: 'Self-hosted',
      });
    }
    const byKey = Object.fromEntries(entitlements.map((entry) => [entry.key, entry]));
    for (const key of ['URL_MONITORS', 'TCP_MONITORS', 'DNS_MONITORS', 'ICMP_MONITORS', 'MULTI_STEP_CHECKS', 'PLAYWRIGHT_CHECK_SUITES', 'API_CHECKS', 'BROWSER_CHECKS']) {
      expect(byKey[key]?.enabled, key).toBe(true);
    }
    expect(byKey.DATA_CENTER_LOCATIONS).toMatchObject({ enabled: false, quantity: 0 });
    expect(byKey.PRIVATE_LOCATIONS).toMatchObject({ enabled: true, quantity: 2 });
    expect(byKey.LOCATIONS_PER_CHECK).toMatchObject({ enabled: true, quantity: MAX_PER_CHECK });
    expect(byKey.ENVIRONMENT_VARIABLES).toMatchObject({ enabled: true, quantity: 100 });
    expect(byKey.CHECK_ENVIRONMENT_VARIABLES).toMatchObject({ enabled: true, quantity: 100 });
    // Tests run the service with a very high limit (see test/support/service.ts).
    expect(byKey.API_RATE_LIMIT).toMatchObject({ enabled: true, quantity: 1_000_000 });
  });

  it('refuses a check at a data-center location: 400 naming locations, nothing stored', async () => {
    const { call, location } = await freshAccount();
    const slug = await location();
    const answer = await call('POST', '/v1/checks/url', urlCheckBody([slug], { locations: ['eu-west-1'] }));
    expectErrorB(answer, ['locations']);
    expect(answer.body.attributes.locations).toMatch(/eu-west-1/);
    expect((await call('GET', '/v1/checks')).body).toEqual([]);
  });

  it(`allows ${MAX_PER_CHECK} locations per check and refuses more, on create and on update, for every check type`, async () => {
    const { call, location } = await freshAccount();
    const slugs = [await location(), await location(), await location()];
    const bodies: [string, Record<string, unknown>][] = [
      ['url', urlCheckBody([])],
      ['tcp', { name: 'tcp', request: { hostname: '127.0.0.1', port: 9 } }],
      ['dns', { name: 'dns', request: { query: 'example.test', recordType: 'A' } }],
      ['icmp', { name: 'icmp', request: { hostname: '127.0.0.1' } }],
      ['multistep', { name: 'multi', script: SCRIPT }],
    ];
    for (const [path, body] of bodies) {
      const refused = await call('POST', `/v1/checks/${path}`, { ...body, activated: false, privateLocations: slugs });
      expectErrorB(refused, ['privateLocations']);
      expect(refused.body.attributes.privateLocations, path).toMatch(new RegExp(`at most ${MAX_PER_CHECK}`));

      const created = await call('POST', `/v1/checks/${path}`, { ...body, activated: false, privateLocations: slugs.slice(0, 2) });
      expect(created.status, `${path}: ${JSON.stringify(created.body)}`).toBe(201);
      const update = await call('PUT', `/v1/checks/${path}/${created.body.id}`, { privateLocations: slugs });
      expectErrorB(update, ['privateLocations']);
      expect((await call('GET', `/v1/checks/${created.body.id}`)).body.privateLocations).toEqual(slugs.slice(0, 2));
    }
  });

  it('answers 401 without a key and 403 with another account\'s id', async () => {
    const other = await createSecondAccount(service);
    expectErrorA(await service.raw('GET', '/v1/accounts/me/entitlements'), 401, 'Unauthorized');
    expectErrorA(
      await service.raw('GET', '/v1/accounts/me/entitlements', undefined, {
        authorization: `Bearer ${service.apiKey}`,
        'x-service-account': other.accountId,
      }),
      403,
      'Forbidden',
    );
  });
});
