import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asNewAccount, createSecondAccount, expectErrorA, expectErrorB } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

const STARTS = '2026-12-01T02:00:00.000Z';
const ENDS = '2026-12-01T04:00:00.000Z';
const WINDOW = { name: 'Database upgrade', tags: ['db'], startsAt: STARTS, endsAt: ENDS };

describe.each(DB_KINDS)('maintenance windows (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind);
  });
  afterAll(async () => service?.close());

  async function freshAccount() {
    const { call } = await asNewAccount(service);
    const window = async (body: Record<string, unknown> = {}) => {
      const answer = await call('POST', '/v1/maintenance-windows', { ...WINDOW, ...body });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body;
    };
    const maintenance = async (windowId: number, body: Record<string, unknown> = {}) => {
      const answer = await call('POST', `/v1/maintenance-windows/${windowId}/maintenances`, { description: 'Planned', ...body });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body;
    };
    return { call, window, maintenance };
  }

  describe('windows', () => {
    it('creates a window with its defaults, reads, lists and updates it', async () => {
      const { call, window } = await freshAccount();
      const created = await window();
      expect(created).toEqual({
        id: expect.any(Number),
        ...WINDOW,
        repeatUnit: null,
        repeatInterval: null,
        repeatEndsAt: null,
        created_at: expect.any(String),
        updated_at: null,
      });
      expect((await call('GET', `/v1/maintenance-windows/${created.id}`)).body).toEqual(created);
      const second = await window({ name: 'Weekly', repeatUnit: 'WEEK', repeatInterval: 1, repeatEndsAt: '2027-06-01T00:00:00Z' });
      expect(second).toMatchObject({ repeatUnit: 'WEEK', repeatInterval: 1, repeatEndsAt: '2027-06-01T00:00:00.000Z' });
      expect((await call('GET', '/v1/maintenance-windows')).body).toEqual([created, second]);
      expect((await call('GET', '/v1/maintenance-windows?limit=1&page=2')).body).toEqual([second]);

      const updated = await call('PUT', `/v1/maintenance-windows/${created.id}`, { name: 'Renamed', tags: ['db', 'api'] });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({ ...created, name: 'Renamed', tags: ['db', 'api'], updated_at: expect.any(String) });
    });

    it.each([
      ['no name', { name: undefined }, ['name']],
      ['no tags', { tags: [] }, ['tags']],
      ['no startsAt', { startsAt: undefined }, ['startsAt']],
      ['a startsAt that is no date', { startsAt: 'tomorrow' }, ['startsAt']],
      ['an end before the start', { endsAt: '2026-12-01T01:00:00Z' }, ['endsAt']],
      ['an end equal to the start', { endsAt: STARTS }, ['endsAt']],
      ['an unknown repeat unit', { repeatUnit: 'YEAR', repeatInterval: 1 }, ['repeatUnit']],
      ['a repeat unit without an interval', { repeatUnit: 'DAY' }, ['repeatInterval']],
      ['an interval without a unit', { repeatInterval: 2 }, ['repeatUnit']],
      ['an interval of 0', { repeatUnit: 'DAY', repeatInterval: 0 }, ['repeatInterval']],
      ['a repeat end without a repeat', { repeatEndsAt: '2027-01-01T00:00:00Z' }, ['repeatEndsAt']],
      ['a repeat end before the start', { repeatUnit: 'DAY', repeatInterval: 1, repeatEndsAt: '2026-01-01T00:00:00Z' }, ['repeatEndsAt']],
    ])('refuses %s: 400 naming the field, nothing stored', async (_case, extra, fields) => {
      const { call } = await freshAccount();
      expectErrorB(await call('POST', '/v1/maintenance-windows', { ...WINDOW, ...extra }), fields);
      expect((await call('GET', '/v1/maintenance-windows')).body).toEqual([]);
    });

    it('refuses an update that breaks a rule across fields, and changes nothing', async () => {
      const { call, window } = await freshAccount();
      const created = await window();
      expectErrorB(await call('PUT', `/v1/maintenance-windows/${created.id}`, { endsAt: '2026-11-30T00:00:00Z' }), ['endsAt']);
      expectErrorB(await call('PUT', `/v1/maintenance-windows/${created.id}`, { tags: [] }), ['tags']);
      expect((await call('GET', `/v1/maintenance-windows/${created.id}`)).body).toEqual(created);
    });

    it('deletes a window with its maintenances: 204, then 404 in shape B', async () => {
      const { call, window, maintenance } = await freshAccount();
      const created = await window();
      const held = await maintenance(created.id);
      const deleted = await call('DELETE', `/v1/maintenance-windows/${created.id}`);
      expect(deleted.status).toBe(204);
      expect(deleted.body).toBeUndefined();
      expectErrorA(await call('GET', `/v1/maintenance-windows/${created.id}`), 404, 'Not Found');
      expectErrorA(await call('GET', `/v1/maintenance-windows/${created.id}/maintenances/${held.id}`), 404, 'Not Found');
      expectErrorB(await call('DELETE', `/v1/maintenance-windows/${created.id}`), ['id'], 404);
      expectErrorB(await call('DELETE', '/v1/maintenance-windows/not-a-number'), ['id']);
    });

    it('keeps each account\'s windows to itself', async () => {
      const mine = await freshAccount();
      const theirs = await freshAccount();
      const created = await theirs.window();
      expectErrorA(await mine.call('GET', `/v1/maintenance-windows/${created.id}`), 404, 'Not Found');
      expectErrorB(await mine.call('PUT', `/v1/maintenance-windows/${created.id}`, { name: 'x' }), [], 404);
      expectErrorB(await mine.call('DELETE', `/v1/maintenance-windows/${created.id}`), ['id'], 404);
      expectErrorB(await mine.call('POST', `/v1/maintenance-windows/${created.id}/maintenances`, { description: 'x' }), [], 404);
      expect((await mine.call('GET', '/v1/maintenance-windows')).body).toEqual([]);
    });
  });

  describe('maintenances and their status updates', () => {
    it('opens a maintenance with its first update, dated as the window unless told', async () => {
      const { call, window, maintenance } = await freshAccount();
      const created = await window();
      const held = await maintenance(created.id, { description: 'Upgrading PostgreSQL', notifySubscribers: true });
      expect(held).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        maintenanceWindowId: created.id,
        status: 'SCHEDULED',
        startsAt: STARTS,
        endsAt: ENDS,
        created_at: expect.any(String),
        updates: [
          {
            id: expect.any(String),
            maintenanceWindowId: created.id,
            maintenanceId: held.id,
            status: 'SCHEDULED',
            description: 'Upgrading PostgreSQL',
            notifySubscribers: true,
            created_at: expect.any(String),
            previousStatus: null,
            previousStartsAt: null,
            previousEndsAt: null,
            dateAdjustments: null,
          },
        ],
      });
      expect((await call('GET', `/v1/maintenance-windows/${created.id}/maintenances/${held.id}`)).body).toEqual(held);
      const now = await maintenance(created.id, { status: 'IN_PROGRESS', startsAt: '2026-12-02T00:00:00Z', endsAt: '2026-12-02T01:00:00Z' });
      expect(now).toMatchObject({ status: 'IN_PROGRESS', startsAt: '2026-12-02T00:00:00.000Z', endsAt: '2026-12-02T01:00:00.000Z' });
      expect((await call('GET', `/v1/maintenance-windows/${created.id}/maintenances`)).body).toEqual([held, now]);
    });

    it.each([
      ['no description', {}, ['description']],
      ['a description over 2,000 characters', { description: 'x'.repeat(2001) }, ['description']],
      ['a first status that is not SCHEDULED or IN_PROGRESS', { description: 'x', status: 'COMPLETED' }, ['status']],
      ['an end before the start', { description: 'x', endsAt: '2026-11-01T00:00:00Z' }, ['endsAt']],
    ])('refuses to open one with %s: 400 naming the field', async (_case, body, fields) => {
      const { call, window } = await freshAccount();
      const created = await window();
      expectErrorB(await call('POST', `/v1/maintenance-windows/${created.id}/maintenances`, body), fields);
      expect((await call('GET', `/v1/maintenance-windows/${created.id}/maintenances`)).body).toEqual([]);
    });

    it('adds updates along the transitions, keeps the status when none is sent, and records what came before', async () => {
      const { call, window, maintenance } = await freshAccount();
      const created = await window();
      const held = await maintenance(created.id);
      const updates = `/v1/maintenance-windows/${created.id}/maintenances/${held.id}/updates`;

      const started = await call('POST', updates, { description: 'Started', status: 'IN_PROGRESS' });
      expect(started.status).toBe(201);
      expect(started.body).toMatchObject({ status: 'IN_PROGRESS', previousStatus: 'SCHEDULED', dateAdjustments: null, notifySubscribers: false });

      const note = await call('POST', updates, { description: 'Half way' });
      expect(note.body).toMatchObject({ status: 'IN_PROGRESS', previousStatus: 'IN_PROGRESS' });

      const longer = await call('POST', updates, { description: 'Taking longer', endsAt: '2026-12-01T05:30:00Z' });
      expect(longer.body).toMatchObject({
        status: 'IN_PROGRESS',
        previousStartsAt: STARTS,
        previousEndsAt: ENDS,
        dateAdjustments: { startsAt: STARTS, endsAt: '2026-12-01T05:30:00.000Z' },
      });

      expectErrorB(await call('POST', updates, { description: 'Back to plan', status: 'SCHEDULED' }), ['status']);
      expect((await call('POST', updates, { description: 'Checking', status: 'VERIFYING' })).status).toBe(201);
      expect((await call('POST', updates, { description: 'Done', status: 'COMPLETED' })).status).toBe(201);
      expectErrorB(await call('POST', updates, { description: 'One more thing' }), ['status']);

      const read = (await call('GET', `/v1/maintenance-windows/${created.id}/maintenances/${held.id}`)).body;
      expect(read.status).toBe('COMPLETED');
      expect(read.endsAt).toBe('2026-12-01T05:30:00.000Z');
      expect(read.updates.map((u: { status: string }) => u.status)).toEqual([
        'SCHEDULED', 'IN_PROGRESS', 'IN_PROGRESS', 'IN_PROGRESS', 'VERIFYING', 'COMPLETED',
      ]);
    });

    it('edits an update: new description, stored status kept when none is sent', async () => {
      const { call, window, maintenance } = await freshAccount();
      const created = await window();
      const held = await maintenance(created.id);
      const first = held.updates[0];
      const path = `/v1/maintenance-windows/${created.id}/maintenances/${held.id}/updates/${first.id}`;
      const edited = await call('PUT', path, { description: 'Planned: PostgreSQL 17' });
      expect(edited.status).toBe(200);
      expect(edited.body).toEqual({ ...first, description: 'Planned: PostgreSQL 17' });
      const changed = await call('PUT', path, { description: 'Started early', status: 'IN_PROGRESS' });
      expect(changed.body).toMatchObject({ status: 'IN_PROGRESS', description: 'Started early' });
      expect((await call('GET', `/v1/maintenance-windows/${created.id}/maintenances/${held.id}`)).body.status).toBe('IN_PROGRESS');
    });

    it('changes the status of the latest update only, along the transitions', async () => {
      const { call, window, maintenance } = await freshAccount();
      const created = await window();
      const held = await maintenance(created.id);
      const base = `/v1/maintenance-windows/${created.id}/maintenances/${held.id}/updates`;
      const latest = (await call('POST', base, { description: 'Started', status: 'IN_PROGRESS' })).body;
      expectErrorB(await call('PUT', `${base}/${held.updates[0].id}`, { description: 'x', status: 'CANCELLED' }), ['status']);
      expectErrorB(await call('PUT', `${base}/${latest.id}`, { description: 'x', status: 'VERIFYING' }), ['status']);
      // Judged from the status before this update (SCHEDULED), not from the one it had.
      expectErrorB(await call('PUT', `${base}/${latest.id}`, { description: 'x', status: 'COMPLETED' }), ['status']);
      const calledOff = await call('PUT', `${base}/${latest.id}`, { description: 'Called off', status: 'CANCELLED' });
      expect(calledOff.body).toMatchObject({ status: 'CANCELLED', previousStatus: 'SCHEDULED' });
      expect((await call('GET', `/v1/maintenance-windows/${created.id}/maintenances/${held.id}`)).body.status).toBe('CANCELLED');
    });

    it.each([
      ['no description', { status: 'IN_PROGRESS' }, ['description']],
      ['a description over 2,000 characters', { description: 'x'.repeat(2001) }, ['description']],
      ['an unknown status', { description: 'x', status: 'DONE' }, ['status']],
    ])('refuses an edit with %s: 400 naming the field, nothing changed', async (_case, body, fields) => {
      const { call, window, maintenance } = await freshAccount();
      const created = await window();
      const held = await maintenance(created.id);
      const path = `/v1/maintenance-windows/${created.id}/maintenances/${held.id}/updates/${held.updates[0].id}`;
      expectErrorB(await call('PUT', path, body), fields);
      expect((await call('GET', `/v1/maintenance-windows/${created.id}/maintenances/${held.id}`)).body).toEqual(held);
    });

    it('answers 404 (shape B: writes) for an unknown maintenance or update, and for another account\'s', async () => {
      const mine = await freshAccount();
      const theirs = await freshAccount();
      const created = await theirs.window();
      const held = await theirs.maintenance(created.id);
      const path = `/v1/maintenance-windows/${created.id}/maintenances/${held.id}/updates/${held.updates[0].id}`;
      expectErrorB(await mine.call('PUT', path, { description: 'x' }), [], 404);
      expectErrorB(await theirs.call('PUT', path.replace(held.updates[0].id, randomUUID()), { description: 'x' }), [], 404);
      expectErrorB(await theirs.call('POST', `/v1/maintenance-windows/${created.id}/maintenances/${randomUUID()}/updates`, { description: 'x' }), [], 404);
    });
  });

  it('answers 401 without a key and 403 with another account\'s id', async () => {
    const other = await createSecondAccount(service);
    expectErrorA(await service.raw('GET', '/v1/maintenance-windows'), 401, 'Unauthorized');
    expectErrorA(
      await service.raw('GET', '/v1/maintenance-windows', undefined, { authorization: `Bearer ${service.apiKey}`, 'x-service-account': other.accountId }),
      403,
      'Forbidden',
    );
  });
});
