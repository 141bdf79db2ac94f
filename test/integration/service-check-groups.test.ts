import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/protocol/agent-api.js';
import {
  asNewAccount,
  createSecondAccount,
  eventually,
  expectErrorA,
  expectErrorANaming,
  expectErrorB,
  ManualAgent,
} from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type ApiAnswer, type TestService } from '../support/service.js';

const MASK = '*****';
const SCRIPT = "const { test } = require('@playwright/test');\ntest('t', async () => {});\n";
const SCRIPT_AGENT = { checkTypes: ['MULTI_STEP'] as Job['checkType'][], runtimes: ['2026.04', '2025.04'] };

describe.each(DB_KINDS)('check groups (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind, { tickMs: 100 });
  });
  afterAll(async () => service?.close());

  /** An account of its own: its groups, checks and jobs are only the test's. */
  async function freshAccount() {
    const { account, call } = await asNewAccount(service);
    const location = async () => {
      const slugName = `grp-${randomUUID().slice(0, 8)}`;
      const created = await call('POST', '/v1/private-locations', { name: 'Rack', slugName });
      const key = await call('POST', `/v1/private-locations/${created.body.id}/keys`);
      return { slugName, rawKey: key.body.rawKey as string };
    };
    const group = async (body: Record<string, unknown> = {}) => {
      const answer = await call('POST', '/v1/check-groups', { name: `group ${randomUUID().slice(0, 6)}`, activated: true, ...body });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body;
    };
    const check = async (body: Record<string, unknown>) => {
      const answer = await call('POST', '/v1/checks/multistep', { name: 'member', script: SCRIPT, activated: false, ...body });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body;
    };
    return { account, call, location, group, check };
  }

  describe('create and read', () => {
    it('creates a group from a name and activated alone, every default filled in, and reads it back', async () => {
      const { call } = await freshAccount();
      const created = await call('POST', '/v1/check-groups', { name: 'Checkout', activated: true });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(Number),
        name: 'Checkout',
        activated: true,
        concurrency: 3,
        apiCheckDefaults: { url: '', headers: [], queryParameters: [], assertions: [], basicAuth: { username: '', password: '' } },
        muted: false,
        tags: [],
        locations: [],
        browserCheckDefaults: '',
        environmentVariables: [],
        doubleCheck: true,
        useGlobalAlertSettings: true,
        alertSettings: null,
        alertChannelSubscriptions: [],
        setupSnippetId: null,
        tearDownSnippetId: null,
        localSetupScript: null,
        localTearDownScript: null,
        runtimeId: null,
        playwrightConfig: null,
        privateLocations: [],
        retryStrategy: 'FALLBACK',
        runParallel: false,
        created_at: expect.any(String),
        updated_at: null,
      });
      expect(Number.isInteger(created.body.id)).toBe(true);
      expect((await call('GET', `/v1/check-groups/${created.body.id}`)).body).toEqual(created.body);
    });

    it('stores every field as sent, with secret values masked on every read', async () => {
      const { call, location } = await freshAccount();
      const { slugName } = await location();
      const channel = (await call('POST', '/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.test' } })).body;
      const body = {
        name: 'Payments',
        activated: false,
        concurrency: 5,
        apiCheckDefaults: {
          url: 'https://api.shop.test',
          headers: [{ key: 'X-Env', value: 'prod' }],
          queryParameters: [{ key: 'debug', value: '0' }],
          assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
          basicAuth: { username: 'ops', password: 'pw' },
        },
        muted: true,
        tags: ['payments', 'prod'],
        locations: [],
        browserCheckDefaults: '',
        environmentVariables: [
          { key: 'BASE_URL', value: 'https://shop.test', locked: true, secret: false },
          { key: 'TOKEN', value: 'group-secret', locked: false, secret: true },
        ],
        doubleCheck: false,
        useGlobalAlertSettings: false,
        alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
        alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
        setupSnippetId: 1,
        tearDownSnippetId: 2,
        localSetupScript: 'request.headers["x-a"] = "1";',
        localTearDownScript: 'console.log(response.statusCode);',
        runtimeId: '2025.04',
        playwrightConfig: { use: { baseURL: 'https://shop.example.test', viewport: { width: 1280, height: 720 } }, expect: { timeout: 5000 } },
        privateLocations: [slugName],
        retryStrategy: { baseBackoffSeconds: 30, sameRegion: true, maxRetries: 2, maxDurationSeconds: 600, onlyOn: [] },
        runParallel: true,
      };
      const created = await call('POST', '/v1/check-groups', body);
      expect(created.status).toBe(201);
      const shown = {
        ...body,
        environmentVariables: [body.environmentVariables[0], { key: 'TOKEN', value: MASK, locked: false, secret: true }],
      };
      expect(created.body).toEqual({ ...shown, id: expect.any(Number), created_at: expect.any(String), updated_at: null });
      expect((await call('GET', `/v1/check-groups/${created.body.id}`)).body).toEqual(created.body);
      expect(JSON.stringify((await call('GET', '/v1/check-groups')).body)).not.toContain('group-secret');
    });

    it.each([
      ['no name', { name: undefined }, ['name']],
      ['no activated', { activated: undefined }, ['activated']],
      ['concurrency 0', { concurrency: 0 }, ['concurrency']],
      ['concurrency 101', { concurrency: 101 }, ['concurrency']],
      ['a fractional concurrency', { concurrency: 1.5 }, ['concurrency']],
      ['a retryStrategy that is another word', { retryStrategy: 'SOMETIMES' }, ['retryStrategy']],
      ['an unknown runtime', { runtimeId: '1999.01' }, ['runtimeId']],
      ['an unknown data-center location', { locations: ['mars-north-1'] }, ['locations.0']],
      ['a data-center location, which this installation has none of', { locations: ['eu-west-1'] }, ['locations']],
      ['an unknown private location', { privateLocations: ['nowhere'] }, ['privateLocations']],
      ['a reserved variable name', { environmentVariables: [{ key: 'SERVICE_SECRET_X', value: 'x' }] }, ['environmentVariables.0.key']],
      ['101 variables', { environmentVariables: Array.from({ length: 101 }, (_, i) => ({ key: `V${i}`, value: 'x' })) }, ['environmentVariables']],
      ['a negative snippet id', { setupSnippetId: -1 }, ['setupSnippetId']],
      ['a string for muted', { muted: 'yes' }, ['muted']],
    ])('refuses %s: 400 naming the field, nothing stored', async (_case, extra, fields) => {
      const { call } = await freshAccount();
      expectErrorB(await call('POST', '/v1/check-groups', { name: 'x', activated: true, ...extra }), fields);
      expect((await call('GET', '/v1/check-groups')).body).toEqual([]);
    });

    it('subscribes a new group to autoSubscribe channels unless autoAssignAlerts=false, and refuses unknown channels', async () => {
      const { call } = await freshAccount();
      const auto = await call('POST', '/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.test' }, autoSubscribe: true });
      const assigned = await call('POST', '/v1/check-groups', { name: 'a', activated: true });
      expect(assigned.body.alertChannelSubscriptions).toEqual([{ alertChannelId: auto.body.id, activated: true }]);
      const plain = await call('POST', '/v1/check-groups?autoAssignAlerts=false', { name: 'b', activated: true });
      expect(plain.body.alertChannelSubscriptions).toEqual([]);
      expectErrorB(
        await call('POST', '/v1/check-groups', { name: 'c', activated: true, alertChannelSubscriptions: [{ alertChannelId: 999_999, activated: true }] }),
        ['alertChannelSubscriptions.0.alertChannelId'],
      );
    });

    it('answers 404 in shape A for an unknown group, and for another account\'s', async () => {
      const mine = await freshAccount();
      const theirs = await freshAccount();
      const group = await theirs.group();
      expectErrorA(await mine.call('GET', `/v1/check-groups/${group.id}`), 404, 'Not Found');
      expectErrorA(await mine.call('GET', '/v1/check-groups/2147483647'), 404, 'Not Found');
      expectErrorANaming(await mine.call('GET', '/v1/check-groups/abc'), ['id']);
    });
  });

  describe('list', () => {
    it('pages oldest first, and filters by any of the tags and by exact names', async () => {
      const { call, group } = await freshAccount();
      const a = await group({ name: 'Alpha', tags: ['web'] });
      const b = await group({ name: 'Beta', tags: ['api', 'prod'] });
      const c = await group({ name: 'Gamma', tags: ['prod'] });
      const ids = (answer: ApiAnswer) => answer.body.map((g: { id: number }) => g.id);
      expect(ids(await call('GET', '/v1/check-groups'))).toEqual([a.id, b.id, c.id]);
      expect(ids(await call('GET', '/v1/check-groups?limit=2&page=2'))).toEqual([c.id]);
      expect(ids(await call('GET', '/v1/check-groups?tag=prod'))).toEqual([b.id, c.id]);
      expect(ids(await call('GET', '/v1/check-groups?tag=web&tag=api'))).toEqual([a.id, b.id]);
      expect(ids(await call('GET', '/v1/check-groups?name=Gamma&name=Alpha'))).toEqual([a.id, c.id]);
      expect(ids(await call('GET', '/v1/check-groups?name=alpha'))).toEqual([]);
      expect(ids(await call('GET', '/v1/check-groups?tag=prod&name=Beta'))).toEqual([b.id]);
      expectErrorANaming(await call('GET', '/v1/check-groups?limit=101'), ['limit']);
      expectErrorANaming(await call('GET', '/v1/check-groups?page=0'), ['page']);
    });
  });

  describe('update (V2)', () => {
    it('changes what is sent, keeps the rest, and keeps a masked secret', async () => {
      const { call, group } = await freshAccount();
      const created = await group({ tags: ['a'], environmentVariables: [{ key: 'TOKEN', value: 'kept', secret: true }] });
      const updated = await call('PUT', `/v2/check-groups/${created.id}?autoAssignAlerts=false`, {
        concurrency: 7,
        environmentVariables: [{ key: 'TOKEN', value: MASK, secret: true }],
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({ ...created, concurrency: 7, updated_at: expect.any(String) });
      const stored = await service.service.db.query<{ definition: { environmentVariables: { value: string }[] } }>(
        'SELECT definition FROM check_groups WHERE id = $1',
        [created.id],
      );
      expect(stored[0]!.definition.environmentVariables[0]!.value).toBe('kept');
    });

    it('refuses an invalid change with 400 naming the field, and changes nothing', async () => {
      const { call, group } = await freshAccount();
      const created = await group();
      expectErrorB(await call('PUT', `/v2/check-groups/${created.id}`, { concurrency: 0 }), ['concurrency']);
      expectErrorB(await call('PUT', `/v2/check-groups/${created.id}`, { name: null }), ['name']);
      expectErrorB(await call('PUT', `/v2/check-groups/${created.id}`, {}), ['(root)']);
      expect((await call('GET', `/v1/check-groups/${created.id}`)).body).toEqual(created);
    });

    it('answers 404 in shape B (a write) for an unknown group', async () => {
      const { call } = await freshAccount();
      expectErrorB(await call('PUT', '/v2/check-groups/999999', { concurrency: 2 }), [], 404);
    });
  });

  describe('delete', () => {
    it('deletes an empty group (204), refuses one with checks (409, shape B) and an unknown one (404, shape B)', async () => {
      const { call, group, check } = await freshAccount();
      const empty = await group();
      const deleted = await call('DELETE', `/v1/check-groups/${empty.id}`);
      expect(deleted.status).toBe(204);
      expectErrorA(await call('GET', `/v1/check-groups/${empty.id}`), 404, 'Not Found');
      expectErrorB(await call('DELETE', `/v1/check-groups/${empty.id}`), ['id'], 404);

      const full = await group();
      const member = await check({ groupId: full.id });
      expectErrorB(await call('DELETE', `/v1/check-groups/${full.id}`), ['id'], 409);
      await call('DELETE', `/v1/checks/${member.id}`);
      expect((await call('DELETE', `/v1/check-groups/${full.id}`)).status).toBe(204);
    });
  });

  describe('membership', () => {
    it('refuses a check in a group that is not the account\'s: 400 naming groupId', async () => {
      const mine = await freshAccount();
      const theirs = await freshAccount();
      const foreign = await theirs.group();
      expectErrorB(await mine.call('POST', '/v1/checks/multistep', { name: 'x', script: SCRIPT, groupId: foreign.id }), ['groupId']);
      expectErrorB(await mine.call('POST', '/v1/checks/multistep', { name: 'x', script: SCRIPT, groupId: 2_000_000_000 }), ['groupId']);
    });

    it('lists a group\'s checks in run order: groupOrder, then those without one', async () => {
      const { call, group, check } = await freshAccount();
      const g = await group();
      const unordered = await check({ name: 'unordered', groupId: g.id });
      const second = await check({ name: 'second', groupId: g.id, groupOrder: 2 });
      const first = await check({ name: 'first', groupId: g.id, groupOrder: 0.5 });
      await check({ name: 'elsewhere' });
      const listed = await call('GET', `/v1/check-groups/${g.id}/checks`);
      expect(listed.status).toBe(200);
      expect(listed.body.map((c: { id: string }) => c.id)).toEqual([first.id, second.id, unordered.id]);
    });
  });

  describe('runs', () => {
    it('runs a member check at the group\'s locations, with account < group < check variables and the group\'s runtime', async () => {
      const { call, location, group, check } = await freshAccount();
      const own = await location();
      const groupLocation = await location();
      await call('POST', '/v1/variables', { key: 'LAYER', value: 'account' });
      await call('POST', '/v1/variables', { key: 'ACCOUNT_ONLY', value: 'a' });
      const g = await group({
        privateLocations: [groupLocation.slugName],
        runtimeId: '2025.04',
        environmentVariables: [
          { key: 'LAYER', value: 'group' },
          { key: 'GROUP_ONLY', value: 'g', secret: true },
        ],
      });
      const member = await check({
        groupId: g.id,
        privateLocations: [own.slugName],
        environmentVariables: [{ key: 'CHECK_ONLY', value: 'c' }],
      });
      const atOwn = await new ManualAgent(service, own.rawKey).connect(SCRIPT_AGENT);
      const atGroup = await new ManualAgent(service, groupLocation.rawKey).connect(SCRIPT_AGENT);
      expect((await call('POST', '/v2/check-sessions/trigger', { target: { checkId: [member.id] } })).status).toBe(201);
      const job = await atGroup.claimOne();
      expect(job.runtimeId).toBe('2025.04');
      expect(job.environmentVariables).toEqual([
        { key: 'ACCOUNT_ONLY', value: 'a', secret: false },
        { key: 'LAYER', value: 'group', secret: false },
        { key: 'GROUP_ONLY', value: 'g', secret: true },
        { key: 'CHECK_ONLY', value: 'c', secret: false },
      ]);
      expect((await atOwn.claim()).body.jobs).toEqual([]);

      // A check's own runtime wins over the group's.
      await call('PUT', `/v1/checks/multistep/${member.id}`, { runtimeId: '2026.04' });
      await call('POST', '/v2/check-sessions/trigger', { target: { checkId: [member.id] } });
      expect((await atGroup.claimOne()).runtimeId).toBe('2026.04');
    });

    it("gives its multi-step checks that set none the group's Playwright config, whole; a check's own replaces it", async () => {
      const { call, location, group, check } = await freshAccount();
      const { slugName, rawKey } = await location();
      const groupConfig = { use: { baseURL: 'http://127.0.0.1:9/group', locale: 'de-DE' }, timeout: 30_000 };
      const g = await group({ playwrightConfig: groupConfig });
      expect(g.playwrightConfig).toEqual(groupConfig);
      const plain = await check({ groupId: g.id, privateLocations: [slugName] });
      const own = await check({ groupId: g.id, privateLocations: [slugName], playwrightConfig: { use: { baseURL: 'http://127.0.0.1:9/own' } } });
      const agent = await new ManualAgent(service, rawKey).connect(SCRIPT_AGENT);

      await call('POST', '/v2/check-sessions/trigger', { target: { checkId: [plain.id] } });
      expect((await agent.claimOne()).settings).toMatchObject({ playwrightConfig: groupConfig });
      await call('POST', '/v2/check-sessions/trigger', { target: { checkId: [own.id] } });
      expect((await agent.claimOne()).settings.playwrightConfig).toEqual({ use: { baseURL: 'http://127.0.0.1:9/own' } });

      // Without the group's, a check that sets none runs with none.
      expect((await call('PUT', `/v2/check-groups/${g.id}`, { playwrightConfig: null })).status).toBe(200);
      await call('POST', '/v2/check-sessions/trigger', { target: { checkId: [plain.id] } });
      expect((await agent.claimOne()).settings).not.toHaveProperty('playwrightConfig');
    });

    it('does not schedule the checks of a deactivated group, and runs them once it is switched on', async () => {
      const { call, location, group, check } = await freshAccount();
      const { slugName } = await location();
      const g = await group({ activated: false });
      const member = await check({ groupId: g.id, activated: true, frequency: 1, privateLocations: [slugName] });
      const sessions = () =>
        service.service.db.query<{ run_source: string }>('SELECT run_source FROM check_sessions WHERE check_id = $1', [member.id]);
      // Several scheduler ticks (100 ms each) pass without a run.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(await sessions()).toEqual([]);
      expect((await call('PUT', `/v2/check-groups/${g.id}`, { activated: true })).status).toBe(200);
      await eventually(async () => ((await sessions()).length > 0 ? true : undefined), 5000, 'a scheduled run');
      expect((await sessions())[0]!.run_source).toBe('SCHEDULER');
    });

    it('runs a whole group in groupOrder, never more than its concurrency at once', async () => {
      const { call, location, group, check } = await freshAccount();
      const { slugName, rawKey } = await location();
      const g = await group({ concurrency: 2 });
      const orders = [4, 0, 2, null, 1];
      const checks = [];
      for (const [index, groupOrder] of orders.entries()) {
        checks.push(await check({ name: `c${index}`, groupId: g.id, groupOrder, privateLocations: [slugName] }));
      }
      // Run order: groupOrder 0, 1, 2, 4, then the one without.
      const expected = [checks[1], checks[4], checks[2], checks[0], checks[3]].map((c) => c.id);

      const triggered = await call('POST', `/v1/check-groups/${g.id}/trigger`);
      expect(triggered.status).toBe(201);
      expect(triggered.body.sessions.map((s: { checkId: string }) => s.checkId)).toEqual(expected);
      for (const session of triggered.body.sessions) {
        expect(session).toMatchObject({ status: 'STARTED', runSource: 'GROUP_RUN_ALL', results: [] });
      }

      const agent = await new ManualAgent(service, rawKey).connect(SCRIPT_AGENT);
      const claimedOrder: string[] = [];
      const running: Job[] = [];
      while (claimedOrder.length < expected.length) {
        // Claim everything on offer: the service offers no more than the group's concurrency.
        const offered = (await agent.claim(0, 10)).body.jobs;
        running.push(...offered);
        claimedOrder.push(...offered.map((job) => job.checkId));
        expect(running.length).toBeLessThanOrEqual(2);
        if (offered.length === 0 && running.length === 0) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        if (running.length === 2 || claimedOrder.length === expected.length) {
          const done = running.shift()!;
          expect((await agent.report(done)).status).toBe(200);
        }
      }
      for (const job of running) await agent.report(job);
      expect(claimedOrder).toEqual(expected);
      for (const session of triggered.body.sessions) {
        const status = async () => (await call('GET', `/v1/check-sessions/${session.checkSessionId}`)).body.status;
        await eventually(async () => ((await status()) === 'PASSED' ? true : undefined), 5000, 'passed');
      }
    });

    it('moves on past a cancelled session of a group run', async () => {
      const { call, location, group, check } = await freshAccount();
      const { slugName, rawKey } = await location();
      const g = await group({ concurrency: 1 });
      const first = await check({ groupId: g.id, groupOrder: 0, privateLocations: [slugName] });
      const second = await check({ groupId: g.id, groupOrder: 1, privateLocations: [slugName] });
      const triggered = await call('POST', `/v1/check-groups/${g.id}/trigger`);
      const agent = await new ManualAgent(service, rawKey).connect(SCRIPT_AGENT);
      expect((await agent.claimOne()).checkId).toBe(first.id);
      expect((await agent.claim()).body.jobs).toEqual([]);
      await call('POST', `/v1/check-sessions/${triggered.body.sessions[0].checkSessionId}/cancel`);
      expect((await agent.claimOne()).checkId).toBe(second.id);
    });

    it('answers 404 and 400 in shape B (a write) for an unknown group and an empty one', async () => {
      const { call, group } = await freshAccount();
      expectErrorB(await call('POST', '/v1/check-groups/999999/trigger'), [], 404);
      const empty = await group();
      expectErrorB(await call('POST', `/v1/check-groups/${empty.id}/trigger`), ['id']);
    });
  });

  it('answers 401 without a key and 403 with another account\'s id', async () => {
    const other = await createSecondAccount(service);
    expectErrorA(await service.raw('GET', '/v1/check-groups'), 401, 'Unauthorized');
    expectErrorA(
      await service.raw('GET', '/v1/check-groups', undefined, { authorization: `Bearer ${service.apiKey}`, 'x-service-account': other.accountId }),
      403,
      'Forbidden',
    );
  });
});
