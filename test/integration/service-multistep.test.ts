import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/protocol/agent-api.js';
import { MAX_SCRIPT_CHARS } from '../../src/protocol/multistep-settings.js';
import {
  createIdleUrlCheck,
  createSecondAccount,
  expectErrorB,
  getSession,
  ManualAgent,
  triggerCheck,
} from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

const SCRIPT = `const { test, expect } = require('@playwright/test');
test('login', async ({ request }) => {
  await test.step('open', async () => expect((await request.get(process.env.BASE_URL)).ok()).toBeTruthy());
});
`;
const MASK = '*****';

describe.each(DB_KINDS)('multi-step checks (%s)', (kind) => {
  let service: TestService;
  let slug: string;

  beforeAll(async () => {
    service = await startTestService(kind);
    slug = (await service.privateLocation()).slugName;
  });
  afterAll(() => service?.close());

  const create = (extra: Record<string, unknown> = {}, query = '') =>
    service.api('POST', `/v1/checks/multistep${query}`, { name: 'Login journey', script: SCRIPT, ...extra });

  /** A check the scheduler leaves alone, so the only jobs are the ones a test triggers. */
  async function idleCheck(extra: Record<string, unknown> = {}): Promise<any> {
    const answer = await create({ activated: false, ...extra });
    if (answer.status !== 201) throw new Error(`creating a check: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  /** A fresh location and agents there, each saying hello with the given check types and runtimes. */
  async function locationWithAgents(...hellos: { checkTypes: Job['checkType'][]; runtimes: string[] }[]) {
    const location = await service.privateLocation();
    const agents = await Promise.all(hellos.map((hello) => new ManualAgent(service, location.rawKey).connect(hello)));
    return { location, agents };
  }

  describe('create', () => {
    it('answers 201 with every default filled in, and reads back the same', async () => {
      const created = await create();
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        checkType: 'MULTI_STEP',
        name: 'Login journey',
        script: SCRIPT,
        activated: true,
        muted: false,
        doubleCheck: true,
        shouldFail: false,
        locations: [],
        tags: [],
        alertSettings: null,
        useGlobalAlertSettings: true,
        groupId: null,
        groupOrder: null,
        runtimeId: null,
        playwrightConfig: null,
        alertChannelSubscriptions: [],
        retryStrategy: null,
        triggerIncident: null,
        runParallel: false,
        description: null,
        environmentVariables: [],
        frequency: 10,
        privateLocations: [],
        alertChannels: { email: [], webhook: [], slack: [], sms: [] },
        created_at: expect.any(String),
        updated_at: null,
      });
      expect((await service.api('GET', `/v1/checks/${created.body.id}`)).body).toEqual(created.body);
    });

    it('stores every field as sent; scriptPath and dependencies are accepted but never answered', async () => {
      const group = await service.api('POST', '/v1/check-groups', { name: 'Checkout', activated: false });
      expect(group.status).toBe(201);
      const channel = await service.api('POST', '/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.test' } });
      const serviceId = (await service.api('POST', '/v1/status-pages/services', { name: `Checkout ${randomUUID()}` })).body.id;
      const body = {
        activated: false,
        muted: true,
        doubleCheck: false,
        shouldFail: true,
        locations: [],
        tags: ['checkout', 'prod'],
        alertSettings: {
          escalationType: 'RUN_BASED',
          runBasedEscalation: { failedRunThreshold: 2 },
          reminders: { amount: 1, interval: 5 },
          parallelRunFailureThreshold: { enabled: true, percentage: 50 },
        },
        useGlobalAlertSettings: false,
        groupId: group.body.id,
        groupOrder: 0,
        runtimeId: '2025.04',
        alertChannelSubscriptions: [{ alertChannelId: channel.body.id, activated: true }],
        retryStrategy: { baseBackoffSeconds: 60, sameRegion: true, maxRetries: 2, maxDurationSeconds: 600, onlyOn: ['NETWORK_ERROR'] },
        triggerIncident: { serviceId, name: 'Checkout down', description: 'Customers cannot pay', notifySubscribers: true },
        runParallel: true,
        description: 'Logs in and pays',
        checkType: 'MULTI_STEP',
        environmentVariables: [{ key: 'BASE_URL', value: 'https://shop.test', locked: true, secret: false }],
        frequency: 5,
        scriptPath: 'checks/login.spec.js',
        playwrightConfig: { use: { baseURL: 'https://shop.test', viewport: { width: 1280, height: 720 }, locale: 'de-DE' }, expect: { timeout: 8000 }, timeout: 60_000 },
        privateLocations: [slug],
        dependencies: [{ path: 'helpers/login.js', content: 'module.exports = {};' }],
      };
      const created = await create(body);
      expect(created.status).toBe(201);
      const { scriptPath: _scriptPath, dependencies: _dependencies, ...answered } = body;
      expect(created.body).toEqual({
        ...answered,
        id: expect.any(String),
        name: 'Login journey',
        script: SCRIPT,
        alertChannels: { email: [{ address: 'ops@example.test' }], webhook: [], slack: [], sms: [] },
        created_at: expect.any(String),
        updated_at: null,
      });
      const read = await service.api('GET', `/v1/checks/${created.body.id}`);
      const listed = (await service.api('GET', '/v1/checks?limit=100')).body.find((check: any) => check.id === created.body.id);
      for (const answer of [created.body, read.body, listed]) {
        expect(answer).not.toHaveProperty('scriptPath');
        expect(answer).not.toHaveProperty('dependencies');
      }
      expect(read.body).toEqual(created.body);
      expect(listed).toEqual(created.body);
    });

    it('takes null for the lists the spec lets be null as empty', async () => {
      const created = await create({ locations: null, privateLocations: null, environmentVariables: null, dependencies: null });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ locations: [], privateLocations: [], environmentVariables: [] });
    });

    it('accepts autoAssignAlerts, true or false, and refuses anything else', async () => {
      expect((await create({}, '?autoAssignAlerts=false')).status).toBe(201);
      const assigned = await create({}, '?autoAssignAlerts=true');
      expect(assigned.status).toBe(201);
      // No alert channels exist in this service yet: there is nothing to subscribe to.
      expect(assigned.body.alertChannels).toEqual({ email: [], webhook: [], slack: [], sms: [] });
      expectErrorB(await create({}, '?autoAssignAlerts=maybe'), ['autoAssignAlerts']);
    });

    it('accepts every runtime that runs multi-step checks and has not been removed', async () => {
      for (const runtimeId of ['2026.04', '2025.04', '2024.09']) {
        const created = await create({ runtimeId });
        expect(created.status, runtimeId).toBe(201);
        expect(created.body.runtimeId).toBe(runtimeId);
      }
    });
  });

  describe('validation', () => {
    const variables = (count: number) =>
      Array.from({ length: count }, (_, index) => ({ key: `VAR_${index}`, value: String(index) }));
    const dependencies = (count: number, size = 10) =>
      Array.from({ length: count }, (_, index) => ({ path: `lib/file-${index}.js`, content: 'x'.repeat(size) }));

    it.each<[string, Record<string, unknown>, string[]]>([
      ['no name', { name: undefined }, ['name']],
      ['an empty name', { name: '' }, ['name']],
      ['no script', { script: undefined }, ['script']],
      ['a null script', { script: null }, ['script']],
      ['an empty script', { script: '' }, ['script']],
      ['a script of white space only', { script: ' \n\t ' }, ['script']],
      ['a script over the cap', { script: 'x'.repeat(MAX_SCRIPT_CHARS + 1) }, ['script']],
      ['a string for activated', { activated: 'yes' }, ['activated']],
      ['a number for muted', { muted: 1 }, ['muted']],
      ['a string for doubleCheck', { doubleCheck: 'true' }, ['doubleCheck']],
      ['a string for shouldFail', { shouldFail: 'false' }, ['shouldFail']],
      ['a string for useGlobalAlertSettings', { useGlobalAlertSettings: 'no' }, ['useGlobalAlertSettings']],
      ['a string for runParallel', { runParallel: 'no' }, ['runParallel']],
      ['an unknown location', { locations: ['mars-north-1'] }, ['locations.0']],
      ['an unknown private location', { privateLocations: ['nowhere'] }, ['privateLocations']],
      ['a frequency outside the set', { frequency: 7 }, ['frequency']],
      ['a string frequency', { frequency: '10' }, ['frequency']],
      ['a description over 500 characters', { description: 'd'.repeat(501) }, ['description']],
      ['another check type', { checkType: 'BROWSER' }, ['checkType']],
      ['a negative groupOrder', { groupOrder: -1 }, ['groupOrder']],
      ['a string groupId', { groupId: 'group' }, ['groupId']],
      ['a runtime outside the set', { runtimeId: '2099.01' }, ['runtimeId']],
      ['a runtime without multi-step support', { runtimeId: '2023.02' }, ['runtimeId']],
      ['a removed runtime', { runtimeId: '2024.02' }, ['runtimeId']],
      ['tags that are not strings', { tags: [1] }, ['tags.0']],
      ['an alert channel subscription without an id', { alertChannelSubscriptions: [{ activated: true }] }, ['alertChannelSubscriptions.0.alertChannelId']],
      ['a negative retry count', { retryStrategy: { maxRetries: -1 } }, ['retryStrategy.maxRetries']],
      ['a percentage over 100', { alertSettings: { parallelRunFailureThreshold: { percentage: 101 } } }, ['alertSettings.parallelRunFailureThreshold.percentage']],
      ['a string for notifySubscribers', { triggerIncident: { notifySubscribers: 'yes' } }, ['triggerIncident.notifySubscribers']],
      ['more than 100 environment variables', { environmentVariables: variables(101) }, ['environmentVariables']],
      ['a variable name starting with a digit', { environmentVariables: [{ key: '1PASSWORD', value: 'x' }] }, ['environmentVariables.0.key']],
      ['a variable name with a dash', { environmentVariables: [{ key: 'API-KEY', value: 'x' }] }, ['environmentVariables.0.key']],
      ['a variable name with a space', { environmentVariables: [{ key: 'API KEY', value: 'x' }] }, ['environmentVariables.0.key']],
      ['an empty variable name', { environmentVariables: [{ key: '', value: 'x' }] }, ['environmentVariables.0.key']],
      ['a variable without a value', { environmentVariables: [{ key: 'TOKEN' }] }, ['environmentVariables.0.value']],
      ['a string for secret', { environmentVariables: [{ key: 'TOKEN', value: 'x', secret: 'yes' }] }, ['environmentVariables.0.secret']],
      ['a variable named SERVICE', { environmentVariables: [{ key: 'SERVICE', value: 'x' }] }, ['environmentVariables.0.key']],
      ['a variable named CI', { environmentVariables: [{ key: 'CI', value: 'true' }] }, ['environmentVariables.0.key']],
      ['a SERVICE_SECRET_ variable', { environmentVariables: [{ key: 'SERVICE_SECRET_TOKEN', value: 'x' }] }, ['environmentVariables.0.key']],
      ['a repeated variable', { environmentVariables: [{ key: 'A', value: '1' }, { key: 'B', value: '2' }, { key: 'A', value: '3' }] }, ['environmentVariables.2.key']],
      ['a dependency path with ..', { dependencies: [{ path: '../outside.js', content: '' }] }, ['dependencies.0.path']],
      ['a dependency path climbing out from inside', { dependencies: [{ path: 'lib/../../outside.js', content: '' }] }, ['dependencies.0.path']],
      ['a dependency path of .. alone', { dependencies: [{ path: '..', content: '' }] }, ['dependencies.0.path']],
      ['an absolute dependency path', { dependencies: [{ path: '/etc/passwd', content: '' }] }, ['dependencies.0.path']],
      ['a dependency path with ./', { dependencies: [{ path: './lib.js', content: '' }] }, ['dependencies.0.path']],
      ['a dependency path with //', { dependencies: [{ path: 'lib//a.js', content: '' }] }, ['dependencies.0.path']],
      ['a dependency path ending in /', { dependencies: [{ path: 'lib/', content: '' }] }, ['dependencies.0.path']],
      ['a dependency path with \\', { dependencies: [{ path: 'lib\\..\\..\\a.js', content: '' }] }, ['dependencies.0.path']],
      ['an empty dependency path', { dependencies: [{ path: '', content: '' }] }, ['dependencies.0.path']],
      ['a repeated dependency path', { dependencies: [{ path: 'a.js', content: '' }, { path: 'a.js', content: '' }] }, ['dependencies.1.path']],
      ['a dependency without content', { dependencies: [{ path: 'a.js' }] }, ['dependencies.0.content']],
      ['more than 100 dependencies', { dependencies: dependencies(101) }, ['dependencies']],
      ['a dependency over the per-file cap', { dependencies: dependencies(1, 524_289) }, ['dependencies.0.content']],
      ['dependencies over the total cap', { dependencies: dependencies(5, 500_000) }, ['dependencies']],
      ['a script path climbing out', { scriptPath: '../login.spec.ts' }, ['scriptPath']],
      ['a script path that is not a script', { scriptPath: 'checks/login.txt' }, ['scriptPath']],
      ['a script path a dependency also has', { scriptPath: 'a.spec.ts', dependencies: [{ path: 'a.spec.ts', content: '' }] }, ['scriptPath']],
      ['a base URL that is not a string', { playwrightConfig: { use: { baseURL: 5 } } }, ['playwrightConfig.use.baseURL']],
      ['a viewport of no width', { playwrightConfig: { use: { viewport: { width: 0 } } } }, ['playwrightConfig.use.viewport.width']],
      ['a test timeout beyond the run', { playwrightConfig: { timeout: 600_000 } }, ['playwrightConfig.timeout']],
    ])('refuses %s: 400 shape B naming the field', async (_what, change, fields) => {
      const answer = await create(change);
      expectErrorB(answer, fields);
    });

    it('says why a runtime is refused', async () => {
      const unsupported = await create({ runtimeId: '2023.02' });
      expect(unsupported.body.attributes.runtimeId).toMatch(/does not support multi-step checks.*2026\.04/);
      const removed = await create({ runtimeId: '2024.02' });
      expect(removed.body.attributes.runtimeId).toMatch(/was removed.*2026\.04/);
      const reserved = await create({ environmentVariables: [{ key: 'SERVICE_SECRET_TOKEN', value: 'x' }] });
      expect(reserved.body.attributes['environmentVariables.0.key']).toMatch(/reserved/);
    });

    it('accepts exactly 100 variables, 100 dependencies, a script at the cap and mixed-case names', async () => {
      const created = await create({
        script: 'x'.repeat(MAX_SCRIPT_CHARS),
        environmentVariables: [...variables(99), { key: 'camelCase_Name2', value: 'v' }],
        dependencies: dependencies(100),
      });
      expect(created.status).toBe(201);
      expect(created.body.environmentVariables).toHaveLength(100);
    });
  });

  describe('authentication', () => {
    it('answers 401 without a key or with an unknown one, and 403 for another account', async () => {
      const body = { name: 'x', script: SCRIPT };
      expectErrorB(await service.raw('POST', '/v1/checks/multistep', body, { 'x-service-account': service.accountId }), [], 401);
      expectErrorB(await service.raw('POST', '/v1/checks/multistep', body, {
          authorization: 'Bearer not-a-key',
          'x-service-account': service.accountId,
        }), [], 401);
      const other = await createSecondAccount(service);
      expectErrorB(await service.api('POST', '/v1/checks/multistep', body, { 'x-service-account': other.accountId }), [], 403);
      const created = await create();
      expectErrorB(await service.api('PUT', `/v1/checks/multistep/${created.body.id}`, { name: 'x' }, { 'x-service-account': other.accountId }), [], 403);
      // The other account's own key does not see this account's check at all.
      const theirs = { authorization: `Bearer ${other.apiKey}`, 'x-service-account': other.accountId };
      expect((await service.raw('GET', `/v1/checks/${created.body.id}`, undefined, theirs)).status).toBe(404);
      expect((await service.raw('PUT', `/v1/checks/multistep/${created.body.id}`, { name: 'x' }, theirs)).status).toBe(404);
      expect((await service.raw('DELETE', `/v1/checks/${created.body.id}`, undefined, theirs)).status).toBe(404);
    });
  });

  describe('secret environment variables', () => {
    it('are masked on create, read and list, and kept when an update sends the mask back', async () => {
      const created = await create({
        environmentVariables: [
          { key: 'API_TOKEN', value: 'tok-3f9a', secret: true },
          { key: 'BASE_URL', value: 'https://shop.test' },
        ],
      });
      expect(created.status).toBe(201);
      const masked = [
        { key: 'API_TOKEN', value: MASK, locked: false, secret: true },
        { key: 'BASE_URL', value: 'https://shop.test', locked: false, secret: false },
      ];
      expect(created.body.environmentVariables).toEqual(masked);
      const read = await service.api('GET', `/v1/checks/${created.body.id}`);
      const list = await service.api('GET', '/v1/checks?limit=100');
      expect(read.body.environmentVariables).toEqual(masked);
      expect(list.body.find((check: any) => check.id === created.body.id).environmentVariables).toEqual(masked);
      for (const answer of [created, read, list]) expect(JSON.stringify(answer.body)).not.toContain('tok-3f9a');

      // What a client read, sent back with one more variable: the secret stays what it was.
      const updated = await service.api('PUT', `/v1/checks/multistep/${created.body.id}`, {
        environmentVariables: [...read.body.environmentVariables, { key: 'PASSWORD', value: 'pw-81c2', secret: true }],
      });
      expect(updated.status).toBe(200);
      expect(updated.body.environmentVariables).toEqual([...masked, { key: 'PASSWORD', value: MASK, locked: false, secret: true }]);
      expect(JSON.stringify(updated.body)).not.toContain('pw-81c2');
      const stored = await service.service.db.query<{ definition: any }>('SELECT definition FROM checks WHERE id = $1', [
        created.body.id,
      ]);
      expect(stored[0]!.definition.environmentVariables.map((variable: any) => variable.value)).toEqual([
        'tok-3f9a',
        'https://shop.test',
        'pw-81c2',
      ]);

      // Clearing the flag while sending the mask does not reveal the value: it stays secret.
      const unflagged = await service.api('PUT', `/v1/checks/multistep/${created.body.id}`, {
        environmentVariables: [{ key: 'API_TOKEN', value: MASK, secret: false }],
      });
      expect(unflagged.body.environmentVariables).toEqual([{ key: 'API_TOKEN', value: MASK, locked: false, secret: true }]);
      expect(JSON.stringify((await service.api('GET', `/v1/checks/${created.body.id}`)).body)).not.toContain('tok-3f9a');

      // A new value replaces the secret; the mask for a key never stored as secret is taken literally.
      await service.api('PUT', `/v1/checks/multistep/${created.body.id}`, {
        environmentVariables: [
          { key: 'API_TOKEN', value: 'tok-rotated', secret: true },
          { key: 'BASE_URL', value: MASK },
        ],
      });
      const after = await service.service.db.query<{ definition: any }>('SELECT definition FROM checks WHERE id = $1', [
        created.body.id,
      ]);
      expect(after[0]!.definition.environmentVariables.map((variable: any) => variable.value)).toEqual(['tok-rotated', MASK]);
      // A secret made plain again needs its value sent.
      const plain = await service.api('PUT', `/v1/checks/multistep/${created.body.id}`, {
        environmentVariables: [{ key: 'API_TOKEN', value: 'tok-public', secret: false }],
      });
      expect(plain.body.environmentVariables).toEqual([{ key: 'API_TOKEN', value: 'tok-public', locked: false, secret: false }]);
    });
  });

  describe('update', () => {
    it('changes only the fields sent and validates the whole', async () => {
      const created = await idleCheck({
        frequency: 5,
        tags: ['a'],
        description: 'before',
        runtimeId: '2026.04',
        dependencies: [{ path: 'lib/a.js', content: 'a' }],
      });
      const changed = await service.api('PUT', `/v1/checks/multistep/${created.id}`, { name: 'renamed', runtimeId: '2025.04' });
      expect(changed.status).toBe(200);
      expect(changed.body).toEqual({
        ...created,
        name: 'renamed',
        runtimeId: '2025.04',
        updated_at: expect.any(String),
      });
      expectErrorB(await service.api('PUT', `/v1/checks/multistep/${created.id}`, { runtimeId: '2023.02' }), ['runtimeId']);
      expectErrorB(await service.api('PUT', `/v1/checks/multistep/${created.id}`, { script: '' }), ['script']);
      expectErrorB(
        await service.api('PUT', `/v1/checks/multistep/${created.id}`, { dependencies: [{ path: '../x.js', content: '' }] }),
        ['dependencies.0.path'],
      );
      expectErrorB(await service.api('PUT', `/v1/checks/multistep/${created.id}`, {}), ['(root)']);
      const read = await service.api('GET', `/v1/checks/${created.id}`);
      expect(read.body).toEqual(changed.body);
      const cleared = await service.api('PUT', `/v1/checks/multistep/${created.id}`, { runtimeId: null, description: null });
      expect(cleared.body).toMatchObject({ runtimeId: null, description: null, tags: ['a'], frequency: 5 });
    });

    it('answers 404 through another type\'s path, either way', async () => {
      const multi = await idleCheck();
      const url = await createIdleUrlCheck(service, [slug]);
      expectErrorB(await service.api('PUT', `/v1/checks/url/${multi.id}`, { name: 'x' }), [], 404);
      expectErrorB(await service.api('PUT', `/v1/checks/multistep/${url.id}`, { name: 'x' }), [], 404);
      expectErrorB(await service.api('PUT', `/v1/checks/multistep/${randomUUID()}`, { name: 'x' }), [], 404);
    });

    it('deletes through the generic route: 204, then 404', async () => {
      const created = await idleCheck();
      expect((await service.api('DELETE', `/v1/checks/${created.id}`)).status).toBe(204);
      expect((await service.api('GET', `/v1/checks/${created.id}`)).status).toBe(404);
    });
  });

  describe('jobs', () => {
    it('hands a triggered run to an agent with the script, its files, real variable values and the runtime', async () => {
      const { location, agents } = await locationWithAgents({ checkTypes: ['MULTI_STEP'], runtimes: ['2026.04'] });
      const check = await idleCheck({
        privateLocations: [location.slugName],
        environmentVariables: [
          { key: 'API_TOKEN', value: 'tok-3f9a', secret: true, locked: true },
          { key: 'BASE_URL', value: 'https://shop.test' },
        ],
        dependencies: [
          { path: 'helpers/login.js', content: 'module.exports = async () => {};' },
          { path: 'data.json', content: '{"user":"ada"}' },
        ],
        scriptPath: 'checks/login.spec.ts',
        playwrightConfig: { use: { baseURL: 'https://shop.test' } },
      });
      const session = await triggerCheck(service, check.id);
      expect(session).toMatchObject({ checkType: 'MULTI_STEP', status: 'STARTED', runSource: 'TRIGGER_API' });
      const job = await agents[0]!.claimOne();
      expect(job).toEqual({
        jobId: expect.any(String),
        checkSessionId: session.checkSessionId,
        checkId: check.id,
        checkType: 'MULTI_STEP',
        name: check.name,
        runLocation: location.slugName,
        runSource: 'TRIGGER_API',
        attempt: 1,
        leaseExpiresAt: expect.any(String),
        timeoutSeconds: 240,
        runtimeId: '2026.04',
        environmentVariables: [
          { key: 'API_TOKEN', value: 'tok-3f9a', secret: true },
          { key: 'BASE_URL', value: 'https://shop.test', secret: false },
        ],
        settings: {
          script: SCRIPT,
          scriptPath: 'checks/login.spec.ts',
          dependencies: [
            { path: 'helpers/login.js', content: 'module.exports = async () => {};' },
            { path: 'data.json', content: '{"user":"ada"}' },
          ],
          shouldFail: false,
          playwrightConfig: { use: { baseURL: 'https://shop.test' } },
        },
      });
    });

    it('hands a job only to an agent that declared both MULTI_STEP and the check\'s runtime', async () => {
      const { location, agents } = await locationWithAgents(
        { checkTypes: ['MULTI_STEP'], runtimes: ['2025.04'] },
        { checkTypes: ['URL', 'TCP', 'DNS', 'ICMP'], runtimes: ['2026.04'] },
        { checkTypes: ['MULTI_STEP'], runtimes: [] },
      );
      const [only2025, uptimeOnly, noRuntimes] = agents;
      const check = await idleCheck({ privateLocations: [location.slugName] });
      await triggerCheck(service, check.id);
      for (const agent of [only2025!, uptimeOnly!, noRuntimes!]) expect((await agent.claim()).body.jobs).toEqual([]);
      const current = await new ManualAgent(service, location.rawKey).connect({
        checkTypes: ['MULTI_STEP'],
        runtimes: ['2026.04', '2025.04'],
      });
      const job = await current.claimOne();
      expect(job).toMatchObject({ checkId: check.id, runtimeId: '2026.04' });

      // A check on 2025.04 goes to the agent that declared it.
      const older = await idleCheck({ privateLocations: [location.slugName], runtimeId: '2025.04' });
      await triggerCheck(service, older.id);
      expect((await uptimeOnly!.claim()).body.jobs).toEqual([]);
      expect(await only2025!.claimOne()).toMatchObject({ checkId: older.id, runtimeId: '2025.04' });
    });

    it('hands no more script jobs than the agent has room for in its script lane', async () => {
      const { location, agents } = await locationWithAgents({ checkTypes: ['MULTI_STEP', 'URL'], runtimes: ['2026.04'] });
      const agent = agents[0]!;
      const scripts = [await idleCheck({ privateLocations: [location.slugName] }), await idleCheck({ privateLocations: [location.slugName] })];
      for (const check of scripts) await triggerCheck(service, check.id);
      const claimWith = (lanes: { uptime: number; script: number }) =>
        agent.call('POST', '/v1/agent/jobs/claim', { agentId: agent.agentId, max: 10, lanes, waitSeconds: 0 });

      const none = await claimWith({ uptime: 10, script: 0 });
      expect(none.status).toBe(200);
      expect(none.body.jobs).toEqual([]);
      // As much uptime room as `max`: the script slot still gets its job.
      const one = await claimWith({ uptime: 10, script: 1 });
      expect(one.body.jobs.map((job: Job) => job.checkType)).toEqual(['MULTI_STEP']);
      const rest = await claimWith({ uptime: 0, script: 5 });
      expect(rest.body.jobs).toHaveLength(1);
      expect(new Set([one.body.jobs[0].checkId, rest.body.jobs[0].checkId])).toEqual(new Set(scripts.map((check) => check.id)));
    });

    it('schedules an activated check like any other, with its runtime set', async () => {
      const { location, agents } = await locationWithAgents({ checkTypes: ['MULTI_STEP'], runtimes: ['2026.04'] });
      const created = await create({ privateLocations: [location.slugName], frequency: 1 });
      expect(created.status).toBe(201);
      const job = await agents[0]!.claimOne(3000);
      expect(job).toMatchObject({ checkId: created.body.id, runSource: 'SCHEDULER', checkType: 'MULTI_STEP', runtimeId: '2026.04' });
    });

    it('stores a multi-step result, its steps, logs, error and trace, and serves them back', async () => {
      const { location, agents } = await locationWithAgents({ checkTypes: ['MULTI_STEP'], runtimes: ['2026.04'] });
      const agent = agents[0]!;
      // No retry (doubleCheck is one): the one failure is the location's final result.
      const check = await idleCheck({ privateLocations: [location.slugName], doubleCheck: false });
      const session = await triggerCheck(service, check.id);
      const job = await agent.claimOne();
      const steps = [
        { name: 'open the shop', durationMs: 812, status: 'passed' },
        { name: 'log in', durationMs: 1204.5, status: 'failed', error: 'expected 200, got 401' },
        { name: 'pay', durationMs: 0, status: 'skipped' },
      ];
      const logs = [
        { time: new Date().toISOString(), level: 'INFO', message: 'step open the shop passed' },
        { time: new Date().toISOString(), level: 'ERROR', message: 'step log in failed: expected 200, got 401' },
      ];
      const artifacts = [{ name: 'trace.zip', contentType: 'application/zip', size: 2048, uploaded: true, error: null }];
      const error = { code: 'SCRIPT_FAILED', message: 'log in: expected 200, got 401' };
      const report = await agent.report(job, {
        responseTime: 2016.5,
        hasFailures: true,
        error,
        timings: null,
        statusCode: null,
        assertions: [],
        details: { steps },
        logs,
        artifacts,
      });
      expect(report.body).toEqual({ recorded: true });

      const read = await getSession(service, session.checkSessionId);
      expect(read).toMatchObject({ checkType: 'MULTI_STEP', status: 'FAILED' });
      expect(read.results).toHaveLength(1);
      const summary = read.results[0];
      expect(summary).toMatchObject({
        checkType: 'MULTI_STEP',
        runLocation: location.slugName,
        hasFailures: true,
        hasErrors: false,
        responseTime: 2016.5,
        statusCode: null,
        timings: null,
        error,
      });
      const detail = await service.api('GET', `/v1/check-sessions/${session.checkSessionId}/results/${summary.checkResultId}`);
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({ checkType: 'MULTI_STEP', error, details: { steps }, logs, artifacts, assertions: [] });
    });
  });

  it('describes the routes in /openapi.json', async () => {
    const document = (await service.raw('GET', '/openapi.json')).body;
    expect(document.paths['/v1/checks/multistep'].post.requestBody.content['application/json'].schema.required).toEqual(
      expect.arrayContaining(['name', 'script']),
    );
    expect(document.paths['/v1/checks/multistep/{id}'].put).toBeDefined();
  });
});
