import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/protocol/agent-api.js';
import type { ApiSettings } from '../../src/protocol/api-settings.js';
import { expectErrorB, ManualAgent, triggerCheck } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

const SCRIPT = `const { test } = require('@playwright/test');\ntest('home', async ({ page }) => { await page.goto(process.env.BASE_URL); });\n`;

describe.each(DB_KINDS)('API and browser checks (%s)', (kind) => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService(kind);
  });
  afterAll(() => service?.close());

  const createApi = (extra: Record<string, unknown> = {}, request: Record<string, unknown> = {}) =>
    service.api('POST', '/v1/checks/api', {
      name: 'Orders API',
      activated: false,
      request: { url: 'https://api.example.test/orders', ...request },
      ...extra,
    });

  /** A fresh location with one agent there, its hello as given. */
  async function agentAt(checkTypes: Job['checkType'][], runtimes: string[] = ['2026.04']) {
    const location = await service.privateLocation();
    const agent = await new ManualAgent(service, location.rawKey).connect({ checkTypes, runtimes });
    return { location, agent };
  }

  describe('API check CRUD', () => {
    it('creates with the defaults filled in, reads back, updates field by field', async () => {
      const created = await createApi({}, { method: 'POST', body: '{"id":1}', bodyType: 'JSON' });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).toMatchObject({
        checkType: 'API',
        request: {
          method: 'POST',
          url: 'https://api.example.test/orders',
          headers: [],
          queryParameters: [],
          body: '{"id":1}',
          bodyType: 'JSON',
          basicAuth: null,
          followRedirects: true,
          skipSSL: false,
          ipFamily: 'IPv4',
          assertions: [],
        },
        degradedResponseTime: 5000,
        maxResponseTime: 20000,
        setupScript: null,
        tearDownScript: null,
        setupSnippetId: null,
        tearDownSnippetId: null,
        runtimeId: null,
        retryStrategy: null,
        shouldFail: false,
      });
      const read = await service.api('GET', `/v1/checks/${created.body.id}`);
      expect(read.body).toEqual(created.body);
      const updated = await service.api('PUT', `/v1/checks/api/${created.body.id}`, {
        request: { assertions: [{ source: 'JSON_BODY', property: '$.id', comparison: 'EQUALS', target: '1' }] },
        maxResponseTime: 30000,
      });
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
      expect(updated.body.request).toMatchObject({ method: 'POST', body: '{"id":1}', assertions: [expect.objectContaining({ source: 'JSON_BODY' })] });
      expect(updated.body.maxResponseTime).toBe(30000);
      const listed = await service.api('GET', '/v1/checks?limit=100');
      expect(listed.body.map((check: { id: string }) => check.id)).toContain(created.body.id);
    });

    it.each<[string, Record<string, unknown>, Record<string, unknown>, string[]]>([
      ['no url', {}, { url: undefined }, ['request.url']],
      ['a relative url outside a group', {}, { url: '/orders' }, ['request.url']],
      ['an unknown method', {}, { method: 'FETCH' }, ['request.method']],
      ['an unknown body type', {}, { bodyType: 'XML' }, ['request.bodyType']],
      ['a body without a body type', {}, { body: 'x' }, ['request.bodyType']],
      ['an assertion source of another type', {}, { assertions: [{ source: 'LATENCY', comparison: 'EQUALS' }] }, ['request.assertions.0.source']],
      ['a HEADERS assertion without a header', {}, { assertions: [{ source: 'HEADERS', comparison: 'NOT_EMPTY' }] }, ['request.assertions.0.property']],
      ['a JSON_BODY property that is no JSON path', {}, { assertions: [{ source: 'JSON_BODY', property: 'id', comparison: 'EQUALS', target: '1' }] }, ['request.assertions.0.property']],
      ['a maxResponseTime over the cap', { maxResponseTime: 30001 }, {}, ['maxResponseTime']],
      ['degraded above max', { degradedResponseTime: 9000, maxResponseTime: 8000 }, {}, ['degradedResponseTime']],
      ['a snippet id (no snippets here)', { setupSnippetId: 3 }, {}, ['setupSnippetId']],
      ['a teardown snippet id', { tearDownSnippetId: 4 }, {}, ['tearDownSnippetId']],
      ['a runtime outside the set', { runtimeId: '2099.01' }, {}, ['runtimeId']],
      ['a string shouldFail', { shouldFail: 'yes' }, {}, ['shouldFail']],
      ['an unknown retry type', { retryStrategy: { type: 'SOMETIMES' } }, {}, ['retryStrategy.type']],
    ])('refuses %s with 400 shape B', async (_, extra, request, fields) => {
      expectErrorB(await createApi(extra, request), fields);
    });

    it('refuses a bad update with 400 shape B and keeps the stored check', async () => {
      const created = await createApi();
      const answer = await service.api('PUT', `/v1/checks/api/${created.body.id}`, { request: { method: 'FETCH' } });
      expectErrorB(answer, ['request.method']);
      expect((await service.api('GET', `/v1/checks/${created.body.id}`)).body.request.method).toBe('GET');
    });
  });

  describe('browser check CRUD', () => {
    it('creates a BROWSER check and reads it back', async () => {
      const created = await service.api('POST', '/v1/checks/browser', { name: 'Home page', script: SCRIPT, activated: false });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).toMatchObject({ checkType: 'BROWSER', script: SCRIPT, runtimeId: null, doubleCheck: true, frequency: 10 });
      const updated = await service.api('PUT', `/v1/checks/browser/${created.body.id}`, { runtimeId: '2025.04' });
      expect(updated.body).toMatchObject({ checkType: 'BROWSER', runtimeId: '2025.04' });
      // A browser check is no multi-step check.
      expect((await service.api('PUT', `/v1/checks/multistep/${created.body.id}`, { name: 'x' })).status).toBe(404);
    });

    it.each<[string, Record<string, unknown>, string[]]>([
      ['no script', { script: undefined }, ['script']],
      ['a script of white space only', { script: '  ' }, ['script']],
      ['another check type', { checkType: 'MULTI_STEP' }, ['checkType']],
      ['a runtime without browser support', { runtimeId: '2023.02' }, ['runtimeId']],
      ['a dependency path with ..', { dependencies: [{ path: '../x.js', content: '' }] }, ['dependencies.0.path']],
    ])('refuses %s with 400 shape B', async (_, extra, fields) => {
      expectErrorB(await service.api('POST', '/v1/checks/browser', { name: 'Home page', script: SCRIPT, ...extra }), fields);
    });

    it('makes a BROWSER job with the multi-step settings and 240 s', async () => {
      const { location, agent } = await agentAt(['BROWSER']);
      const created = await service.api('POST', '/v1/checks/browser', {
        name: 'Home page',
        script: SCRIPT,
        activated: false,
        privateLocations: [location.slugName],
      });
      await triggerCheck(service, created.body.id);
      const job = await agent.claimOne();
      expect(job).toMatchObject({ checkType: 'BROWSER', timeoutSeconds: 240, runtimeId: '2026.04' });
      expect(job.settings).toEqual({ script: SCRIPT, dependencies: [], shouldFail: false });
    });
  });

  describe('jobs', () => {
    it('applies the group apiCheckDefaults and its local scripts to the job, leaving {{VARIABLES}}', async () => {
      const { location, agent } = await agentAt(['API']);
      const group = await service.api('POST', '/v1/check-groups', {
        name: 'API group',
        activated: true,
        apiCheckDefaults: {
          url: 'https://api.example.test/v2/',
          headers: [{ key: 'X-Tenant', value: 'acme' }, { key: 'Accept', value: 'text/plain' }],
          queryParameters: [{ key: 'region', value: 'eu' }],
          assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
          basicAuth: { username: 'group-user', password: '{{GROUP_PASSWORD}}' },
        },
        localSetupScript: 'request.headers["X-Setup"] = "group";',
      });
      expect(group.status, JSON.stringify(group.body)).toBe(201);
      const created = await createApi(
        { groupId: group.body.id, privateLocations: [location.slugName], setupScript: 'request.headers["X-Own"] = "1";' },
        { url: '/orders/{{ORDER_ID}}', headers: [{ key: 'accept', value: 'application/json' }] },
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await triggerCheck(service, created.body.id);
      // Scripts: the job is in the script lane, so only script room takes it.
      expect((await agent.call('POST', '/v1/agent/jobs/claim', { agentId: agent.agentId, max: 5, waitSeconds: 0, lanes: { uptime: 5, script: 0 } })).body.jobs).toEqual([]);
      const claimed = await agent.call('POST', '/v1/agent/jobs/claim', { agentId: agent.agentId, max: 5, waitSeconds: 0, lanes: { uptime: 0, script: 1 } });
      const job = claimed.body.jobs[0] as Job;
      expect(job).toMatchObject({ checkType: 'API', runtimeId: '2026.04' });
      const settings = job.settings as ApiSettings;
      expect(settings.request.url).toBe('https://api.example.test/v2/orders/{{ORDER_ID}}');
      expect(settings.request.headers).toEqual([
        { key: 'X-Tenant', value: 'acme' },
        { key: 'accept', value: 'application/json' },
      ]);
      expect(settings.request.queryParameters).toEqual([{ key: 'region', value: 'eu' }]);
      expect(settings.request.assertions).toEqual([{ source: 'STATUS_CODE', property: '', comparison: 'EQUALS', target: '200' }]);
      expect(settings.request.basicAuth).toEqual({ username: 'group-user', password: '{{GROUP_PASSWORD}}' });
      expect(settings.setupScripts).toEqual([
        { origin: 'group', script: 'request.headers["X-Setup"] = "group";' },
        { origin: 'check', script: 'request.headers["X-Own"] = "1";' },
      ]);
      expect(settings.tearDownScripts).toEqual([]);
      expect(settings).toMatchObject({ degradedResponseTime: 5000, maxResponseTime: 20000, shouldFail: false });
    });

    it('runs an API check without scripts in the uptime lane, with no runtime', async () => {
      const { location, agent } = await agentAt(['API'], []);
      const created = await createApi({ privateLocations: [location.slugName] });
      await triggerCheck(service, created.body.id);
      expect((await agent.call('POST', '/v1/agent/jobs/claim', { agentId: agent.agentId, max: 5, waitSeconds: 0, lanes: { uptime: 0, script: 1 } })).body.jobs).toEqual([]);
      const claimed = await agent.call('POST', '/v1/agent/jobs/claim', { agentId: agent.agentId, max: 5, waitSeconds: 0, lanes: { uptime: 1, script: 0 } });
      expect(claimed.body.jobs).toHaveLength(1);
      expect(claimed.body.jobs[0]).toMatchObject({ checkType: 'API', runtimeId: null, timeoutSeconds: 25 });
      expect(claimed.body.jobs[0].settings.setupScripts).toEqual([]);
    });

    it('says API and browser checks are entitled', async () => {
      const answer = await service.api('GET', '/v1/accounts/me/entitlements');
      const byKey = new Map(answer.body.entitlements.map((entry: { key: string; enabled: boolean }) => [entry.key, entry.enabled]));
      expect(byKey.get('API_CHECKS')).toBe(true);
      expect(byKey.get('BROWSER_CHECKS')).toBe(true);
    });
  });
});
