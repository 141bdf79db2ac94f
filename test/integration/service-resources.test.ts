import { randomUUID } from 'node:crypto';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createIdleUrlCheck,
  expectErrorA,
  expectErrorANaming,
  expectErrorB,
  ManualAgent,
  sendText,
  urlCheckBody,
} from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const slug = (prefix = 'loc') => `${prefix}-${randomUUID().slice(0, 8)}`;

/** Every `$ref` in an OpenAPI document, as found in it. */
function refsOf(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsOf(item, into);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') into.push(inner);
      else refsOf(inner, into);
    }
  }
  return into;
}

/** Resolves a local JSON pointer ("#/components/schemas/X") in `document`. */
function resolvePointer(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: any = document;
  for (const raw of ref.slice(2).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(part in node)) return undefined;
    node = node[part];
  }
  return node;
}

describe.each(DB_KINDS)('service resources (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind, { maxWaitSeconds: 2, tickMs: 100 });
  });
  afterAll(async () => service?.close());

  const createCheck = (body: Record<string, unknown>) => service.api('POST', '/v1/checks/url', body);

  describe('private locations', () => {
    it('creates a location: 201 with id, name, slugName, no agents, no keys', async () => {
      const slugName = slug();
      const before = Date.now();
      const answer = await service.api('POST', '/v1/private-locations', { name: 'Basement rack', slugName });
      expect(answer.status).toBe(201);
      expect(answer.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Basement rack',
        slugName,
        icon: null,
        created_at: expect.stringMatching(ISO_DATE_TIME),
        updated_at: null,
        lastSeen: null,
        destinationPolicy: { allowed: [], denied: [] },
        agentCount: 0,
        queuedJobs: 0,
        runningJobs: 0,
        runningAgents: [],
        keys: [],
      });
      expect(Date.parse(answer.body.created_at)).toBeGreaterThanOrEqual(before - 2000);
    });

    it('lists the locations and reads one by id', async () => {
      const slugName = slug();
      const created = await service.api('POST', '/v1/private-locations', { name: 'Listed', slugName, icon: 'server' });
      expect(created.status).toBe(201);
      expect(created.body.icon).toBe('server');

      const list = await service.api('GET', '/v1/private-locations');
      expect(list.status).toBe(200);
      expect(Array.isArray(list.body)).toBe(true);
      expect(list.body.filter((location: { id: string }) => location.id === created.body.id)).toEqual([created.body]);

      const one = await service.api('GET', `/v1/private-locations/${created.body.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(created.body);
    });

    it('answers 404 shape A to an unknown location id', async () => {
      expectErrorA(await service.api('GET', `/v1/private-locations/${randomUUID()}`), 404, 'Not Found');
      expectErrorB(await service.api('POST', `/v1/private-locations/${randomUUID()}/keys`), [], 404);
    });

    it.each([
      ['upper case', 'Basement'],
      ['spaces', 'my location'],
      ['a leading dash', '-basement'],
      ['an underscore', 'base_ment'],
      ['an empty slug', ''],
      ['more than 50 characters', `a${'b'.repeat(50)}`],
    ])('refuses a slugName with %s: 400 shape B naming slugName', async (_what, slugName) => {
      expectErrorB(await service.api('POST', '/v1/private-locations', { name: 'Bad', slugName }), ['slugName']);
    });

    it('refuses a slugName that is a data-center location name', async () => {
      for (const slugName of ['eu-west-1', 'us-east-1', 'af-south-1']) {
        expectErrorB(await service.api('POST', '/v1/private-locations', { name: 'Fake region', slugName }), ['slugName']);
      }
      const list = await service.api('GET', '/v1/private-locations');
      expect(list.body.map((location: { slugName: string }) => location.slugName)).not.toContain('eu-west-1');
    });

    it('accepts a JSON body sent with a charset parameter', async () => {
      const slugName = slug();
      const answer = await sendText(service, 'POST', '/v1/private-locations', JSON.stringify({ name: 'Charset', slugName }), {
        authorization: `Bearer ${service.apiKey}`,
        'x-service-account': service.accountId,
        'content-type': 'application/json; charset=utf-8',
      });
      expect(answer.status).toBe(201);
      expect(answer.body).toMatchObject({ name: 'Charset', slugName });
    });

    it('refuses a duplicate slugName in the same account with 400 shape B', async () => {
      const slugName = slug();
      expect((await service.api('POST', '/v1/private-locations', { name: 'First', slugName })).status).toBe(201);
      expectErrorB(await service.api('POST', '/v1/private-locations', { name: 'Second', slugName }), ['slugName']);
      const list = await service.api('GET', '/v1/private-locations');
      expect(list.body.filter((location: { slugName: string }) => location.slugName === slugName)).toHaveLength(1);
    });

    it('refuses a location without a name', async () => {
      expectErrorB(await service.api('POST', '/v1/private-locations', { slugName: slug() }), ['name']);
    });

    it('creates keys: 201 with id, a pl_ raw key of at least 32 characters and a masked key hiding it', async () => {
      const location = await service.api('POST', '/v1/private-locations', { name: 'Keyed', slugName: slug() });
      const answer = await service.api('POST', `/v1/private-locations/${location.body.id}/keys`);
      expect(answer.status).toBe(201);
      expect(answer.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        rawKey: expect.stringMatching(/^pl_[A-Za-z0-9_-]{32,}$/),
        maskedKey: expect.any(String),
      });
      const { rawKey, maskedKey } = answer.body as { rawKey: string; maskedKey: string };
      expect(maskedKey).not.toBe(rawKey);
      expect(maskedKey).not.toContain(rawKey.slice(3, -4));
      expect(maskedKey).not.toContain(rawKey.slice(8, 24));
      expect(maskedKey.startsWith('pl_')).toBe(true);

      const second = await service.api('POST', `/v1/private-locations/${location.body.id}/keys`);
      expect(second.status).toBe(201);
      expect(second.body.rawKey).not.toBe(rawKey);

      const read = await service.api('GET', `/v1/private-locations/${location.body.id}`);
      expect(read.body.keys).toEqual([
        { id: answer.body.id, maskedKey, created_at: expect.stringMatching(ISO_DATE_TIME) },
        { id: second.body.id, maskedKey: second.body.maskedKey, created_at: expect.stringMatching(ISO_DATE_TIME) },
      ]);
      // The raw key is shown once: never in a listing.
      const list = await service.api('GET', '/v1/private-locations');
      expect(JSON.stringify(list.body)).not.toContain(rawKey);
      expect(JSON.stringify(read.body)).not.toContain(rawKey);
    });

    it('reports lastSeen, agentCount and runningAgents once an agent has said hello', async () => {
      const location = await service.privateLocation();
      const agent = new ManualAgent(service, location.rawKey);
      const before = Date.now();
      expect((await agent.hello({ hostname: 'rack-7', version: '1.2.3', mode: 'uptime' })).status).toBe(200);

      const read = await service.api('GET', `/v1/private-locations/${location.id}`);
      expect(read.status).toBe(200);
      expect(read.body.agentCount).toBe(1);
      expect(read.body.lastSeen).toMatch(ISO_DATE_TIME);
      expect(Date.parse(read.body.lastSeen)).toBeGreaterThanOrEqual(before - 2000);
      expect(read.body.runningAgents).toEqual([
        { agentId: agent.agentId, hostname: 'rack-7', version: '1.2.3', mode: 'uptime', lastSeen: expect.stringMatching(ISO_DATE_TIME) },
      ]);

      // A second agent counts too; the first saying hello again does not count twice.
      expect((await new ManualAgent(service, location.rawKey).hello()).status).toBe(200);
      expect((await agent.hello({ hostname: 'rack-7', version: '1.2.3', mode: 'uptime' })).status).toBe(200);
      const after = await service.api('GET', `/v1/private-locations/${location.id}`);
      expect(after.body.agentCount).toBe(2);
      expect(after.body.runningAgents).toHaveLength(2);
    });
  });

  describe('URL checks', () => {
    let location: { id: string; slugName: string; rawKey: string; keyId: string };
    beforeAll(async () => {
      location = await service.privateLocation();
    });

    it('creates a URL check: 201 with every default filled in', async () => {
      const before = Date.now();
      const answer = await createCheck({
        name: 'Homepage',
        request: { url: 'http://127.0.0.1:9/' },
        privateLocations: [location.slugName],
      });
      expect(answer.status).toBe(201);
      const check = answer.body;
      expect(check).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        checkType: 'URL',
        name: 'Homepage',
        activated: true,
        muted: false,
        shouldFail: false,
        frequency: 10,
        locations: [],
        privateLocations: [location.slugName],
        tags: [],
        runParallel: false,
        degradedResponseTime: 3000,
        maxResponseTime: 5000,
        request: {
          url: 'http://127.0.0.1:9/',
          method: 'GET',
          followRedirects: true,
          skipSSL: false,
          ipFamily: 'IPv4',
          assertions: [],
        },
        alertChannels: { email: [], webhook: [], slack: [], sms: [] },
        updated_at: null,
      });
      expect(check.created_at).toEqual(expect.any(String));
      expect(Number.isNaN(Date.parse(check.created_at))).toBe(false);
      expect(Date.parse(check.created_at)).toBeGreaterThanOrEqual(before - 2 * 86_400_000);
      // Request-only fields never come back.
      expect(check).not.toHaveProperty('scriptPath');
      expect(check).not.toHaveProperty('dependencies');
    });

    it('keeps the values given instead of the defaults', async () => {
      const answer = await createCheck({
        name: 'Tuned',
        activated: false,
        muted: true,
        frequency: 5,
        tags: ['web', 'prod'],
        request: {
          url: 'https://127.0.0.1:9/status',
          method: 'HEAD',
          followRedirects: false,
          skipSSL: true,
          assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
        },
        degradedResponseTime: 100,
        maxResponseTime: 30000,
        privateLocations: [location.slugName],
      });
      expect(answer.status).toBe(201);
      expect(answer.body).toMatchObject({
        activated: false,
        muted: true,
        frequency: 5,
        tags: ['web', 'prod'],
        degradedResponseTime: 100,
        maxResponseTime: 30000,
        request: { method: 'HEAD', followRedirects: false, skipSSL: true },
      });
      expect(answer.body.request.assertions).toEqual([
        expect.objectContaining({ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }),
      ]);
    });

    it.each([
      ['missing name', (b: any) => delete b.name, ['name']],
      ['empty name', (b: any) => (b.name = ''), ['name']],
      ['missing request', (b: any) => delete b.request, ['request']],
      ['missing request.url', (b: any) => (b.request = {}), ['request.url']],
      ['an ftp:// request.url', (b: any) => (b.request = { url: 'ftp://127.0.0.1/file' }), ['request.url']],
      ['a request.url without a scheme', (b: any) => (b.request = { url: '127.0.0.1/health' }), ['request.url']],
      ['request.method POST', (b: any) => (b.request = { url: 'http://127.0.0.1:9/', method: 'POST' }), ['request.method']],
      ['frequency 7', (b: any) => (b.frequency = 7), ['frequency']],
      ['frequency "5" (a string: bodies are not coerced)', (b: any) => (b.frequency = '5'), ['frequency']],
      ['activated "true" (a string)', (b: any) => (b.activated = 'true'), ['activated']],
      ['maxResponseTime 30001', (b: any) => (b.maxResponseTime = 30001), ['maxResponseTime']],
      ['negative degradedResponseTime', (b: any) => (b.degradedResponseTime = -1), ['degradedResponseTime']],
      [
        'degradedResponseTime greater than maxResponseTime',
        (b: any) => Object.assign(b, { degradedResponseTime: 6000, maxResponseTime: 5000 }),
        ['degradedResponseTime'],
      ],
      [
        'degradedResponseTime greater than the default maxResponseTime',
        (b: any) => (b.degradedResponseTime = 5001),
        ['degradedResponseTime'],
      ],
      ['an unknown private location slug', (b: any) => (b.privateLocations = ['nowhere-at-all']), ['privateLocations']],
      ['an unknown data-center location', (b: any) => (b.locations = ['mars-north-1']), ['locations.0']],
      ['a description over 500 characters', (b: any) => (b.description = 'x'.repeat(501)), ['description']],
      [
        'an assertion with an unknown source',
        (b: any) => (b.request = { url: 'http://127.0.0.1:9/', assertions: [{ source: 'SMELL', comparison: 'EQUALS' }] }),
        ['request.assertions.0.source'],
      ],
    ])('refuses %s: 400 shape B naming the field', async (_what, spoil, fields) => {
      const body = urlCheckBody([location.slugName]);
      spoil(body);
      const before = await service.api('GET', '/v1/checks?limit=100');
      expectErrorB(await createCheck(body), fields);
      // Nothing was stored.
      const after = await service.api('GET', '/v1/checks?limit=100');
      expect(after.body).toHaveLength(before.body.length);
    });

    it('names the unknown slug in the message for an unknown private location', async () => {
      const answer = await createCheck(urlCheckBody([location.slugName, 'nowhere-at-all']));
      expectErrorB(answer, ['privateLocations']);
      expect(answer.body.attributes.privateLocations).toContain('nowhere-at-all');
      expect(answer.body.attributes.privateLocations).not.toContain(location.slugName);
    });

    it('names every bad field at once', async () => {
      const answer = await createCheck({ request: { url: 'gopher://x' }, frequency: 3 });
      expectErrorB(answer, ['name', 'request.url', 'frequency']);
    });

    it('refuses a body that is not JSON with 400 shape B', async () => {
      const headers = {
        authorization: `Bearer ${service.apiKey}`,
        'x-service-account': service.accountId,
        'content-type': 'application/json',
      };
      for (const text of ['{"name": "broken"', 'not json at all', "{'name': 'single quotes'}"]) {
        const answer = await sendText(service, 'POST', '/v1/checks/url', text, headers);
        expect(answer.status).toBe(400);
        expect(answer.body).toEqual({ message: expect.any(String), attributes: expect.any(Object) });
      }
    });

    it('refuses a JSON body that is not an object with 400 shape B', async () => {
      expect((await createCheck([urlCheckBody([location.slugName])] as any)).status).toBe(400);
      const answer = await service.api('POST', '/v1/checks/url', 'just a string');
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ message: expect.any(String), attributes: expect.any(Object) });
    });

    it('drops unknown fields instead of storing them', async () => {
      const answer = await createCheck({
        ...urlCheckBody([location.slugName]),
        bogus: 'dropped',
        id: '00000000-0000-4000-8000-000000000000',
        request: { url: 'http://127.0.0.1:9/', innerBogus: 1 },
      });
      expect(answer.status).toBe(201);
      expect(answer.body).not.toHaveProperty('bogus');
      expect(answer.body.id).not.toBe('00000000-0000-4000-8000-000000000000');
      expect(answer.body.request).not.toHaveProperty('innerBogus');

      const read = await service.api('GET', `/v1/checks/${answer.body.id}`);
      expect(read.body).not.toHaveProperty('bogus');
      expect(read.body.request).not.toHaveProperty('innerBogus');
      const [row] = await service.service.db.query<{ definition: Record<string, unknown> }>(
        'SELECT definition FROM checks WHERE id = $1',
        [answer.body.id],
      );
      expect(JSON.stringify(row!.definition)).not.toContain('bogus');
      expect(JSON.stringify(row!.definition)).not.toContain('innerBogus');
    });

    it('reads a check by id, the same as it was created', async () => {
      const created = await createCheck(urlCheckBody([location.slugName], { tags: ['read-back'] }));
      const read = await service.api('GET', `/v1/checks/${created.body.id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
    });

    it('answers 404 shape A to an unknown check id', async () => {
      expectErrorA(await service.api('GET', `/v1/checks/${randomUUID()}`), 404, 'Not Found');
    });

    it('lists checks in pages of `limit`, oldest first', async () => {
      for (let i = 0; i < 3; i++) await createIdleUrlCheck(service, [location.slugName], { name: `paged ${i}` });
      const all = await service.api('GET', '/v1/checks?limit=100');
      expect(all.status).toBe(200);
      const total = all.body.length as number;
      expect(total).toBeGreaterThanOrEqual(3);
      const ids = all.body.map((check: { id: string }) => check.id);
      expect(new Set(ids).size).toBe(total);

      const firstPage = await service.api('GET', '/v1/checks?limit=2&page=1');
      const secondPage = await service.api('GET', '/v1/checks?limit=2&page=2');
      expect(firstPage.status).toBe(200);
      expect(firstPage.body.map((check: { id: string }) => check.id)).toEqual(ids.slice(0, 2));
      expect(secondPage.body.map((check: { id: string }) => check.id)).toEqual(ids.slice(2, 4));
      const beyond = await service.api('GET', `/v1/checks?limit=100&page=${Math.ceil(total / 100) + 1}`);
      expect(beyond.status).toBe(200);
      expect(beyond.body).toEqual([]);

      // limit defaults to 10.
      const defaults = await service.api('GET', '/v1/checks');
      expect(defaults.body.map((check: { id: string }) => check.id)).toEqual(ids.slice(0, 10));
    });

    it.each([
      ['limit=0', ['limit']],
      ['limit=101', ['limit']],
      ['limit=ten', ['limit']],
      ['page=0', ['page']],
    ])('refuses the query %s with 400 in shape A, naming the parameter (a read)', async (query, fields) => {
      expectErrorANaming(await service.api('GET', `/v1/checks?${query}`), fields);
    });
  });

  describe('triggering check sessions', () => {
    let location: { id: string; slugName: string; rawKey: string; keyId: string };
    beforeAll(async () => {
      location = await service.privateLocation();
    });

    it('starts one session per check: 201 {sessions} with status STARTED and runSource TRIGGER_API', async () => {
      const check = await createIdleUrlCheck(service, [location.slugName], { name: 'Triggered' });
      const before = Date.now();
      const answer = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.id] } });
      expect(answer.status).toBe(201);
      expect(Object.keys(answer.body)).toEqual(['sessions']);
      expect(answer.body.sessions).toHaveLength(1);
      const session = answer.body.sessions[0];
      expect(session).toEqual({
        checkSessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        checkSessionLink: expect.stringContaining(`/v1/check-sessions/${session.checkSessionId}`),
        checkId: check.id,
        checkType: 'URL',
        name: 'Triggered',
        status: 'STARTED',
        runSource: 'TRIGGER_API',
        runLocations: [location.slugName],
        startedAt: expect.stringMatching(ISO_DATE_TIME),
        stoppedAt: null,
        timeElapsed: expect.any(Number),
        results: [],
      });
      expect(Date.parse(session.startedAt)).toBeGreaterThanOrEqual(before - 2000);

      const read = await service.api('GET', `/v1/check-sessions/${session.checkSessionId}`);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ checkSessionId: session.checkSessionId, status: 'STARTED', runSource: 'TRIGGER_API' });
    });

    it.each([
      'CLI_DEPLOY', 'DEPLOYMENT', 'DEPLOYMENT_CACHE_WARMER', 'EDITOR', 'LEGACY_TRIGGER', 'SCHEDULE_NOW', 'SLACK_RERUN',
      'TEST_NO_RECORD', 'TEST_RECORD', 'TRIGGER_NO_RECORD', 'TRIGGER_RECORD', 'TRIGGER_API',
    ])('records the runSource %s a caller gives, on the session and on its job', async (runSource) => {
      const own = await service.privateLocation();
      const agent = await new ManualAgent(service, own.rawKey).connect();
      const check = await createIdleUrlCheck(service, [own.slugName]);
      const answer = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.id] }, runSource });
      expect(answer.status).toBe(201);
      expect(answer.body.sessions[0].runSource).toBe(runSource);
      expect((await agent.claimOne()).runSource).toBe(runSource);
    });

    it.each(['SCHEDULER', 'GROUP_RUN_ALL', 'SOMETHING'])('refuses runSource %s from a caller: 400 naming runSource', async (runSource) => {
      const check = await createIdleUrlCheck(service, [location.slugName]);
      expectErrorB(await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.id] }, runSource }), ['runSource']);
    });

    it('starts sessions for every check carrying a tag', async () => {
      const tag = `tag-${randomUUID().slice(0, 8)}`;
      const a = await createIdleUrlCheck(service, [location.slugName], { tags: [tag] });
      const b = await createIdleUrlCheck(service, [location.slugName], { tags: ['other', tag] });
      await createIdleUrlCheck(service, [location.slugName], { tags: ['other'] });
      const answer = await service.api('POST', '/v2/check-sessions/trigger', { target: { tag: [tag] } });
      expect(answer.status).toBe(201);
      expect(answer.body.sessions.map((session: { checkId: string }) => session.checkId).sort()).toEqual([a.id, b.id].sort());
      for (const session of answer.body.sessions) expect(session.status).toBe('STARTED');
    });

    it('answers 400 shape B for a check with no private location to run at', async () => {
      const created = await service.api('POST', '/v1/checks/url', urlCheckBody([], { activated: false }));
      expect(created.status).toBe(201);
      const answer = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [created.body.id] } });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ message: expect.any(String), attributes: expect.any(Object) });
      expect(Object.keys(answer.body.attributes).length).toBeGreaterThan(0);
      const sessions = await service.service.db.query('SELECT id FROM check_sessions WHERE check_id = $1', [created.body.id]);
      expect(sessions).toEqual([]);
    });

    it('answers 404 in shape B for an unknown check id (a write)', async () => {
      const answer = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [randomUUID()] } });
      expectErrorB(answer, [], 404);
    });

    it('answers 400 shape B to a target without checkId or tag', async () => {
      expectErrorB(await service.api('POST', '/v2/check-sessions/trigger', { target: {} }), ['target']);
      expectErrorB(await service.api('POST', '/v2/check-sessions/trigger', {}), ['target']);
    });

    it('answers 400 shape B to a checkId that is not a uuid', async () => {
      expectErrorB(await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: ['abc'] } }), [
        'target.checkId.0',
      ]);
    });

    it('answers 404 shape A to an unknown session id', async () => {
      expectErrorA(await service.api('GET', `/v1/check-sessions/${randomUUID()}`), 404, 'Not Found');
    });
  });

  describe('OpenAPI document', () => {
    it('serves an OpenAPI 3.1 document with the user API and the agent protocol, without credentials', async () => {
      const answer = await service.raw('GET', '/openapi.json');
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      const document = answer.body;
      expect(document.openapi).toMatch(/^3\.1\./);
      expect(document.info).toEqual(expect.objectContaining({ title: expect.any(String), version: expect.any(String) }));
      const paths = Object.keys(document.paths);
      for (const path of [
        '/v1/checks/url',
        '/v1/checks',
        '/v1/checks/{id}',
        '/v1/private-locations',
        '/v1/private-locations/{id}',
        '/v1/private-locations/{id}/keys',
        '/v1/private-locations/{id}/keys/{keyId}',
        '/v2/check-sessions/trigger',
        '/v1/check-sessions/{checkSessionId}',
        '/v1/agent/hello',
        '/v1/agent/jobs/claim',
        '/v1/agent/jobs/{jobId}/lease',
        '/v1/agent/jobs/{jobId}/result',
        '/v1/agent/jobs/{jobId}/release',
        '/v1/agent/jobs/{jobId}/artifacts/{name}',
      ]) {
        expect(paths, path).toContain(path);
      }
      // Fastify's ":param" syntax never leaks into the document; internal routes are hidden.
      expect(paths.filter((path) => path.includes(':'))).toEqual([]);
      expect(paths).not.toContain('/openapi.json');
    });

    it('is structurally sound: operations have responses, path parameters are declared, every $ref resolves', async () => {
      const document = (await service.raw('GET', '/openapi.json')).body;
      const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
      for (const [path, item] of Object.entries<any>(document.paths)) {
        const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
        for (const method of methods.filter((m) => item[m])) {
          const operation = item[method];
          expect(Object.keys(operation.responses ?? {}).length, `${method} ${path} responses`).toBeGreaterThan(0);
          const declared = (operation.parameters ?? [])
            .filter((parameter: any) => parameter.in === 'path')
            .map((parameter: any) => parameter.name);
          expect(declared.sort(), `${method} ${path} path parameters`).toEqual([...templated].sort());
        }
      }
      for (const ref of refsOf(document)) expect(resolvePointer(document, ref), ref).toBeDefined();
      expect(Object.keys(document.components.securitySchemes)).toEqual(
        expect.arrayContaining(['apiKey', 'account', 'privateLocationKey']),
      );
      // The agent protocol is secured by private location keys, not user keys.
      expect(document.paths['/v1/agent/jobs/claim'].post.security).toEqual([{ privateLocationKey: [] }]);
      expect(document.paths['/v1/agent/jobs/claim'].post.requestBody).toBeDefined();
      expect(document.paths['/v1/checks/url'].post.responses).toHaveProperty('201');
    });

    it('is valid OpenAPI 3.1 under a standard validator, which does refuse a broken copy', async () => {
      const document = (await service.raw('GET', '/openapi.json')).body;
      await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeDefined();
      const broken = structuredClone(document);
      broken.paths['/v1/checks'].get.responses = 'none';
      await expect(SwaggerParser.validate(broken)).rejects.toThrow();
    });

    it('answers /swagger.json with the same operations, marked deprecated and pointing to /openapi.json', async () => {
      const current = (await service.raw('GET', '/openapi.json')).body;
      const old = await service.raw('GET', '/swagger.json');
      expect(old.status).toBe(200);
      expect(old.headers.get('deprecation')).toBe('true');
      expect(old.headers.get('link')).toBe('</openapi.json>; rel="successor-version"');
      expect(old.body['x-deprecated']).toBe(true);
      expect(old.body.info.description).toMatch(/^Deprecated: .*\/openapi\.json/);
      expect(old.body.paths).toEqual(current.paths);
      expect(Object.keys(current.paths)).not.toContain('/swagger.json');
    });
  });
});
