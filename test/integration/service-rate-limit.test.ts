import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecondAccount, expectErrorA, expectErrorB, ManualAgent, urlCheckBody } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type ApiAnswer, type TestService } from '../support/service.js';

const MAX = 5;
const WINDOW_SECONDS = 3;

describe.each(DB_KINDS)('rate limit (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind, {
      env: { RATE_LIMIT_MAX: String(MAX), RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS) },
    });
  });
  afterAll(async () => service?.close());

  /** A key of its own, so each test starts with a full budget. */
  async function freshCaller(): Promise<(method: string, path: string, body?: unknown) => Promise<ApiAnswer>> {
    const account = await createSecondAccount(service);
    const headers = { authorization: `Bearer ${account.apiKey}`, 'x-service-account': account.accountId };
    return (method, path, body) => service.raw(method, path, body, headers);
  }

  it(`allows ${MAX} calls per key per window and says how many are left`, async () => {
    const call = await freshCaller();
    for (let used = 1; used <= MAX; used += 1) {
      const answer = await call('GET', '/v1/checks');
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-ratelimit-limit')).toBe(String(MAX));
      expect(answer.headers.get('x-ratelimit-remaining')).toBe(String(MAX - used));
      const reset = Number(answer.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThanOrEqual(0);
      expect(reset).toBeLessThanOrEqual(WINDOW_SECONDS);
    }
  });

  it('answers 429 (shape A for a read, B for a write) with Retry-After past the limit, and serves the key again in the next window', async () => {
    const call = await freshCaller();
    for (let used = 0; used < MAX; used += 1) expect((await call('GET', '/v1/checks')).status).toBe(200);
    const refused = await call('GET', '/v1/checks');
    expectErrorA(refused, 429, 'Too Many Requests');
    expect(refused.body.message).toMatch(new RegExp(`${MAX} requests per ${WINDOW_SECONDS} s`));
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    // A refused write does not happen.
    const write = await call('POST', '/v1/variables', { key: 'NOT_STORED', value: 'x' });
    // A write answers in shape B, its 429 too.
    expectErrorB(write, [], 429);

    await new Promise((resolve) => setTimeout(resolve, (retryAfter + 0.2) * 1000));
    const again = await call('GET', '/v1/variables/NOT_STORED');
    expectErrorA(again, 404, 'Not Found');
    expect(again.headers.get('x-ratelimit-remaining')).toBe(String(MAX - 1));
  });

  it('counts every route of the user API against one budget per key', async () => {
    const call = await freshCaller();
    const paths = ['/v1/checks', '/v1/variables', '/v1/private-locations', '/v1/runtimes', '/v1/checks'];
    for (const path of paths) expect((await call('GET', path)).status).toBe(200);
    expectErrorA(await call('GET', '/v1/private-locations'), 429, 'Too Many Requests');
  });

  it('keeps keys apart: one key at its limit leaves another untouched', async () => {
    const first = await freshCaller();
    const second = await freshCaller();
    for (let used = 0; used <= MAX; used += 1) await first('GET', '/v1/checks');
    expectErrorA(await first('GET', '/v1/checks'), 429, 'Too Many Requests');
    const other = await second('GET', '/v1/checks');
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe(String(MAX - 1));
  });

  /** A private location and its key, made by `call`: the bootstrap key's budget stays untouched. */
  async function locationOf(call: Awaited<ReturnType<typeof freshCaller>>): Promise<{ slugName: string; rawKey: string }> {
    const slugName = `rate-${randomUUID().slice(0, 8)}`;
    const location = await call('POST', '/v1/private-locations', { name: 'Rate', slugName });
    const key = await call('POST', `/v1/private-locations/${location.body.id}/keys`);
    return { slugName, rawKey: key.body.rawKey };
  }

  it('gives analytics a budget of their own, a fifth of the default', async () => {
    const call = await freshCaller();
    const location = await locationOf(call);
    const check = await call('POST', '/v1/checks/url', urlCheckBody([location.slugName], { activated: false }));
    expect(check.status).toBe(201);
    // Three calls of the default budget used; analytics count apart.
    const analytics = () => call('GET', `/v1/analytics/url-monitors/${check.body.id}?metrics=availability`);
    const allowed = Math.max(1, Math.floor(MAX / 5));
    for (let used = 0; used < allowed; used += 1) {
      const answer = await analytics();
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-ratelimit-limit')).toBe(String(allowed));
    }
    expectErrorA(await analytics(), 429, 'Too Many Requests');
    expect((await call('GET', '/v1/checks')).headers.get('x-ratelimit-remaining')).toBe(String(MAX - 4));
  });

  it('does not count refused keys, and leaves the agent protocol, /health and /openapi.json unlimited', async () => {
    for (let attempt = 0; attempt <= MAX; attempt += 1) {
      expectErrorA(await service.raw('GET', '/v1/checks', undefined, { authorization: 'Bearer nobody' }), 401, 'Unauthorized');
    }
    const location = await locationOf(await freshCaller());
    const agent = new ManualAgent(service, location.rawKey);
    for (let attempt = 0; attempt <= MAX * 2; attempt += 1) {
      expect((await agent.hello()).status).toBe(200);
      expect((await agent.claim()).status).toBe(200);
    }
    for (let attempt = 0; attempt <= MAX; attempt += 1) {
      expect((await service.raw('GET', '/health')).status).toBe(200);
      expect((await service.raw('GET', '/openapi.json')).status).toBe(200);
    }
  });

  it('lists the 429 answer for user operations in /openapi.json', async () => {
    const document = (await service.raw('GET', '/openapi.json')).body;
    expect(Object.keys(document.paths['/v1/checks'].get.responses)).toContain('429');
    expect(Object.keys(document.paths['/v1/variables/{key}'].delete.responses)).toContain('429');
    expect(Object.keys(document.paths['/v1/agent/jobs/claim'].post.responses)).not.toContain('429');
  });
});
