import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecondAccount, expectErrorANaming, expectErrorB } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

/** A minimal valid body per type, and the defaults the service must fill in. */
const TYPES = [
  {
    path: 'url',
    checkType: 'URL',
    body: { request: { url: 'https://intranet.test/health' } },
    defaults: {
      request: { url: 'https://intranet.test/health', method: 'GET', followRedirects: true, skipSSL: false, ipFamily: 'IPv4', assertions: [] },
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
    },
    tooSlow: { maxResponseTime: 30_001 },
    thresholds: ['degradedResponseTime', 'maxResponseTime'],
  },
  {
    path: 'tcp',
    checkType: 'TCP',
    body: { request: { hostname: 'db.intranet.test', port: 5432 } },
    defaults: {
      request: { hostname: 'db.intranet.test', port: 5432, data: '', ipFamily: 'IPv4', assertions: [] },
      degradedResponseTime: 4000,
      maxResponseTime: 5000,
    },
    tooSlow: { maxResponseTime: 5001 },
    thresholds: ['degradedResponseTime', 'maxResponseTime'],
  },
  {
    path: 'dns',
    checkType: 'DNS',
    body: { request: { query: 'intranet.test' } },
    defaults: {
      request: { query: 'intranet.test', recordType: 'A', port: 53, protocol: 'UDP', assertions: [] },
      degradedResponseTime: 500,
      maxResponseTime: 1000,
    },
    tooSlow: { maxResponseTime: 5001 },
    thresholds: ['degradedResponseTime', 'maxResponseTime'],
  },
  {
    path: 'icmp',
    checkType: 'ICMP',
    body: { request: { hostname: 'gateway.intranet.test' } },
    defaults: {
      request: { hostname: 'gateway.intranet.test', ipFamily: 'IPv4', pingCount: 10, assertions: [] },
      degradedPacketLossThreshold: 10,
      maxPacketLossThreshold: 20,
    },
    tooSlow: { maxPacketLossThreshold: 101 },
    thresholds: ['degradedPacketLossThreshold', 'maxPacketLossThreshold'],
  },
] as const;

describe.each(DB_KINDS)('checks API (%s)', (kind) => {
  let service: TestService;
  let slug: string;

  beforeAll(async () => {
    service = await startTestService(kind);
    slug = (await service.privateLocation()).slugName;
  });
  afterAll(() => service?.close());

  describe.each(TYPES)('$checkType checks', (type) => {
    const create = (extra: Record<string, unknown> = {}) =>
      service.api('POST', `/v1/checks/${type.path}`, { name: `${type.checkType} check`, ...type.body, ...extra });

    it('creates with every default filled in', async () => {
      const created = await create({ privateLocations: [slug], tags: ['prod'] });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        checkType: type.checkType,
        activated: true,
        muted: false,
        shouldFail: false,
        frequency: 10,
        tags: ['prod'],
        privateLocations: [slug],
        locations: [],
        alertChannels: { email: [], webhook: [], slack: [], sms: [] },
        updated_at: null,
        ...type.defaults,
      });
      expect(created.body.id).toMatch(/^[0-9a-f-]{36}$/);
      const read = await service.api('GET', `/v1/checks/${created.body.id}`);
      expect(read.body).toEqual(created.body);
    });

    it('refuses a missing request, a bad threshold and degraded over max, naming each field', async () => {
      expectErrorB(await service.api('POST', `/v1/checks/${type.path}`, { name: 'x' }), ['request']);
      expectErrorB(await create(type.tooSlow), [Object.keys(type.tooSlow)[0]!]);
      const [degraded, max] = type.thresholds;
      expectErrorB(await create({ [degraded]: 50, [max]: 40 }), [degraded]);
    });

    it('updates only the fields sent, merges request, and validates the whole', async () => {
      const created = await create({ activated: false, frequency: 5 });
      const [degraded, max] = type.thresholds;
      const changed = await service.api('PUT', `/v1/checks/${type.path}/${created.body.id}`, {
        name: 'renamed',
        request: { assertions: [] },
        [degraded]: 1,
      });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({
        ...type.defaults,
        name: 'renamed',
        activated: false,
        frequency: 5,
        [degraded]: 1,
        [max]: type.defaults[max as keyof typeof type.defaults],
      });
      expect(changed.body.updated_at).not.toBeNull();
      // A change that breaks a rule across fields is refused, and nothing is stored.
      expectErrorB(
        await service.api('PUT', `/v1/checks/${type.path}/${created.body.id}`, { [max]: 0, [degraded]: 1 }),
        [degraded],
      );
      expect((await service.api('GET', `/v1/checks/${created.body.id}`)).body.name).toBe('renamed');
      expectErrorB(await service.api('PUT', `/v1/checks/${type.path}/${created.body.id}`, {}), ['(root)']);
    });

    it('answers 404 to an update through another type\'s path', async () => {
      const created = await create();
      const other = TYPES.find((candidate) => candidate.path !== type.path)!;
      expectErrorB(await service.api('PUT', `/v1/checks/${other.path}/${created.body.id}`, { name: 'x' }), [], 404);
    });

    it('deletes: 204, then 404', async () => {
      const created = await create();
      const deleted = await service.api('DELETE', `/v1/checks/${created.body.id}`);
      expect(deleted.status).toBe(204);
      expect((await service.api('GET', `/v1/checks/${created.body.id}`)).status).toBe(404);
      expectErrorB(await service.api('DELETE', `/v1/checks/${created.body.id}`), ['id'], 404);
    });
  });

  it('refuses each type\'s foreign assertion sources', async () => {
    const bodies: [string, Record<string, unknown>][] = [
      ['url', { request: { url: 'http://a.test', assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'x' }] } }],
      ['tcp', { request: { hostname: 'a.test', port: 1, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] } }],
      ['dns', { request: { query: 'a.test', assertions: [{ source: 'LATENCY', comparison: 'LESS_THAN', target: '1' }] } }],
      ['icmp', { request: { hostname: 'a.test', assertions: [{ source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: 'x' }] } }],
    ];
    for (const [path, body] of bodies) {
      expectErrorB(await service.api('POST', `/v1/checks/${path}`, { name: 'x', ...body }), ['request.assertions.0.source']);
    }
  });

  it('validates the type-specific fields', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['tcp', { request: { hostname: 'a.test', port: 0 } }, 'request.port'],
      ['tcp', { request: { hostname: 'a.test', port: 70000 } }, 'request.port'],
      ['tcp', { request: { port: 80 } }, 'request.hostname'],
      ['dns', { request: { query: 'q'.repeat(101) } }, 'request.query'],
      ['dns', { request: { query: 'a.test', recordType: 'PTR' } }, 'request.recordType'],
      ['dns', { request: { query: 'a.test', protocol: 'QUIC' } }, 'request.protocol'],
      ['icmp', { request: { hostname: 'a.test', pingCount: 0 } }, 'request.pingCount'],
      ['icmp', { request: { hostname: 'a.test', pingCount: 51 } }, 'request.pingCount'],
      ['icmp', { request: { hostname: 'a.test', ipFamily: 'IPv5' } }, 'request.ipFamily'],
      ['url', { request: { url: `https://a.test/${'x'.repeat(2048)}` } }, 'request.url'],
    ];
    for (const [path, body, field] of cases) {
      expectErrorB(await service.api('POST', `/v1/checks/${path}`, { name: 'x', ...body }), [field]);
    }
  });

  it('lists with limit and page, and keeps accounts apart', async () => {
    const first = await service.api('GET', '/v1/checks?limit=2&page=1');
    const second = await service.api('GET', '/v1/checks?limit=2&page=2');
    expect(first.body).toHaveLength(2);
    expect(second.body).toHaveLength(2);
    expect(first.body.map((c: any) => c.id)).not.toContain(second.body[0].id);
    expectErrorANaming(await service.api('GET', '/v1/checks?limit=101'), ['limit']);

    const other = await createSecondAccount(service);
    const headers = { authorization: `Bearer ${other.apiKey}`, 'x-service-account': other.accountId };
    expect((await service.raw('GET', '/v1/checks', undefined, headers)).body).toEqual([]);
    const mine = first.body[0];
    expect((await service.raw('DELETE', `/v1/checks/${mine.id}`, undefined, headers)).status).toBe(404);
    expect((await service.raw('PUT', `/v1/checks/url/${mine.id}`, { name: 'x' }, headers)).status).toBe(404);
  });
});
