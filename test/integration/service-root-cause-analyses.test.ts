import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Result } from '../../src/protocol/agent-api.js';
import {
  asNewAccount,
  eventually,
  expectErrorA,
  expectErrorANaming,
  expectErrorB,
  ManualAgent,
  urlCheckBody,
} from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type ApiAnswer, type TestService } from '../support/service.js';

const REFUSED = (port: number): Partial<Result> => ({
  hasErrors: true,
  statusCode: null,
  error: { code: 'CONNECTION_FAILED', message: `connect ECONNREFUSED 127.0.0.1:${port}` },
});
const HTTP_503: Partial<Result> = {
  hasFailures: true,
  statusCode: 503,
  assertions: [{ source: 'STATUS_CODE', property: '', comparison: 'EQUALS', target: '200', actual: 503, passed: false }],
};

/** A check with runs reported by hand: one pass, two refused connections (other ports), one 503. */
async function checkWithFailures(service: TestService, call: (m: string, p: string, b?: unknown) => Promise<ApiAnswer>) {
  const slugName = `rca-${randomUUID().slice(0, 8)}`;
  const location = await call('POST', '/v1/private-locations', { name: 'Rack', slugName });
  const key = await call('POST', `/v1/private-locations/${location.body.id}/keys`);
  const check = (await call('POST', '/v1/checks/url', urlCheckBody([slugName], { activated: false }))).body;
  const agent = await new ManualAgent(service, key.body.rawKey).connect();
  const sessions: string[] = [];
  for (const outcome of [{}, REFUSED(8080), REFUSED(9090), HTTP_503]) {
    const triggered = await call('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.id] } });
    const job = await agent.claimOne();
    expect((await agent.report(job, outcome)).status).toBe(200);
    sessions.push(triggered.body.sessions[0].checkSessionId);
    // Results are told apart by time.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { check, sessions, slugName };
}

describe.each(DB_KINDS)('root cause analyses (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind, { tickMs: 100 });
  });
  afterAll(async () => service?.close());

  async function freshAccount() {
    const { call } = await asNewAccount(service);
    return { call };
  }
  const completed = (call: (m: string, p: string) => Promise<ApiAnswer>, id: string) =>
    eventually(async () => {
      const answer = await call('GET', `/v1/root-cause-analyses/${id}`);
      return answer.status === 200 ? answer.body : undefined;
    }, 10_000, `analysis ${id}`);

  it('groups a check\'s failures by error, blanking what changes run to run, most frequent first', async () => {
    const { call } = await freshAccount();
    const { check, slugName } = await checkWithFailures(service, call);
    const answer = await call('GET', `/v1/checks/${check.id}/error-groups`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        checkId: check.id,
        checkSessionId: null,
        fingerprint: 'CONNECTION_FAILED: connect ECONNREFUSED <address>',
        code: 'CONNECTION_FAILED',
        message: 'connect ECONNREFUSED 127.0.0.1:9090',
        count: 2,
        locations: [slugName],
        firstSeen: expect.any(String),
        lastSeen: expect.any(String),
      },
      expect.objectContaining({
        fingerprint: 'ASSERTION_FAILED: STATUS_CODE EQUALS 200',
        code: 'ASSERTION_FAILED',
        message: 'Assertion failed: STATUS_CODE EQUALS 200 (got 503)',
        count: 1,
      }),
    ]);
    expect(Date.parse(answer.body[0].firstSeen)).toBeLessThan(Date.parse(answer.body[0].lastSeen));
  });

  it('analyses a check error group: 202 PENDING, then 200 with the built-in analysis', async () => {
    const { call } = await freshAccount();
    const { check } = await checkWithFailures(service, call);
    const [refused, failedStatus] = (await call('GET', `/v1/checks/${check.id}/error-groups`)).body;
    const started = await call('POST', `/v1/checks/${check.id}/error-groups/${refused.id}/root-cause-analyses`);
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ id: expect.any(String), status: 'PENDING' });

    const record = await completed(call, started.body.id);
    expect(record).toEqual({
      id: started.body.id,
      status: 'COMPLETED',
      subject: 'CHECK_ERROR_GROUP',
      checkId: check.id,
      checkSessionId: null,
      errorGroup: refused,
      provider: 'outpost-builtin',
      model: 'outpost-rules-1',
      analysis: {
        summary: 'The host answered, but nothing accepted connections on the port.',
        category: 'CONNECTION',
        likelyCause: expect.stringMatching(/not listening/),
        evidence: expect.arrayContaining([
          expect.stringMatching(/^2 failed results with this error between/),
          expect.stringMatching(/^The check last passed at /),
        ]),
        suggestions: expect.arrayContaining([expect.any(String)]),
      },
      created_at: expect.any(String),
      completed_at: expect.any(String),
    });

    const second = await call('POST', `/v1/checks/${check.id}/error-groups/${failedStatus.id}/root-cause-analyses`);
    const server = await completed(call, second.body.id);
    expect(server.analysis.category).toBe('SERVER_ERROR');
    expect(server.analysis.summary).toBe('The response status was 503 where the check expects EQUALS 200.');
  });

  it('analyses a test session\'s error group, whose id is the session\'s own', async () => {
    const { call } = await freshAccount();
    const { check, sessions } = await checkWithFailures(service, call);
    const groups = (await call('GET', `/v1/check-sessions/${sessions[3]}/error-groups`)).body;
    expect(groups).toEqual([expect.objectContaining({ checkId: check.id, checkSessionId: sessions[3], code: 'ASSERTION_FAILED', count: 1 })]);
    const checkGroups = (await call('GET', `/v1/checks/${check.id}/error-groups`)).body;
    expect(checkGroups.map((group: { id: string }) => group.id)).not.toContain(groups[0].id);
    expect((await call('GET', `/v1/check-sessions/${sessions[0]}/error-groups`)).body).toEqual([]);

    const started = await call('POST', `/v1/check-sessions/${sessions[3]}/error-groups/${groups[0].id}/root-cause-analyses`);
    expect(started.status).toBe(202);
    const record = await completed(call, started.body.id);
    expect(record).toMatchObject({ subject: 'TEST_SESSION_ERROR_GROUP', checkId: check.id, checkSessionId: sessions[3] });
  });

  it('answers 404 for unknown analyses, groups, checks and sessions, and for another account\'s (A for reads, B for writes)', async () => {
    const mine = await freshAccount();
    const theirs = await freshAccount();
    const { check, sessions } = await checkWithFailures(service, theirs.call);
    const [group] = (await theirs.call('GET', `/v1/checks/${check.id}/error-groups`)).body;
    const started = await theirs.call('POST', `/v1/checks/${check.id}/error-groups/${group.id}/root-cause-analyses`);
    await completed(theirs.call, started.body.id);

    expectErrorA(await mine.call('GET', `/v1/root-cause-analyses/${started.body.id}`), 404, 'Not Found');
    expectErrorA(await theirs.call('GET', `/v1/root-cause-analyses/${randomUUID()}`), 404, 'Not Found');
    expectErrorA(await mine.call('GET', `/v1/checks/${check.id}/error-groups`), 404, 'Not Found');
    expectErrorB(await mine.call('POST', `/v1/checks/${check.id}/error-groups/${group.id}/root-cause-analyses`), [], 404);
    expectErrorA(await mine.call('GET', `/v1/check-sessions/${sessions[1]}/error-groups`), 404, 'Not Found');
    expectErrorB(await theirs.call('POST', `/v1/checks/${check.id}/error-groups/${'0'.repeat(24)}/root-cause-analyses`), [], 404);
    expectErrorB(await theirs.call('POST', `/v1/checks/${check.id}/error-groups/not-a-group/root-cause-analyses`), ['errorGroupId']);
    expectErrorANaming(await theirs.call('GET', '/v1/root-cause-analyses/not-a-uuid'), ['id']);
  });
});

describe('root cause analyses by an external model', () => {
  let model: Server;
  let modelUrl: string;
  const asked: { authorization: string | undefined; body: any }[] = [];
  let release: () => void = () => undefined;
  let failing = false;

  beforeAll(async () => {
    model = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString()));
      request.on('end', () => {
        asked.push({ authorization: request.headers.authorization, body: JSON.parse(text) });
        if (failing) {
          response.writeHead(500).end('model overloaded');
          return;
        }
        // Answers only when the test says so: the analysis is PENDING until then.
        release = () =>
          response.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              summary: 'The payments service stopped listening after the deploy.',
              category: 'DEPLOYMENT',
              likelyCause: 'The new release binds to another port.',
              evidence: ['Failures start right after the last pass.'],
              suggestions: ['Roll back.'],
            }),
          );
      });
    });
    await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
    modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/analyse`;
  });
  afterAll(async () => {
    model.closeAllConnections();
    await new Promise((resolve) => model.close(resolve));
  });

  it('asks the model with the group and its results, answers 202 until it replies, then shows its analysis', async () => {
    const service = await startTestService('pglite', {
      tickMs: 100,
      env: { RCA_PROVIDER_URL: modelUrl, RCA_PROVIDER_MODEL: 'triage-large', RCA_PROVIDER_TOKEN: 'model-token' },
    });
    try {
      const call = (method: string, path: string, body?: unknown) => service.api(method, path, body);
      const { check } = await checkWithFailures(service, call);
      const [group] = (await call('GET', `/v1/checks/${check.id}/error-groups`)).body;
      const started = await call('POST', `/v1/checks/${check.id}/error-groups/${group.id}/root-cause-analyses`);
      await eventually(async () => (asked.length > 0 ? true : undefined), 5000, 'the model asked');
      const pending = await call('GET', `/v1/root-cause-analyses/${started.body.id}`);
      expect(pending.status).toBe(202);
      expect(pending.body).toEqual({ id: started.body.id, status: 'PENDING' });

      expect(asked[0]!.authorization).toBe('Bearer model-token');
      expect(asked[0]!.body.model).toBe('triage-large');
      expect(asked[0]!.body.input).toMatchObject({
        subject: 'CHECK_ERROR_GROUP',
        check: { id: check.id, checkType: 'URL' },
        errorGroup: group,
        lastPassedAt: expect.any(String),
      });
      expect(asked[0]!.body.input.results).toHaveLength(2);

      release();
      const record = await eventually(async () => {
        const answer = await call('GET', `/v1/root-cause-analyses/${started.body.id}`);
        return answer.status === 200 ? answer.body : undefined;
      }, 5000, 'the analysis');
      expect(record.provider).toBe(`http:${new URL(modelUrl).host}`);
      expect(record.model).toBe('triage-large');
      expect(record.analysis.category).toBe('DEPLOYMENT');
    } finally {
      await service.close();
    }
  });

  it('retries a failing model, then lets the built-in analyser answer and says so', async () => {
    failing = true;
    asked.length = 0;
    const service = await startTestService('pglite', {
      tickMs: 100,
      analysisRetryBaseMs: 100,
      env: { RCA_PROVIDER_URL: modelUrl },
    });
    try {
      const call = (method: string, path: string, body?: unknown) => service.api(method, path, body);
      const { check } = await checkWithFailures(service, call);
      const [group] = (await call('GET', `/v1/checks/${check.id}/error-groups`)).body;
      const started = await call('POST', `/v1/checks/${check.id}/error-groups/${group.id}/root-cause-analyses`);
      const record = await eventually(async () => {
        const answer = await call('GET', `/v1/root-cause-analyses/${started.body.id}`);
        return answer.status === 200 ? answer.body : undefined;
      }, 10_000, 'the analysis');
      expect(asked).toHaveLength(3);
      expect(record.provider).toBe('outpost-builtin');
      expect(record.analysis.category).toBe('CONNECTION');
      expect(record.analysis.evidence.at(-1)).toMatch(/failed 3 times \(the analysis endpoint answered 500\); this is the built-in analysis/);
    } finally {
      failing = false;
      await service.close();
    }
  });
});
