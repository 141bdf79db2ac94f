/**
 * What /openapi.json says a response holds is what the service sends: real
 * answers of representative routes, validated against the document's own
 * response schemas with every object closed (an undocumented field fails).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdleUrlCheck, eventually, ManualAgent, triggerCheck } from '../support/agent-protocol.js';
import { startTestService, type TestService } from '../support/service.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The document with every object schema closed: a field it does not list is an error. */
function closed(node: Json): Json {
  if (Array.isArray(node)) return node.map(closed);
  if (node === null || typeof node !== 'object') return node;
  const copy = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, closed(value)]));
  const isObjectSchema = copy.type === 'object' && copy.properties !== null && typeof copy.properties === 'object';
  if (isObjectSchema && (copy.additionalProperties === undefined || copy.additionalProperties === true)) copy.additionalProperties = false;
  return copy;
}

const pointerSegment = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

describe('response bodies as /openapi.json describes them', () => {
  let service: TestService;
  let ajv: Ajv2020;
  let document: any;
  const validators = new Map<string, ValidateFunction>();

  /** The validator of one documented answer: the route as the document writes it, method, status. */
  function validatorFor(path: string, method: string, status: number): ValidateFunction {
    const key = `${method} ${path} ${status}`;
    let validate = validators.get(key);
    if (!validate) {
      const response = document.paths[path]?.[method]?.responses?.[String(status)];
      expect(response?.content?.['application/json']?.schema, `${key} is documented with a JSON body`).toBeDefined();
      const pointer = ['paths', path, method, 'responses', String(status), 'content', 'application/json', 'schema'].map(pointerSegment).join('/');
      validate = ajv.compile({ $ref: `openapi.json#/${pointer}` });
      validators.set(key, validate);
    }
    return validate;
  }

  /** Calls `url` and checks the answer against the route's documented schema. */
  async function expectDocumented(method: string, route: string, url: string, body?: unknown, expectedStatus?: number): Promise<any> {
    const answer = await service.api(method.toUpperCase(), url, body);
    if (expectedStatus !== undefined) expect(answer.status, `${method} ${url}: ${JSON.stringify(answer.body)}`).toBe(expectedStatus);
    const validate = validatorFor(route, method, answer.status);
    const valid = validate(answer.body);
    const problems = (valid ? [] : (validate.errors ?? [])).map(
      (error) => `${error.instancePath || '/'} ${error.message}${error.params.additionalProperty ? `: ${error.params.additionalProperty}` : ''}`,
    );
    expect.soft(problems, `${method.toUpperCase()} ${url} answered ${JSON.stringify(answer.body).slice(0, 1500)}`).toEqual([]);
    return answer.body;
  }

  let location: Awaited<ReturnType<TestService['privateLocation']>>;
  const checks: Record<string, any> = {};
  let session: any;
  let resultId: string;

  beforeAll(async () => {
    service = await startTestService('pglite');
    document = (await service.raw('GET', '/openapi.json')).body;
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(closed(document) as object, 'openapi.json');
    location = await service.privateLocation();
  }, 60_000);
  afterAll(async () => service?.close());

  it('describes every field of the checks of every type, as created and as read', async () => {
    const base = { activated: false, privateLocations: [location.slugName], tags: ['docs'], frequency: 10, description: 'documented' };
    const bodies: Record<string, object> = {
      url: { ...base, name: 'url', request: { url: 'http://127.0.0.1:9/', followRedirects: true, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] } },
      api: {
        ...base,
        name: 'api',
        request: { url: 'http://127.0.0.1:9/', method: 'POST', body: '{}', bodyType: 'JSON', headers: [{ key: 'x-a', value: '1' }], assertions: [] },
        setupScript: "request.headers['x-b'] = '2';",
        environmentVariables: [{ key: 'TOKEN', value: 'secret', secret: true }],
        degradedResponseTime: 5000,
        maxResponseTime: 20000,
      },
      browser: { ...base, name: 'browser', script: "await page.goto('http://127.0.0.1:9/')", runtimeId: '2025.04' },
      multistep: { ...base, name: 'multistep', script: "await request.get('http://127.0.0.1:9/')", runtimeId: '2026.04' },
      tcp: { ...base, name: 'tcp', request: { hostname: '127.0.0.1', port: 9 } },
      icmp: { ...base, name: 'icmp', request: { hostname: '127.0.0.1' } },
      dns: { ...base, name: 'dns', request: { query: 'example.test' } },
    };
    for (const [path, body] of Object.entries(bodies)) {
      const created = await expectDocumented('post', `/v1/checks/${path}`, `/v1/checks/${path}`, body, 201);
      // Nothing sent is lost on the way back: the serializer drops what the schema does not list.
      for (const field of Object.keys(body)) expect(created, `${path} check answers ${field}`).toHaveProperty(field);
      checks[path] = created;
      await expectDocumented('get', '/v1/checks/{id}', `/v1/checks/${created.id}`, undefined, 200);
      await expectDocumented('put', `/v1/checks/${path}/{id}`, `/v1/checks/${path}/${created.id}`, { name: `${path} renamed` }, 200);
    }
    const list = await expectDocumented('get', '/v1/checks', '/v1/checks?limit=100', undefined, 200);
    expect(list.length).toBe(Object.keys(bodies).length);
  });

  it('describes check groups, their checks and the group run', async () => {
    const group = await expectDocumented('post', '/v1/check-groups', '/v1/check-groups', {
      name: 'documented group', activated: false, tags: ['docs'], locations: [], privateLocations: [location.slugName], concurrency: 3,
      environmentVariables: [{ key: 'GROUP_VAR', value: 'v' }],
    }, 201);
    await expectDocumented('get', '/v1/check-groups/{id}', `/v1/check-groups/${group.id}`, undefined, 200);
    await expectDocumented('get', '/v1/check-groups', '/v1/check-groups', undefined, 200);
    await expectDocumented('put', '/v2/check-groups/{id}', `/v2/check-groups/${group.id}`, { name: 'renamed group' }, 200);
    await createIdleUrlCheck(service, [location.slugName], { groupId: group.id });
    await expectDocumented('get', '/v1/check-groups/{id}/checks', `/v1/check-groups/${group.id}/checks`, undefined, 200);
  });

  it('describes sessions, their results and the check results', async () => {
    const check = await createIdleUrlCheck(service, [location.slugName]);
    const agent = await new ManualAgent(service, location.rawKey).connect();
    const triggered = await triggerCheck(service, check.id);
    const job = await agent.claimOne();
    expect((await agent.report(job)).status).toBe(200);
    session = await eventually(async () => {
      const answer = await service.api('GET', `/v1/check-sessions/${triggered.checkSessionId}`);
      return answer.body.results?.length ? answer.body : undefined;
    }, 10_000, 'a session with its result');
    resultId = session.results[0].checkResultId;
    await expectDocumented('get', '/v1/check-sessions/{checkSessionId}', `/v1/check-sessions/${session.checkSessionId}`, undefined, 200);
    await expectDocumented('get', '/v1/check-sessions', `/v1/check-sessions?checkId=${check.id}`, undefined, 200);
    await expectDocumented('get', '/v2/check-sessions/{checkSessionId}/completion', `/v2/check-sessions/${session.checkSessionId}/completion`, undefined, 200);
    await expectDocumented(
      'get', '/v1/check-sessions/{checkSessionId}/results/{checkResultId}',
      `/v1/check-sessions/${session.checkSessionId}/results/${resultId}`, undefined, 200,
    );
    await expectDocumented('get', '/v1/check-results/{checkId}', `/v1/check-results/${check.id}`, undefined, 200);
    await expectDocumented('get', '/v2/check-results/{checkId}', `/v2/check-results/${check.id}`, undefined, 200);
    await expectDocumented('get', '/v1/check-results/{checkId}/{checkResultId}', `/v1/check-results/${check.id}/${resultId}`, undefined, 200);
    await expectDocumented('get', '/v1/check-statuses', '/v1/check-statuses', undefined, 200);
    await expectDocumented('get', '/v1/check-statuses/{checkId}', `/v1/check-statuses/${check.id}`, undefined, 200);
    await expectDocumented('post', '/v2/check-sessions/trigger', '/v2/check-sessions/trigger', { target: { checkId: [check.id] } }, 201);
    await expectDocumented(
      'get', '/v1/analytics/url-monitors/{id}', `/v1/analytics/url-monitors/${check.id}?metrics=responseTime,availability&filterByStatus=success`, undefined, 200,
    );
  });

  it('describes alert channels, private locations, status pages, maintenance windows and variables', async () => {
    const channel = await expectDocumented('post', '/v1/alert-channels', '/v1/alert-channels', { type: 'EMAIL', config: { address: 'docs@example.test' } }, 201);
    await expectDocumented('get', '/v1/alert-channels/{id}', `/v1/alert-channels/${channel.id}`, undefined, 200);
    await expectDocumented('get', '/v1/alert-channels', '/v1/alert-channels', undefined, 200);
    await expectDocumented('get', '/v1/alert-channels/{id}/deliveries', `/v1/alert-channels/${channel.id}/deliveries`, undefined, 200);
    await expectDocumented('get', '/v1/private-locations', '/v1/private-locations', undefined, 200);
    await expectDocumented('get', '/v1/private-locations/{id}', `/v1/private-locations/${location.id}`, undefined, 200);
    await expectDocumented('post', '/v1/private-locations', '/v1/private-locations', { name: 'Docs location', slugName: `docs-${randomUUID().slice(0, 8)}` }, 201);
    const statusService = await expectDocumented('post', '/v1/status-pages/services', '/v1/status-pages/services', { name: 'Docs service' }, 201);
    await expectDocumented('get', '/v1/status-pages/services', '/v1/status-pages/services', undefined, 200);
    const page = await expectDocumented('post', '/v1/status-pages', '/v1/status-pages', {
      name: 'Docs page', url: `docs-${randomUUID().slice(0, 8)}`, cards: [{ name: 'All', services: [statusService.id] }],
    }, 201);
    await expectDocumented('get', '/v1/status-pages/{id}', `/v1/status-pages/${page.id}`, undefined, 200);
    await expectDocumented('get', '/v1/status-pages', '/v1/status-pages', undefined, 200);
    const incident = await expectDocumented('post', '/v1/status-pages/incidents', '/v1/status-pages/incidents', {
      name: 'Docs incident', severity: 'MAJOR', services: [statusService.id], incidentUpdates: [{ description: 'Looking' }],
    }, 201);
    await expectDocumented('get', '/v1/status-pages/incidents/{incidentId}', `/v1/status-pages/incidents/${incident.id}`, undefined, 200);
    const window = await expectDocumented('post', '/v1/maintenance-windows', '/v1/maintenance-windows', {
      name: 'Docs window', tags: ['docs'], startsAt: '2030-01-01T00:00:00.000Z', endsAt: '2030-01-01T01:00:00.000Z',
      repeatUnit: 'DAY', repeatInterval: 1, repeatEndsAt: '2030-02-01T00:00:00.000Z',
    }, 201);
    await expectDocumented('get', '/v1/maintenance-windows/{id}', `/v1/maintenance-windows/${window.id}`, undefined, 200);
    await expectDocumented('get', '/v1/maintenance-windows', '/v1/maintenance-windows', undefined, 200);
    await expectDocumented('get', '/v1/status-pages/incidents', '/v1/status-pages/incidents', undefined, 200);
    await expectDocumented('post', '/v1/variables', '/v1/variables', { key: 'DOCS_VAR', value: 'v', secret: false }, 201);
    await expectDocumented('get', '/v1/variables', '/v1/variables', undefined, 200);
    await expectDocumented('get', '/v1/runtimes', '/v1/runtimes', undefined, 200);
    await expectDocumented('get', '/v1/accounts/me/entitlements', '/v1/accounts/me/entitlements', undefined, 200);
  });

  it('describes the error answers', async () => {
    await expectDocumented('get', '/v1/checks/{id}', `/v1/checks/${randomUUID()}`, undefined, 404);
    await expectDocumented('post', '/v1/checks/url', '/v1/checks/url', { name: '' }, 400);
  });
});
