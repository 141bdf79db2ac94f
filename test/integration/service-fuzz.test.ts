import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdleUrlCheck } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * A valid request to every write route, bent a thousand ways (a fixed seed,
 * so a failure comes back on every run): whatever the input, the service
 * answers it, never a 5xx. Each database gets its own half of the thousand,
 * which keeps the file within a minute.
 */
const SEED = 0x5eed_0019;
const BODY_MUTATIONS = 450;
const QUERY_MUTATIONS = 50;

/** mulberry32: tiny, seedable, good enough to pick mutations. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

function deepNesting(levels: number): Json {
  let value: Json = 'bottom';
  for (let level = 0; level < levels; level += 1) value = level % 2 === 0 ? [value] : { nested: value };
  return value;
}

/** Replacement values: each a kind of input a tester (or an attacker) sends. */
const BAD_VALUES: readonly { name: string; value: () => Json }[] = [
  { name: 'NUL', value: () => 'before\u0000after' },
  { name: 'only NUL', value: () => '\u0000' },
  { name: 'huge integer', value: () => 1e20 },
  { name: 'int4 + 1', value: () => 2_147_483_648 },
  { name: 'negative huge', value: () => -1e20 },
  { name: 'float', value: () => 1.5 },
  { name: 'max double', value: () => Number.MAX_VALUE },
  { name: 'zero', value: () => 0 },
  { name: 'negative', value: () => -1 },
  { name: 'true', value: () => true },
  { name: 'string', value: () => 'wrong type' },
  { name: 'empty string', value: () => '' },
  { name: 'numeric string', value: () => '99999999999999999999' },
  { name: 'null', value: () => null },
  { name: 'empty array', value: () => [] },
  { name: 'array of NUL', value: () => ['\u0000'] },
  { name: 'empty object', value: () => ({}) },
  { name: 'object with NUL key', value: () => ({ 'a\u0000b': 1 }) },
  { name: 'deep nesting', value: () => deepNesting(2000) },
  { name: 'long string', value: () => 'x'.repeat(100_000) },
  { name: 'bad uuid', value: () => 'not-a-uuid' },
  { name: 'uuid with NUL', value: () => `${randomUUID()}\u0000` },
  { name: 'unknown uuid', value: () => randomUUID() },
  { name: 'unicode', value: () => '\ud83d\ude00 \u202e \ufffd' },
  { name: 'lone surrogate', value: () => '\ud800' },
  { name: 'date', value: () => '2026-13-45T99:99:99Z' },
  { name: 'year 0', value: () => '0000-01-01T00:00:00Z' },
  { name: 'year 9999', value: () => '9999-12-31T23:59:59Z' },
];

/** Every path into the value, the root included. */
function pathsOf(value: Json, prefix: Path = []): Path[] {
  const paths: Path[] = [prefix];
  if (Array.isArray(value)) value.forEach((item, index) => paths.push(...pathsOf(item, [...prefix, index])));
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) paths.push(...pathsOf(item, [...prefix, key]));
  }
  return paths;
}

function setAt(root: Json, path: Path, value: Json | undefined): Json {
  if (path.length === 0) return value ?? null;
  let parent = root as any;
  for (const key of path.slice(0, -1)) parent = parent[key];
  const last = path[path.length - 1]!;
  if (value === undefined) {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else parent[last] = value;
  return root;
}

function getAt(root: Json, path: Path): Json {
  let value = root as any;
  for (const key of path) value = value[key];
  return value as Json;
}

/** One mutation of a valid body: its name (to reproduce) and the bent body. */
function mutate(body: Json, random: () => number): { name: string; body: Json } {
  const copy = JSON.parse(JSON.stringify(body)) as Json;
  const paths = pathsOf(copy);
  const path = paths[Math.floor(random() * paths.length)]!;
  const where = path.join('.') || '(root)';
  const roll = random();
  if (roll < 0.08 && path.length > 0) return { name: `drop ${where}`, body: setAt(copy, path, undefined) };
  const target = getAt(copy, path);
  if (roll < 0.16 && target !== null && typeof target === 'object' && !Array.isArray(target)) {
    const extra = BAD_VALUES[Math.floor(random() * BAD_VALUES.length)]!;
    target[`unknown${Math.floor(random() * 100)}`] = extra.value();
    return { name: `unknown field with ${extra.name} in ${where}`, body: copy };
  }
  if (roll < 0.22 && target !== null && typeof target !== 'object') {
    return { name: `${where} in an array`, body: setAt(copy, path, [target]) };
  }
  if (roll < 0.26 && typeof target === 'string') {
    return { name: `NUL appended to ${where}`, body: setAt(copy, path, `${target}\u0000`) };
  }
  const bad = BAD_VALUES[Math.floor(random() * BAD_VALUES.length)]!;
  return { name: `${bad.name} at ${where}`, body: setAt(copy, path, bad.value()) };
}

interface Target {
  method: string;
  path: string;
  body: Json;
  /** Agent protocol routes are called with the location key. */
  headers?: Record<string, string>;
}

/** What the service must never do, whatever it is sent. */
interface Failure {
  request: string;
  mutation: string;
  status: number;
  body: unknown;
}

async function send(service: TestService, target: Target, body: Json): Promise<{ status: number; body: unknown }> {
  const answer = target.headers
    ? await service.raw(target.method, target.path, body, target.headers)
    : await service.api(target.method, target.path, body);
  return { status: answer.status, body: answer.body };
}

describe.each(DB_KINDS)('fuzzed requests (%s)', (kind) => {
  let service: TestService;
  let targets: Target[];
  let lists: string[];

  beforeAll(async () => {
    service = await startTestService(kind);
    const location = await service.privateLocation();
    const agentId = randomUUID();
    const agentHeaders = { authorization: `Bearer ${location.rawKey}`, 'content-type': 'application/json' };
    const helloBody = {
      agentId, version: '0.0.0-fuzz', hostname: 'fuzz', mode: 'full', checkTypes: ['URL'], runtimes: [], capacity: { uptime: 1, script: 0 },
    };
    const hello = await service.raw('POST', '/v1/agent/hello', helloBody, agentHeaders);
    const check = await createIdleUrlCheck(service, [location.slugName]);
    const created = async (path: string, body: Json): Promise<any> => {
      const answer = await service.api('POST', path, body);
      if (answer.status !== 201 && answer.status !== 200) throw new Error(`${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body;
    };
    const groupBody = { name: 'fuzzed group', activated: false, tags: ['fuzz'], locations: [], concurrency: 3 };
    const group = await created('/v1/check-groups', groupBody);
    const channelBody = { type: 'EMAIL', config: { address: 'fuzz@example.test' } };
    const channel = await created('/v1/alert-channels', channelBody);
    const windowBody = {
      name: 'fuzzed window',
      tags: ['fuzz'],
      startsAt: '2030-01-01T00:00:00.000Z',
      endsAt: '2030-01-01T01:00:00.000Z',
      repeatUnit: 'DAY',
      repeatInterval: 1,
      repeatEndsAt: '2030-02-01T00:00:00.000Z',
    };
    const maintenance = await created('/v1/maintenance-windows', windowBody);
    const statusService = await created('/v1/status-pages/services', { name: 'Fuzzed service' });
    const pageBody = { name: 'Fuzzed page', url: `fuzz-${randomUUID().slice(0, 8)}`, cards: [{ name: 'All', services: [statusService.id] }] };
    const page = await created('/v1/status-pages', pageBody);
    await created('/v1/variables', { key: 'FUZZ_KEY', value: 'v', secret: false });
    const checkBase = { activated: false, doubleCheck: false, privateLocations: [location.slugName], tags: ['fuzz'], frequency: 10 };
    const checkBodies: Record<string, Json> = {
      url: { ...checkBase, name: 'url', request: { url: 'http://127.0.0.1:9/', followRedirects: true, assertions: [] } },
      api: {
        ...checkBase,
        name: 'api',
        request: { url: 'http://127.0.0.1:9/', method: 'POST', body: '{}', bodyType: 'JSON', headers: [{ key: 'x-a', value: '1' }], assertions: [] },
        setupScript: "request.headers['x-b'] = '2';",
        degradedResponseTime: 5000,
        maxResponseTime: 20000,
      },
      browser: { ...checkBase, name: 'browser', script: "await page.goto('http://127.0.0.1:9/')", runtimeId: '2025.04' },
      multistep: { ...checkBase, name: 'multistep', script: "await request.get('http://127.0.0.1:9/')", runtimeId: '2026.04' },
      tcp: { ...checkBase, name: 'tcp', request: { hostname: '127.0.0.1', port: 9 } },
      icmp: { ...checkBase, name: 'icmp', request: { hostname: '127.0.0.1' } },
      dns: { ...checkBase, name: 'dns', request: { query: 'example.test' } },
    };
    const result = {
      agentId,
      jobId: randomUUID(),
      checkId: check.id,
      checkType: 'URL',
      runLocation: location.slugName,
      startedAt: '2026-01-01T00:00:00.000Z',
      stoppedAt: '2026-01-01T00:00:01.000Z',
      responseTime: 12,
      hasErrors: false,
      hasFailures: false,
      isDegraded: false,
      aborted: false,
      isCancelled: false,
      error: null,
      statusCode: 200,
      assertions: [],
      details: { note: 'fuzz' },
      logs: [],
      artifacts: [],
    };
    expect(hello.status, JSON.stringify(hello.body)).toBe(200);
    targets = [
      ...Object.entries(checkBodies).flatMap(([type, body]) => [
        { method: 'POST', path: `/v1/checks/${type}`, body },
        { method: 'PUT', path: `/v1/checks/url/${check.id}`, body: checkBodies.url! },
      ]),
      { method: 'PUT', path: `/v1/checks/${check.id}`, body: checkBodies.url! },
      { method: 'POST', path: '/v1/check-groups', body: groupBody },
      { method: 'PUT', path: `/v1/check-groups/${group.id}`, body: groupBody },
      { method: 'POST', path: '/v1/alert-channels', body: channelBody },
      { method: 'PUT', path: `/v1/alert-channels/${channel.id}`, body: channelBody },
      { method: 'POST', path: '/v1/maintenance-windows', body: windowBody },
      { method: 'PUT', path: `/v1/maintenance-windows/${maintenance.id}`, body: windowBody },
      { method: 'POST', path: '/v1/status-pages/services', body: { name: 'Another' } },
      { method: 'POST', path: '/v1/status-pages', body: { ...pageBody, url: `fuzz2-${randomUUID().slice(0, 8)}` } },
      { method: 'PUT', path: `/v1/status-pages/${page.id}`, body: pageBody },
      {
        method: 'POST',
        path: '/v1/status-pages/incidents',
        body: { name: 'Fuzzed incident', severity: 'MAJOR', services: [statusService.id], incidentUpdates: [{ description: 'Looking' }] },
      },
      { method: 'POST', path: '/v1/variables', body: { key: 'FUZZ_NEW', value: 'v', secret: true, locked: false } },
      { method: 'PUT', path: '/v1/variables/FUZZ_KEY', body: { value: 'w', secret: false } },
      { method: 'POST', path: '/v1/private-locations', body: { name: 'Fuzzed location', slugName: 'fuzz-loc', icon: 'server' } },
      { method: 'PUT', path: `/v1/private-locations/${location.id}`, body: { name: 'Renamed location', icon: 'server' } },
      { method: 'POST', path: '/v1/accounts/me/members', body: { email: 'fuzz@example.test', name: 'Fuzz', role: 'READ_ONLY' } },
      { method: 'POST', path: '/v2/check-sessions/trigger', body: { target: { checkId: [check.id], tag: ['fuzz'] }, runSource: 'TRIGGER_API' } },
      { method: 'POST', path: '/v1/agent/hello', body: helloBody, headers: agentHeaders },
      { method: 'POST', path: '/v1/agent/results', body: { results: [result] }, headers: agentHeaders },
      { method: 'POST', path: `/v1/agent/jobs/${result.jobId}/result`, body: result, headers: agentHeaders },
      { method: 'POST', path: '/v1/agent/leases', body: { agentId, running: [randomUUID()], waiting: [] }, headers: agentHeaders },
      { method: 'POST', path: '/v1/agent/jobs/release', body: { agentId, jobIds: [randomUUID()], reason: 'fuzz' }, headers: agentHeaders },
      { method: 'POST', path: `/v1/agent/jobs/${result.jobId}/lease`, body: { agentId }, headers: agentHeaders },
    ];
    lists = [
      '/v1/checks',
      '/v1/check-groups',
      '/v1/alert-channels',
      '/v1/maintenance-windows',
      '/v1/status-pages',
      '/v1/variables',
      '/v1/check-sessions',
      `/v1/check-results/${check.id}`,
      '/v1/alert-notifications',
      '/v1/check-statuses',
      '/v1/accounts/me/members',
    ];
  }, 60_000);

  afterAll(async () => {
    await service?.close();
  });

  it(`answers ${BODY_MUTATIONS} mutated bodies of every write route without a 5xx`, async () => {
    const random = prng(SEED + DB_KINDS.indexOf(kind) * 2);
    const failures: Failure[] = [];
    for (const target of targets) {
      // Each base body must be valid, or its mutations test nothing.
      const valid = await send(service, target, target.body);
      if (valid.status >= 400 && valid.status !== 404 && valid.status !== 409) {
        failures.push({ request: `${target.method} ${target.path}`, mutation: 'none (the valid body)', ...valid });
      }
    }
    for (let index = 0; index < BODY_MUTATIONS; index += 1) {
      const target = targets[index % targets.length]!;
      const { name, body } = mutate(target.body, random);
      const answer = await send(service, target, body);
      if (answer.status >= 500) failures.push({ request: `${target.method} ${target.path}`, mutation: name, ...answer });
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it(`answers ${QUERY_MUTATIONS} mutated list queries and ids with a 4xx, never a 5xx`, async () => {
    const random = prng(SEED + DB_KINDS.indexOf(kind) * 2 + 1);
    const queries = [
      'page=99999999999999999999',
      'page=2147483648',
      'limit=99999999999999999999',
      'page=-1',
      'page=1.5',
      'page=%00',
      'tag=%00',
      'search=a%00b',
      'checkId=not-a-uuid',
      'from=99999999999999999999',
      'to=-99999999999999999999',
      'q=%00',
      'from=-271821-04-20T00:00:00Z',
      'to=%ED%A0%80',
    ];
    const failures: Failure[] = [];
    for (let index = 0; index < QUERY_MUTATIONS; index += 1) {
      const list = lists[index % lists.length]!;
      const query = queries[Math.floor(random() * queries.length)]!;
      const answer = await service.api('GET', `${list}?${query}`);
      if (answer.status >= 500) failures.push({ request: `GET ${list}?${query}`, mutation: query, status: answer.status, body: answer.body });
    }
    for (const id of ['not-a-uuid', '99999999999999999999', '%00', encodeURIComponent(`${randomUUID()}\u0000`)]) {
      for (const path of ['/v1/checks/', '/v1/check-groups/', '/v1/alert-channels/', '/v1/maintenance-windows/', '/v1/status-pages/', '/v1/check-sessions/']) {
        const answer = await service.api('GET', `${path}${id}`);
        if (answer.status >= 500) failures.push({ request: `GET ${path}${id}`, mutation: 'bad id', status: answer.status, body: answer.body });
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);

  it('refuses NUL, huge pages and non-uuid job ids with a 400 in the route\'s shape', async () => {
    const nul = await service.api('POST', '/v1/variables', { key: 'NUL_VALUE', value: 'a\u0000b', secret: false });
    expect(nul.status).toBe(400);
    expect(nul.body).toMatchObject({ attributes: { value: expect.stringContaining('NUL') } });
    const page = await service.api('GET', '/v1/checks?page=99999999999999999999');
    expect(page.status).toBe(400);
    expect(page.body).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining('page') });
    const results = targets.find((target) => target.path === '/v1/agent/results')!;
    const [result] = (results.body as { results: Record<string, Json>[] }).results;
    const answer = await send(service, results, { results: [{ ...result!, jobId: 'not-a-uuid' }] });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ message: expect.any(String), attributes: { 'results.0.jobId': expect.any(String) } });
  });
});
