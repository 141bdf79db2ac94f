import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asNewAccount, createSecondAccount, expectErrorA, expectErrorB } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

describe.each(DB_KINDS)('status pages and incidents (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind);
  });
  afterAll(async () => service?.close());

  async function freshAccount() {
    const { call } = await asNewAccount(service);
    const svc = async (name: string) => {
      const answer = await call('POST', '/v1/status-pages/services', { name });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body as { id: string; name: string };
    };
    const incident = async (services: string[], update: Record<string, unknown> = {}) => {
      const answer = await call('POST', '/v1/status-pages/incidents', {
        name: 'Checkout errors',
        services,
        incidentUpdates: [{ description: 'Looking into it', ...update }],
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body;
    };
    return { call, svc, incident };
  }
  const url = () => `page-${randomUUID().slice(0, 8)}`;

  describe('services', () => {
    it('creates, lists by name and deletes services; names are unique in the account', async () => {
      const { call, svc } = await freshAccount();
      const web = await svc('Website');
      const api = await svc('API');
      expect(web).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Website', created_at: expect.any(String) });
      expect((await call('GET', '/v1/status-pages/services')).body).toEqual([api, web]);
      expectErrorB(await call('POST', '/v1/status-pages/services', { name: 'API' }), ['name']);
      expect((await call('DELETE', `/v1/status-pages/services/${api.id}`)).status).toBe(204);
      expectErrorB(await call('DELETE', `/v1/status-pages/services/${api.id}`), ['id'], 404);
    });

    it('keeps a service a status page shows: 409 in shape B', async () => {
      const { call, svc } = await freshAccount();
      const web = await svc('Website');
      await call('POST', '/v1/status-pages', { name: 'Shop', url: url(), cards: [{ name: 'Public', services: [web.id] }] });
      expectErrorB(await call('DELETE', `/v1/status-pages/services/${web.id}`), ['id'], 409);
    });
  });

  describe('pages', () => {
    it('creates a page with cards of services, reads, lists, replaces and deletes it', async () => {
      const { call, svc } = await freshAccount();
      const web = await svc('Website');
      const api = await svc('API');
      const address = url();
      const created = await call('POST', '/v1/status-pages', {
        name: 'Shop status',
        url: address,
        cards: [
          { name: 'Public', services: [web.id, api.id] },
          { name: 'Empty', services: [] },
        ],
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        name: 'Shop status',
        url: address,
        cards: [
          { name: 'Public', services: [{ id: web.id, name: 'Website' }, { id: api.id, name: 'API' }] },
          { name: 'Empty', services: [] },
        ],
        logo: null,
        redirectTo: null,
        favicon: null,
        defaultTheme: 'AUTO',
        themeColors: { light: {}, dark: {} },
        created_at: expect.any(String),
        updated_at: null,
      });
      expect((await call('GET', `/v1/status-pages/${created.body.id}`)).body).toEqual(created.body);
      expect((await call('GET', '/v1/status-pages')).body).toEqual([created.body]);

      const replaced = await call('PUT', `/v1/status-pages/${created.body.id}`, { name: 'Shop', url: address, cards: [] });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toMatchObject({ name: 'Shop', cards: [], updated_at: expect.any(String) });

      expect((await call('DELETE', `/v1/status-pages/${created.body.id}`)).status).toBe(204);
      expectErrorA(await call('GET', `/v1/status-pages/${created.body.id}`), 404, 'Not Found');
      expectErrorB(await call('DELETE', `/v1/status-pages/${created.body.id}`), ['id'], 404);
    });

    it.each([
      ['no name', { url: 'valid-url' }, ['name']],
      ['a url with capitals', { name: 'x', url: 'Shop' }, ['url']],
      ['a url of two characters', { name: 'x', url: 'ab' }, ['url']],
      ['a url ending in a dash', { name: 'x', url: 'shop-' }, ['url']],
      ['a card service that is no uuid', { name: 'x', url: 'valid-url', cards: [{ name: 'c', services: ['web'] }] }, ['cards.0.services.0']],
      ['a card service of nobody', { name: 'x', url: 'valid-url', cards: [{ name: 'c', services: [randomUUID()] }] }, ['cards.0.services.0']],
    ])('refuses %s: 400 naming the field', async (_case, body, fields) => {
      const { call } = await freshAccount();
      expectErrorB(await call('POST', '/v1/status-pages', body), fields);
      expect((await call('GET', '/v1/status-pages')).body).toEqual([]);
    });

    it('keeps urls unique across the installation, on create and on replace', async () => {
      const mine = await freshAccount();
      const theirs = await freshAccount();
      const address = url();
      await theirs.call('POST', '/v1/status-pages', { name: 'Theirs', url: address });
      expectErrorB(await mine.call('POST', '/v1/status-pages', { name: 'Mine', url: address }), ['url']);
      const own = await mine.call('POST', '/v1/status-pages', { name: 'Mine', url: url() });
      expectErrorB(await mine.call('PUT', `/v1/status-pages/${own.body.id}`, { name: 'Mine', url: address }), ['url']);
    });

    it('does not reach another account\'s pages or services', async () => {
      const mine = await freshAccount();
      const theirs = await freshAccount();
      const foreign = await theirs.svc('Theirs');
      const page = await theirs.call('POST', '/v1/status-pages', { name: 'Theirs', url: url() });
      expectErrorA(await mine.call('GET', `/v1/status-pages/${page.body.id}`), 404, 'Not Found');
      expectErrorB(await mine.call('PUT', `/v1/status-pages/${page.body.id}`, { name: 'x', url: url() }), [], 404);
      expectErrorB(await mine.call('DELETE', `/v1/status-pages/${page.body.id}`), ['id'], 404);
      expectErrorB(await mine.call('DELETE', `/v1/status-pages/services/${foreign.id}`), ['id'], 404);
      expectErrorB(
        await mine.call('POST', '/v1/status-pages', { name: 'x', url: url(), cards: [{ name: 'c', services: [foreign.id] }] }),
        ['cards.0.services.0'],
      );
    });
  });

  describe('incidents', () => {
    it('opens an incident INVESTIGATING with its first update, dated now unless told', async () => {
      const { call, svc } = await freshAccount();
      const web = await svc('Website');
      const before = Date.now();
      const created = await call('POST', '/v1/status-pages/incidents', {
        name: 'Checkout errors',
        severity: 'MAJOR',
        services: [web.id],
        incidentUpdates: [{ description: 'Payments fail for some customers', notifySubscribers: true }],
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        name: 'Checkout errors',
        severity: 'MAJOR',
        services: [{ id: web.id, name: 'Website' }],
        lastUpdateStatus: 'INVESTIGATING',
        incidentUpdates: [
          {
            id: expect.any(String),
            description: 'Payments fail for some customers',
            status: 'INVESTIGATING',
            publicIncidentUpdateDate: expect.any(String),
            created_at: expect.any(String),
            notifySubscribers: true,
          },
        ],
        created_at: expect.any(String),
        updated_at: null,
        resolvedAt: null,
      });
      const update = created.body.incidentUpdates[0];
      expect(Date.parse(update.publicIncidentUpdateDate)).toBeGreaterThanOrEqual(before - 2000);
      expect(update.publicIncidentUpdateDate).toBe(update.created_at);
      expect((await call('GET', `/v1/status-pages/incidents/${created.body.id}`)).body).toEqual(created.body);
    });

    it('adds updates through to RESOLVED: status kept when none is sent, notifySubscribers false unless told', async () => {
      const { call, svc, incident } = await freshAccount();
      const web = await svc('Website');
      const opened = await incident([web.id]);
      const updates = `/v1/status-pages/incidents/${opened.id}/incident-updates`;

      const identified = await call('POST', updates, { description: 'A bad deploy', status: 'IDENTIFIED' });
      expect(identified.status).toBe(201);
      expect(identified.body).toEqual({
        id: expect.any(String),
        description: 'A bad deploy',
        status: 'IDENTIFIED',
        publicIncidentUpdateDate: expect.any(String),
        created_at: expect.any(String),
        notifySubscribers: false,
      });
      const note = await call('POST', updates, { description: 'Rolling back', publicIncidentUpdateDate: '2026-11-21T10:00:00Z' });
      expect(note.body).toMatchObject({ status: 'IDENTIFIED', publicIncidentUpdateDate: '2026-11-21T10:00:00.000Z' });
      expect((await call('POST', updates, { description: 'Watching', status: 'MONITORING' })).status).toBe(201);
      const resolved = await call('POST', updates, { description: 'Fixed', status: 'RESOLVED' });
      expect(resolved.body.status).toBe('RESOLVED');

      const read = (await call('GET', `/v1/status-pages/incidents/${opened.id}`)).body;
      expect(read.lastUpdateStatus).toBe('RESOLVED');
      expect(read.resolvedAt).toEqual(expect.any(String));
      expect(read.incidentUpdates.map((u: { status: string }) => u.status)).toEqual([
        'INVESTIGATING', 'IDENTIFIED', 'IDENTIFIED', 'MONITORING', 'RESOLVED',
      ]);
      expectErrorB(await call('POST', updates, { description: 'Again?' }), ['status']);
    });

    it.each([
      ['no description', {}, ['description']],
      ['an unknown status', { description: 'x', status: 'FIXED' }, ['status']],
      ['a date that is no date', { description: 'x', publicIncidentUpdateDate: 'yesterday' }, ['publicIncidentUpdateDate']],
      ['notifySubscribers as a string', { description: 'x', notifySubscribers: 'yes' }, ['notifySubscribers']],
    ])('refuses an update with %s: 400 naming the field', async (_case, body, fields) => {
      const { call, svc, incident } = await freshAccount();
      const opened = await incident([(await svc('Website')).id]);
      expectErrorB(await call('POST', `/v1/status-pages/incidents/${opened.id}/incident-updates`, body), fields);
      expect((await call('GET', `/v1/status-pages/incidents/${opened.id}`)).body.incidentUpdates).toHaveLength(1);
    });

    it.each([
      ['no services', { name: 'x', services: [], incidentUpdates: [{ description: 'x' }] }, ['services']],
      ['an unknown severity', { name: 'x', severity: 'DOOM', services: ['$web'], incidentUpdates: [{ description: 'x' }] }, ['severity']],
      ['a service of nobody', { name: 'x', services: [randomUUID()], incidentUpdates: [{ description: 'x' }] }, ['services.0']],
      ['no first update', { name: 'x', services: ['$web'], incidentUpdates: [] }, ['incidentUpdates']],
    ])('refuses an incident with %s: 400 naming the field', async (_case, body, fields) => {
      const { call, svc } = await freshAccount();
      const web = await svc('Website');
      const sent = JSON.parse(JSON.stringify(body).replaceAll('$web', web.id));
      expectErrorB(await call('POST', '/v1/status-pages/incidents', sent), fields);
      expect((await call('GET', '/v1/status-pages/incidents')).body).toEqual([]);
    });

    it('lists newest first, deletes, and keeps to its account', async () => {
      const mine = await freshAccount();
      const theirs = await freshAccount();
      const web = await mine.svc('Website');
      const first = await mine.incident([web.id]);
      const second = await mine.incident([web.id]);
      expect((await mine.call('GET', '/v1/status-pages/incidents')).body.map((i: { id: string }) => i.id)).toEqual([second.id, first.id]);
      expectErrorA(await theirs.call('GET', `/v1/status-pages/incidents/${first.id}`), 404, 'Not Found');
      expectErrorB(await theirs.call('POST', `/v1/status-pages/incidents/${first.id}/incident-updates`, { description: 'x' }), [], 404);
      expectErrorB(await theirs.call('DELETE', `/v1/status-pages/incidents/${first.id}`), ['incidentId'], 404);
      expect((await mine.call('DELETE', `/v1/status-pages/incidents/${first.id}`)).status).toBe(204);
      expectErrorA(await mine.call('GET', `/v1/status-pages/incidents/${first.id}`), 404, 'Not Found');
    });
  });

  it('answers 401 without a key and 403 with another account\'s id', async () => {
    const other = await createSecondAccount(service);
    expectErrorA(await service.raw('GET', '/v1/status-pages'), 401, 'Unauthorized');
    expectErrorB(await service.raw('POST', '/v1/status-pages/incidents/00000000-0000-4000-8000-000000000000/incident-updates', { description: 'x' }, {
        authorization: `Bearer ${service.apiKey}`,
        'x-service-account': other.accountId,
      }), [], 403);
  });
});
