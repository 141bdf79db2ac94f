/**
 * API checks in the uptime lane (no scripts), against a real JSON API on
 * loopback: every assertion source passing and failing with its actual value,
 * body types, basic auth, redirects, thresholds, shouldFail, truncation, and
 * variables, a secret one included, which must not appear in the result.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeJob } from '../../src/agent/execute.js';
import { ProbeRegistry } from '../../src/agent/probes/registry.js';
import type { Job, Result } from '../../src/protocol/agent-api.js';
import { laneOfJob, MAX_API_RESPONSE_BODY_BYTES } from '../../src/protocol/api-settings.js';
import { SCRUB_MARKER } from '../../src/scrub/marker.js';
import { apiSettings, BASIC_PASSWORD, BASIC_USER, startApiTarget, TARGET_TOKEN, type ApiTarget } from '../support/api-target.js';

let target: ApiTarget;
const probes = new ProbeRegistry({ useOsDnsResolver: false });

beforeAll(async () => {
  target = await startApiTarget();
});

afterAll(async () => {
  await target?.close();
});

function job(settings: Record<string, unknown>, environmentVariables: Job['environmentVariables'] = []): Job {
  return {
    jobId: randomUUID(),
    checkSessionId: randomUUID(),
    checkId: randomUUID(),
    checkType: 'API',
    name: 'api check test',
    runLocation: 'here',
    runSource: 'TRIGGER_API',
    attempt: 1,
    leaseExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    timeoutSeconds: 10,
    runtimeId: null,
    environmentVariables,
    settings,
  };
}

function run(settings: Record<string, unknown>, variables: Job['environmentVariables'] = []): Promise<Result> {
  return executeJob(probes, job(settings, variables), 'test-agent', new AbortController().signal);
}

type Details = {
  request: { method: string; url: string; headers: Record<string, string>; body: string };
  response: { status: number; headers: Record<string, string>; body: string; bodyTruncated: boolean } | null;
  redirects: number;
  finalUrl: string;
};
const detailsOf = (result: Result) => result.details as unknown as Details;

const assertion = (source: string, comparison: string, target: string, property = '') => ({ source, property, comparison, target });

describe('API checks without scripts', () => {
  it('is declared by the probe registry and runs in the uptime lane', () => {
    expect(probes.checkTypes()).toContain('API');
    expect(laneOfJob(job(apiSettings(target.url)))).toBe('uptime');
    expect(laneOfJob(job(apiSettings(target.url, {}, { setupScripts: [{ origin: 'check', script: 'x' }] })))).toBe('script');
  });

  it('passes every assertion source, recording each actual value, with real timings', async () => {
    const result = await run(
      apiSettings(`${target.url}/users`, {
        assertions: [
          assertion('STATUS_CODE', 'EQUALS', '200'),
          assertion('JSON_BODY', 'EQUALS', 'ada', '$.users[0].name'),
          assertion('JSON_BODY', 'EQUALS', '2', 'count'),
          assertion('JSON_BODY', 'HAS_VALUE', 'admin', '$.users[0].roles'),
          assertion('JSON_BODY', 'IS_NULL', '', '$.next'),
          assertion('HEADERS', 'EQUALS', 'req-42', 'X-Request-Id'),
          assertion('HEADERS', 'CONTAINS', 'json', 'content-type'),
          assertion('TEXT_BODY', 'CONTAINS', '"bob"'),
          assertion('RESPONSE_TIME', 'LESS_THAN', '5000'),
        ],
      }),
    );
    expect(result.error).toBeNull();
    expect(result).toMatchObject({ hasErrors: false, hasFailures: false, isDegraded: false, statusCode: 200 });
    expect(result.assertions.every((entry) => entry.passed)).toBe(true);
    expect(result.assertions.map((entry) => entry.actual)).toEqual([
      200,
      'ada',
      2,
      '["admin"]',
      null,
      'req-42',
      'application/json',
      expect.stringContaining('"users"'),
      result.responseTime,
    ]);
    expect(result.timings).toMatchObject({ dns: 0, tls: null });
    expect(result.timings!.tcp).toBeGreaterThan(0);
    expect(result.timings!.firstByte).toBeGreaterThan(0);
    const details = detailsOf(result);
    expect(details.request).toMatchObject({ method: 'GET', url: `${target.url}/users` });
    expect(details.response).toMatchObject({ status: 200, bodyTruncated: false });
    expect(JSON.parse(details.response!.body)).toMatchObject({ count: 2 });
    // A cookie the target set is a credential: its value never leaves.
    expect(details.response!.headers['set-cookie']).toBe(SCRUB_MARKER);
    expect(details.response!.headers['x-request-id']).toBe('req-42');
  });

  it('fails each assertion source that does not hold, saying which and what was found', async () => {
    const result = await run(
      apiSettings(`${target.url}/users`, {
        assertions: [
          assertion('STATUS_CODE', 'EQUALS', '201'),
          assertion('JSON_BODY', 'EQUALS', 'bob', '$.users[0].name'),
          assertion('JSON_BODY', 'NOT_NULL', '', '$.missing.path'),
          assertion('HEADERS', 'NOT_NULL', '', 'x-absent'),
          assertion('TEXT_BODY', 'NOT_CONTAINS', 'ada'),
          assertion('RESPONSE_TIME', 'GREATER_THAN', '60000'),
        ],
      }),
    );
    expect(result).toMatchObject({ hasErrors: false, hasFailures: true, statusCode: 200 });
    expect(result.assertions.map((entry) => entry.passed)).toEqual([false, false, false, false, false, false]);
    expect(result.assertions.map((entry) => entry.actual).slice(0, 4)).toEqual([200, 'ada', null, null]);
    expect(result.error?.code).toBe('ASSERTION_FAILED');
    expect(result.error?.message).toContain('STATUS_CODE EQUALS "201"');
  });

  it('reads JSON_BODY of a body that is not JSON as nothing', async () => {
    const result = await run(
      apiSettings(`${target.url}/text`, { assertions: [assertion('JSON_BODY', 'IS_NULL', '', '$.a'), assertion('TEXT_BODY', 'CONTAINS', 'hello')] }),
    );
    expect(result.assertions.map((entry) => entry.passed)).toEqual([true, true]);
  });

  it('sends each body type with its content type', async () => {
    const cases = [
      { bodyType: 'JSON', body: '{"a":1}', contentType: 'application/json', sent: '{"a":1}' },
      { bodyType: 'FORM', body: '{"name":"ada lovelace","n":2}', contentType: 'application/x-www-form-urlencoded', sent: 'name=ada+lovelace&n=2' },
      { bodyType: 'FORM', body: 'a=1&b=two', contentType: 'application/x-www-form-urlencoded', sent: 'a=1&b=two' },
      { bodyType: 'RAW', body: 'plain <raw> text', contentType: undefined, sent: 'plain <raw> text' },
      { bodyType: 'GRAPHQL', body: '{ user(id: 1) { name } }', contentType: 'application/json', sent: JSON.stringify({ query: '{ user(id: 1) { name } }' }) },
      {
        bodyType: 'GRAPHQL',
        body: '{"query":"query Q($id: ID!) { user(id: $id) { name } }","variables":{"id":1}}',
        contentType: 'application/json',
        sent: '{"query":"query Q($id: ID!) { user(id: $id) { name } }","variables":{"id":1}}',
      },
    ];
    for (const entry of cases) {
      const result = await run(apiSettings(`${target.url}/echo`, { method: 'POST', bodyType: entry.bodyType, body: entry.body }));
      expect(result.error, entry.bodyType).toBeNull();
      const echoed = JSON.parse(detailsOf(result).response!.body) as { method: string; headers: Record<string, string>; body: string };
      expect(echoed.method).toBe('POST');
      expect(echoed.body, entry.bodyType).toBe(entry.sent);
      expect(echoed.headers['content-type'], entry.bodyType).toBe(entry.contentType);
    }
  });

  it('sends method, headers and query parameters, a header of its own overriding the content type', async () => {
    const result = await run(
      apiSettings(`${target.url}/echo?fixed=1`, {
        method: 'PUT',
        headers: [{ key: 'X-Custom', value: 'yes' }, { key: 'Content-Type', value: 'application/vnd.test+json' }],
        queryParameters: [{ key: 'q', value: 'a b&c' }],
        bodyType: 'JSON',
        body: '{}',
      }),
    );
    const echoed = JSON.parse(detailsOf(result).response!.body) as { method: string; url: string; headers: Record<string, string> };
    expect(echoed).toMatchObject({ method: 'PUT', url: '/echo?fixed=1&q=a+b%26c' });
    expect(echoed.headers).toMatchObject({ 'x-custom': 'yes', 'content-type': 'application/vnd.test+json' });
    expect(detailsOf(result).request.url).toBe(`${target.url}/echo?fixed=1&q=a+b%26c`);
  });

  it('sends basic auth, and masks the Authorization header in the result', async () => {
    const passing = await run(apiSettings(`${target.url}/basic`, { basicAuth: { username: BASIC_USER, password: BASIC_PASSWORD } }));
    expect(passing).toMatchObject({ hasFailures: false, statusCode: 200 });
    expect(detailsOf(passing).request.headers.Authorization).toBe(SCRUB_MARKER);
    const refused = await run(apiSettings(`${target.url}/basic`, { basicAuth: { username: BASIC_USER, password: 'wrong' } }));
    expect(refused).toMatchObject({ hasFailures: true, hasErrors: false, statusCode: 401, error: { code: 'HTTP_STATUS' } });
  });

  it('fills {{VARIABLES}} in url, headers, query, body and basic auth, and scrubs the secret ones from the result', async () => {
    const variables = [
      { key: 'BASE', value: target.url, secret: false },
      { key: 'API_TOKEN', value: TARGET_TOKEN, secret: true },
      { key: 'USER', value: BASIC_USER, secret: false },
      { key: 'PASSWORD', value: BASIC_PASSWORD, secret: true },
    ];
    const privateRoute = await run(
      apiSettings('{{BASE}}/private', {
        headers: [{ key: 'Authorization', value: 'Bearer {{API_TOKEN}}' }],
        assertions: [assertion('JSON_BODY', 'EQUALS', '{{API_TOKEN}}', '$.token'), assertion('STATUS_CODE', 'EQUALS', '200')],
      }),
      variables,
    );
    expect(privateRoute.statusCode).toBe(200);
    // The target echoes the token in its body: what the result carries is the marker.
    expect(JSON.stringify(privateRoute)).not.toContain(TARGET_TOKEN);
    expect(detailsOf(privateRoute).response!.body).toContain(SCRUB_MARKER);

    const echo = await run(
      apiSettings('{{ BASE }}/echo', {
        method: 'POST',
        headers: [{ key: 'X-Token', value: '{{API_TOKEN}}' }],
        queryParameters: [{ key: 'token', value: '{{API_TOKEN}}' }, { key: 'unknown', value: '{{NOT_A_VARIABLE}}' }],
        bodyType: 'JSON',
        body: '{"token":"{{API_TOKEN}}"}',
      }),
      variables,
    );
    const received = target.received.at(-1)!;
    expect(received.headers['x-token']).toBe(TARGET_TOKEN);
    expect(received.url).toContain(`token=${TARGET_TOKEN}`);
    expect(received.url).toContain('unknown=%7B%7BNOT_A_VARIABLE%7D%7D');
    expect(received.body).toBe(`{"token":"${TARGET_TOKEN}"}`);
    const text = JSON.stringify(echo);
    expect(text).not.toContain(TARGET_TOKEN);
    expect(detailsOf(echo).request.url).toContain(`token=${SCRUB_MARKER}`);
    expect(detailsOf(echo).request.headers['X-Token']).toBe(SCRUB_MARKER);

    const basic = await run(apiSettings('{{BASE}}/basic', { basicAuth: { username: '{{USER}}', password: '{{PASSWORD}}' } }), variables);
    expect(basic.statusCode).toBe(200);
    expect(JSON.stringify(basic)).not.toContain(BASIC_PASSWORD);
  });

  it('follows redirects when asked, and reports the redirect itself when not', async () => {
    const followed = await run(apiSettings(`${target.url}/redirect`));
    expect(followed.statusCode).toBe(200);
    expect(detailsOf(followed)).toMatchObject({ redirects: 1, finalUrl: `${target.url}/users` });
    const kept = await run(apiSettings(`${target.url}/redirect`, { followRedirects: false, assertions: [assertion('STATUS_CODE', 'EQUALS', '302')] }));
    expect(kept).toMatchObject({ statusCode: 302, hasFailures: false });
    expect(detailsOf(kept).response!.headers.location).toBe('/users');
    // 307 repeats the method and the body.
    const repeated = await run(apiSettings(`${target.url}/redirect-307`, { method: 'POST', bodyType: 'RAW', body: 'again' }));
    expect(JSON.parse(detailsOf(repeated).response!.body)).toMatchObject({ method: 'POST', body: 'again' });
  });

  it('degrades and fails on response time', async () => {
    const degraded = await run(apiSettings(`${target.url}/slow?ms=150`, {}, { degradedResponseTime: 50, maxResponseTime: 5000 }));
    expect(degraded).toMatchObject({ hasFailures: false, isDegraded: true });
    const failed = await run(apiSettings(`${target.url}/slow?ms=150`, {}, { degradedResponseTime: 50, maxResponseTime: 100 }));
    expect(failed).toMatchObject({ hasFailures: true, hasErrors: false, error: { code: 'MAX_RESPONSE_TIME' } });
  });

  it('times out a response slower than the job allows', async () => {
    const settings = apiSettings(`${target.url}/slow?ms=3000`);
    const result = await executeJob(probes, { ...job(settings), timeoutSeconds: 1 }, 'test-agent', new AbortController().signal);
    expect(result).toMatchObject({ hasErrors: true, error: { code: 'TIMEOUT' } });
  });

  it('fails an error status without assertions; shouldFail turns it into a pass', async () => {
    const failing = await run(apiSettings(`${target.url}/fail`));
    expect(failing).toMatchObject({ hasFailures: true, statusCode: 500, error: { code: 'HTTP_STATUS' } });
    const inverted = await run(apiSettings(`${target.url}/fail`, {}, { shouldFail: true }));
    expect(inverted).toMatchObject({ hasFailures: false, error: null });
    const passingButShouldFail = await run(apiSettings(`${target.url}/users`, {}, { shouldFail: true }));
    expect(passingButShouldFail).toMatchObject({ hasFailures: true, error: { code: 'SHOULD_FAIL' } });
  });

  it('keeps at most MAX_API_RESPONSE_BODY_BYTES of a body, and says it cut it', async () => {
    const result = await run(apiSettings(`${target.url}/big`, { assertions: [assertion('TEXT_BODY', 'CONTAINS', 'xxx')] }));
    expect(result.hasFailures).toBe(false);
    const response = detailsOf(result).response!;
    expect(response.bodyTruncated).toBe(true);
    expect(response.body.length).toBe(MAX_API_RESPONSE_BODY_BYTES);
  });

  it('is an error when nothing answers, and for settings that are not an API check', async () => {
    const refused = await run(apiSettings('http://127.0.0.1:1/'));
    expect(refused).toMatchObject({ hasErrors: true, hasFailures: true, error: { code: 'CONNECTION_FAILED' } });
    const invalid = await run({ request: { url: 'x' } });
    expect(invalid.error?.code).toBe('INVALID_SETTINGS');
    const badUrl = await run(apiSettings('{{MISSING}}/path'));
    expect(badUrl.error?.code).toBe('API_REQUEST_INVALID');
  });
});
