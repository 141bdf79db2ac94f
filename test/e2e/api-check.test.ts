/**
 * API checks end to end: the service hands out the job, the real agent runs
 * it in the lane laneOfJob names (a probe thread without scripts, a sandbox
 * with them) against a loopback JSON API, and the recorded result carries
 * the response, its assertions and no secret.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import { SCRUB_MARKER } from '../../src/scrub/index.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { startApiTarget, TARGET_TOKEN, type ApiTarget } from '../support/api-target.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';
import { LOOPBACK_WEBHOOKS, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { runToFinal } from '../support/sessions.js';

describe('API checks through the service and the agent', { timeout: 60_000 }, () => {
  let service: TestService;
  let agent: TestAgent;
  let target: ApiTarget;
  let slug: string;
  let sandboxDirectory: string;

  beforeAll(async () => {
    sandboxDirectory = await mkdtemp(join(tmpdir(), 'outpost-e2e-api-'));
    target = await startApiTarget();
    service = await startTestService(DB_KINDS[0]!, { env: { ...LOOPBACK_WEBHOOKS } });
    const location = await service.privateLocation();
    slug = location.slugName;
    agent = await startTestAgent({
      apiKey: location.rawKey,
      apiUrl: service.url,
      sandbox: { ...defaultSandboxConfig(), uidBase: 64900, uidCount: 20, directory: sandboxDirectory },
    });
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');
  });

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await target?.close();
    if (sandboxDirectory) await rm(sandboxDirectory, { recursive: true, force: true });
  });

  const create = async (extra: Record<string, unknown>) => {
    const created = await service.api('POST', '/v1/checks/api', {
      name: 'private route',
      activated: false,
      privateLocations: [slug],
      request: {
        url: `${target.url}/private`,
        headers: [{ key: 'Authorization', value: 'Bearer {{API_TOKEN}}' }],
        assertions: [
          { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
          { source: 'JSON_BODY', property: '$.ok', comparison: 'EQUALS', target: 'true' },
        ],
      },
      environmentVariables: [{ key: 'API_TOKEN', value: TARGET_TOKEN, secret: true }],
      ...extra,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id as string;
  };

  it('runs a check without scripts as an uptime probe, secrets scrubbed', async () => {
    const { session, detail } = await runToFinal(service, await create({}), 30_000);
    expect(session.status, JSON.stringify(detail)).toBe('PASSED');
    expect(detail.details.response).toMatchObject({ status: 200 });
    expect(detail.details.request.headers.Authorization).toBe(SCRUB_MARKER);
    expect(detail.details.response.body).toContain(SCRUB_MARKER);
    expect(JSON.stringify({ session, detail })).not.toContain(TARGET_TOKEN);
  });

  it('runs a check with setup and teardown scripts in the script lane', async () => {
    const id = await create({
      request: {
        url: `${target.url}/private`,
        assertions: [{ source: 'JSON_BODY', property: '$.teardown', comparison: 'EQUALS', target: 'ran' }],
      },
      setupScript: "request.headers.Authorization = 'Bearer ' + process.env.API_TOKEN; console.log('token', process.env.API_TOKEN);",
      tearDownScript: "const body = JSON.parse(response.body); body.teardown = 'ran'; response.body = JSON.stringify(body);",
    });
    const { session, detail } = await runToFinal(service, id, 45_000);
    expect(session.status, JSON.stringify(detail)).toBe('PASSED');
    expect(detail.logs.map((line: { message: string }) => line.message)).toContain(`token ${SCRUB_MARKER}`);
    expect(JSON.stringify({ session, detail })).not.toContain(TARGET_TOKEN);
  });

  describe('retries', () => {
    let hooks: WebhookReceiver;
    let channelId: number;

    beforeAll(async () => {
      hooks = await startWebhookReceiver();
      const channel = await service.api('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'on call', url: `${hooks.base}/hook` } });
      expect(channel.status, JSON.stringify(channel.body)).toBe(201);
      channelId = channel.body.id;
    });
    afterAll(() => hooks?.close());

    const retried = (path: string) =>
      create({
        request: { url: `${target.url}${path}`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
        retryStrategy: { type: 'FIXED', baseBackoffSeconds: 1, maxRetries: 1, maxDurationSeconds: 60 },
        alertChannelSubscriptions: [{ alertChannelId: channelId, activated: true }],
      });
    const failureAlerts = (checkId: string) => hooks.events('ALERT_FAILURE').filter((event) => event.check?.id === checkId);

    it('a run that fails once and passes on its retry ends PASSED with retries 1, and alerts nobody', async () => {
      const id = await retried('/flaky?key=once&failures=1');
      const { session } = await runToFinal(service, id, 45_000);
      expect(session.status).toBe('PASSED');
      expect(session.results.map((r: { resultType: string; retries: number }) => [r.resultType, r.retries])).toEqual([
        ['ATTEMPT', 0],
        ['FINAL', 1],
      ]);
      expect(target.received.filter((request) => request.url.startsWith('/flaky?key=once'))).toHaveLength(2);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(failureAlerts(id)).toEqual([]);
    });

    it('a run that fails every attempt ends FAILED and alerts once', async () => {
      const id = await retried('/fail');
      const { session } = await runToFinal(service, id, 45_000);
      expect(session.status).toBe('FAILED');
      expect(session.results.map((r: { resultType: string }) => r.resultType)).toEqual(['ATTEMPT', 'FINAL']);
      await eventually(async () => (failureAlerts(id).length > 0 ? true : undefined), 15_000, 'the failure alert');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(failureAlerts(id)).toHaveLength(1);
    });
  });
});
