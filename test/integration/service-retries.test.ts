import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, Result } from '../../src/protocol/agent-api.js';
import { eventually, ManualAgent, triggerCheck } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';
import { LOOPBACK_WEBHOOKS } from '../support/webhook-receiver.js';

const NETWORK_FAILURE: Partial<Result> = {
  hasErrors: true,
  statusCode: null,
  error: { code: 'CONNECTION_FAILED', message: 'connect ECONNREFUSED 127.0.0.1:9' },
};
const ASSERTION_FAILURE: Partial<Result> = {
  hasFailures: true,
  statusCode: 500,
  error: { code: 'ASSERTION_FAILED', message: 'status code 500 is not 200' },
};
const FINAL = ['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED'];

describe.each(DB_KINDS)('retries (%s)', (kind) => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService(kind, { tickMs: 100, env: { ...LOOPBACK_WEBHOOKS } });
  });
  afterAll(() => service?.close());

  /** A fresh location, an agent there running API and URL jobs, and a webhook channel nothing answers. */
  async function setUp() {
    const location = await service.privateLocation();
    const agent = await new ManualAgent(service, location.rawKey).connect({ checkTypes: ['URL', 'API'], runtimes: [] });
    const channel = await service.api('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'hook', url: 'http://127.0.0.1:9/hook' } });
    expect(channel.status, JSON.stringify(channel.body)).toBe(201);
    const createCheck = async (extra: Record<string, unknown>) => {
      const created = await service.api('POST', '/v1/checks/api', {
        name: 'Retried API',
        activated: false,
        request: { url: 'http://127.0.0.1:9/health' },
        privateLocations: [location.slugName],
        alertChannelSubscriptions: [{ alertChannelId: channel.body.id, activated: true }],
        doubleCheck: false,
        ...extra,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body;
    };
    const failures = async () =>
      ((await service.api('GET', `/v1/alert-channels/${channel.body.id}/deliveries`)).body as { event: string }[]).filter(
        (delivery) => delivery.event === 'ALERT_FAILURE',
      );
    const finalSession = (sessionId: string) =>
      eventually(async () => {
        const session = (await service.api('GET', `/v1/check-sessions/${sessionId}`)).body;
        return FINAL.includes(session.status) ? session : undefined;
      }, 5000, 'the session final');
    return { location, agent, createCheck, failures, finalSession };
  }

  /** Claims right now, expecting nothing: a retry waits out its backoff. */
  async function claimsNothing(agent: ManualAgent): Promise<void> {
    expect((await agent.claim(0, 5)).body.jobs).toEqual([]);
  }

  const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

  it('retries a failed attempt after the backoff; the session passes with retries 1 and nothing alerts', async () => {
    const { agent, createCheck, failures, finalSession } = await setUp();
    const check = await createCheck({ retryStrategy: { type: 'FIXED', baseBackoffSeconds: 1, maxRetries: 2, maxDurationSeconds: 600 } });
    const session = await triggerCheck(service, check.id);
    const first = await agent.claimOne();
    expect((await agent.report(first, NETWORK_FAILURE)).status).toBe(200);
    const running = (await service.api('GET', `/v1/check-sessions/${session.checkSessionId}`)).body;
    expect(running.status).toBe('PROGRESS');
    await claimsNothing(agent);
    const retry: Job = await agent.claimOne(5000);
    expect(retry).toMatchObject({ checkSessionId: session.checkSessionId, runLocation: first.runLocation });
    expect(retry.jobId).not.toBe(first.jobId);
    expect((await agent.report(retry)).status).toBe(200);

    const done = await finalSession(session.checkSessionId);
    expect(done.status).toBe('PASSED');
    expect(done.results.map((r: { resultType: string; retries: number }) => [r.resultType, r.retries])).toEqual([
      ['ATTEMPT', 0],
      ['FINAL', 1],
    ]);
    const finals = (await service.api('GET', `/v1/check-results/${check.id}`)).body;
    expect(finals).toHaveLength(1);
    expect(finals[0]).toMatchObject({ resultType: 'FINAL', retries: 1, hasErrors: false });
    const all = (await service.api('GET', `/v1/check-results/${check.id}?resultType=ALL`)).body;
    expect(all.map((r: { resultType: string }) => r.resultType).sort()).toEqual(['ATTEMPT', 'FINAL']);
    const attempts = (await service.api('GET', `/v1/check-results/${check.id}?resultType=ATTEMPT`)).body;
    expect(attempts).toEqual([expect.objectContaining({ resultType: 'ATTEMPT', retries: 0, hasErrors: true, error: NETWORK_FAILURE.error })]);
    await settle();
    expect(await failures()).toEqual([]);
  });

  it('alerts once when every attempt fails, and growing backoffs', async () => {
    const { agent, createCheck, failures, finalSession } = await setUp();
    const check = await createCheck({ retryStrategy: { type: 'LINEAR', baseBackoffSeconds: 0, maxRetries: 2 } });
    const session = await triggerCheck(service, check.id);
    for (let attempt = 0; attempt < 3; attempt++) {
      const job = await agent.claimOne();
      expect(job.checkSessionId).toBe(session.checkSessionId);
      expect((await agent.report(job, NETWORK_FAILURE)).status).toBe(200);
    }
    const done = await finalSession(session.checkSessionId);
    expect(done.status).toBe('FAILED');
    expect(done.results.map((r: { resultType: string; retries: number }) => [r.resultType, r.retries])).toEqual([
      ['ATTEMPT', 0],
      ['ATTEMPT', 1],
      ['FINAL', 2],
    ]);
    const all = (await service.api('GET', `/v1/check-results/${check.id}?resultType=ALL`)).body;
    expect(all.map((r: { resultType: string }) => r.resultType).sort()).toEqual(['ATTEMPT', 'ATTEMPT', 'FINAL']);
    await claimsNothing(agent);
    await eventually(async () => ((await failures()).length === 1 ? true : undefined), 5000, 'one failure alert');
    await settle();
    expect(await failures()).toHaveLength(1);
  });

  it('retries only the failures onlyOn names', async () => {
    const { agent, createCheck, finalSession } = await setUp();
    const check = await createCheck({ retryStrategy: { baseBackoffSeconds: 0, maxRetries: 1, onlyOn: ['NETWORK_ERROR'] } });
    const asserted = await triggerCheck(service, check.id);
    expect((await agent.report(await agent.claimOne(), ASSERTION_FAILURE)).status).toBe(200);
    const done = await finalSession(asserted.checkSessionId);
    expect(done.status).toBe('FAILED');
    expect(done.results).toHaveLength(1);
    expect(done.results[0]).toMatchObject({ resultType: 'FINAL', retries: 0 });

    const networked = await triggerCheck(service, check.id);
    expect((await agent.report(await agent.claimOne(), NETWORK_FAILURE)).status).toBe(200);
    expect((await agent.report(await agent.claimOne())).status).toBe(200);
    expect((await finalSession(networked.checkSessionId)).status).toBe('PASSED');
  });

  it('takes the group strategy, or the check\'s under FALLBACK', async () => {
    const { agent, createCheck, finalSession } = await setUp();
    const group = async (retryStrategy: unknown) => {
      const created = await service.api('POST', '/v1/check-groups', { name: 'g', activated: true, retryStrategy });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body.id as number;
    };
    const retriedOnce = { baseBackoffSeconds: 0, maxRetries: 1 };
    const runFailingOnce = async (check: { id: string }) => {
      const session = await triggerCheck(service, check.id);
      expect((await agent.report(await agent.claimOne(), NETWORK_FAILURE)).status).toBe(200);
      const next = await agent.claim(0, 5);
      if (next.body.jobs.length > 0) expect((await agent.report(next.body.jobs[0]!)).status).toBe(200);
      return (await finalSession(session.checkSessionId)).status;
    };
    expect(await runFailingOnce(await createCheck({ groupId: await group('FALLBACK'), retryStrategy: retriedOnce }))).toBe('PASSED');
    expect(await runFailingOnce(await createCheck({ groupId: await group(retriedOnce) }))).toBe('PASSED');
    expect(await runFailingOnce(await createCheck({ groupId: await group({ type: 'NO_RETRIES' }), retryStrategy: retriedOnce }))).toBe('FAILED');
    // The deprecated doubleCheck is one retry straight away.
    expect(await runFailingOnce(await createCheck({ doubleCheck: true }))).toBe('PASSED');
  });
  it('retries at another of the check\'s locations when sameRegion is false, and at the same one by default', async () => {
    const { location: office, agent: officeAgent, createCheck, finalSession } = await setUp();
    const branch = await service.privateLocation();
    const branchAgent = await new ManualAgent(service, branch.rawKey).connect({ checkTypes: ['URL', 'API'], runtimes: [] });
    const bothLocations = { privateLocations: [office.slugName, branch.slugName] };
    const elsewhere = await createCheck({ ...bothLocations, retryStrategy: { type: 'FIXED', baseBackoffSeconds: 0, maxRetries: 1, sameRegion: false } });
    const session = await triggerCheck(service, elsewhere.id);
    expect((await branchAgent.report(await branchAgent.claimOne())).status).toBe(200);
    const failed = await officeAgent.claimOne();
    expect((await officeAgent.report(failed, NETWORK_FAILURE)).status).toBe(200);
    const retry: Job = await branchAgent.claimOne(5000);
    expect(retry).toMatchObject({ checkSessionId: session.checkSessionId, runLocation: branch.slugName });
    await claimsNothing(officeAgent);
    expect((await branchAgent.report(retry)).status).toBe(200);
    const done = await finalSession(session.checkSessionId);
    expect(done.status).toBe('PASSED');
    expect(done.results.filter((r: { resultType: string }) => r.resultType === 'FINAL').map((r: { runLocation: string }) => r.runLocation)).toEqual([
      branch.slugName,
      branch.slugName,
    ]);

    const sameRegion = await createCheck({ ...bothLocations, retryStrategy: { type: 'FIXED', baseBackoffSeconds: 0, maxRetries: 1 } });
    const again = await triggerCheck(service, sameRegion.id);
    expect((await branchAgent.report(await branchAgent.claimOne())).status).toBe(200);
    expect((await officeAgent.report(await officeAgent.claimOne(), NETWORK_FAILURE)).status).toBe(200);
    const sameRetry: Job = await officeAgent.claimOne(5000);
    expect(sameRetry).toMatchObject({ checkSessionId: again.checkSessionId, runLocation: office.slugName });
    expect((await officeAgent.report(sameRetry)).status).toBe(200);
    expect((await finalSession(again.checkSessionId)).status).toBe('PASSED');
  });
});
