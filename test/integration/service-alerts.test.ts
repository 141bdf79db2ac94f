import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Result } from '../../src/protocol/agent-api.js';
import { asNewAccount, eventually, expectErrorA, expectErrorB, ManualAgent, urlCheckBody } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { LOOPBACK_WEBHOOKS, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const FAIL: Partial<Result> = { hasErrors: true, statusCode: null, error: { code: 'CONNECTION_FAILED', message: 'connect ECONNREFUSED 127.0.0.1:9' } };

describe.each(DB_KINDS)('alerts (%s)', (kind) => {
  let service: TestService;
  let smtp: TestSmtp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    smtp = await startTestSmtp();
    receiver = await startWebhookReceiver();
    service = await startTestService(kind, {
      tickMs: 100,
      alertRetryBaseMs: 100,
      env: { SMTP_URL: smtp.url, SMS_WEBHOOK_URL: `${receiver.base}/sms`, ...LOOPBACK_WEBHOOKS },
    });
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await smtp?.close();
  });

  /** An account with a private location, an agent there, and a way to report each run of a check as passed or failed. */
  async function freshAccount() {
    const { account, call } = await asNewAccount(service);
    const slugName = `alerts-${randomUUID().slice(0, 8)}`;
    const location = await call('POST', '/v1/private-locations', { name: 'Rack', slugName });
    const key = await call('POST', `/v1/private-locations/${location.body.id}/keys`);
    const agent = await new ManualAgent(service, key.body.rawKey).connect();
    const channel = async (type: string, config: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      const answer = await call('POST', '/v1/alert-channels', { type, config, ...extra });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body;
    };
    const check = async (body: Record<string, unknown> = {}) => {
      const answer = await call('POST', '/v1/checks/url', urlCheckBody([slugName], { activated: false, ...body }));
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body;
    };
    /** Runs the check once with the given outcome; resolves when the session is final. */
    const run = async (checkId: string, outcome: Partial<Result> = {}, runSource = 'TRIGGER_API') => {
      const triggered = await call('POST', '/v2/check-sessions/trigger', { target: { checkId: [checkId] }, runSource });
      const job = await agent.claimOne();
      expect((await agent.report(job, outcome)).status).toBe(200);
      const sessionId = triggered.body.sessions[0].checkSessionId;
      await eventually(async () => {
        const session = await call('GET', `/v1/check-sessions/${sessionId}`);
        return ['PASSED', 'FAILED', 'DEGRADED'].includes(session.body.status) ? true : undefined;
      }, 5000, 'the session final');
      return sessionId as string;
    };
    const deliveries = async (channelId: number) => (await call('GET', `/v1/alert-channels/${channelId}/deliveries`)).body;
    return { account, call, channel, check, run, deliveries };
  }
  const settle = () => new Promise((resolve) => setTimeout(resolve, 700));

  describe('channels', () => {
    it('creates each kind with its defaults, shows the signing secret once, and reads, replaces and deletes', async () => {
      const { call, channel } = await freshAccount();
      const hook = await channel('WEBHOOK', { name: 'Ops hook', url: `${receiver.base}/hook` });
      expect(hook).toEqual({
        id: expect.any(Number),
        type: 'WEBHOOK',
        config: { name: 'Ops hook', url: `${receiver.base}/hook`, method: 'POST', headers: [], queryParameters: [] },
        sendFailure: true,
        sendRecovery: true,
        sendDegraded: false,
        autoSubscribe: false,
        signingSecret: expect.stringMatching(/^whsec_/),
        created_at: expect.any(String),
        updated_at: null,
      });
      const { signingSecret: _secret, ...shown } = hook;
      expect((await call('GET', `/v1/alert-channels/${hook.id}`)).body).toEqual(shown);
      expect(JSON.stringify((await call('GET', '/v1/alert-channels')).body)).not.toContain(hook.signingSecret);
      const replaced = await call('PUT', `/v1/alert-channels/${hook.id}`, { type: 'SLACK', config: { url: `${receiver.base}/slack` } });
      expect(replaced.body).toMatchObject({ type: 'SLACK', config: { url: `${receiver.base}/slack` }, updated_at: expect.any(String) });
      expect((await call('DELETE', `/v1/alert-channels/${hook.id}`)).status).toBe(204);
      expectErrorA(await call('GET', `/v1/alert-channels/${hook.id}`), 404, 'Not Found');
      expectErrorB(await call('DELETE', `/v1/alert-channels/${hook.id}`), ['id'], 404);
    });

    it.each([
      ['an e-mail channel without an address', { type: 'EMAIL', config: {} }, ['config.address']],
      ['an e-mail channel with a bad address', { type: 'EMAIL', config: { address: 'ops' } }, ['config.address']],
      ['a webhook without a url', { type: 'WEBHOOK', config: { name: 'x' } }, ['config.url']],
      ['a webhook with an ftp url', { type: 'WEBHOOK', config: { name: 'x', url: 'ftp://x' } }, ['config.url']],
      ['a webhook with an unknown method', { type: 'WEBHOOK', config: { name: 'x', url: 'http://x', method: 'TRACE' } }, ['config.method']],
      ['an SMS number without a country code', { type: 'SMS', config: { number: '0151234567', name: 'On call' } }, ['config.number']],
      ['an unknown type', { type: 'PAGER', config: {} }, ['type']],
    ])('refuses %s: 400 naming the field', async (_case, body, fields) => {
      const { call } = await freshAccount();
      expectErrorB(await call('POST', '/v1/alert-channels', body), fields);
      expect((await call('GET', '/v1/alert-channels')).body).toEqual([]);
    });

    it('subscribes checks: named channels must exist, autoSubscribe ones join unless autoAssignAlerts=false, and alertChannels shows them', async () => {
      const { call, channel, check } = await freshAccount();
      const mail = await channel('EMAIL', { address: 'ops@example.test' }, { autoSubscribe: true });
      const sms = await channel('SMS', { number: '+4915112345678', name: 'On call' });
      expectErrorB(
        await call('POST', '/v1/checks/url', urlCheckBody([], { alertChannelSubscriptions: [{ alertChannelId: 999_999, activated: true }] })),
        ['alertChannelSubscriptions.0.alertChannelId'],
      );
      const auto = await check({ alertChannelSubscriptions: [{ alertChannelId: sms.id, activated: true }] });
      expect(auto.alertChannelSubscriptions).toEqual([
        { alertChannelId: sms.id, activated: true },
        { alertChannelId: mail.id, activated: true },
      ]);
      expect(auto.alertChannels).toEqual({ email: [{ address: 'ops@example.test' }], webhook: [], slack: [], sms: [{ number: '+4915112345678', name: 'On call' }] });
      const manual = await call('POST', '/v1/checks/url?autoAssignAlerts=false', urlCheckBody([], { activated: false }));
      expect(manual.body.alertChannelSubscriptions).toEqual([]);
      expect(manual.body.alertChannels).toEqual({ email: [], webhook: [], slack: [], sms: [] });
    });

    it('keeps account alert settings, defaulting to an alert on the first failed run', async () => {
      const { call } = await freshAccount();
      expect((await call('GET', '/v1/accounts/me/alert-settings')).body).toEqual({
        escalationType: 'RUN_BASED',
        runBasedEscalation: { failedRunThreshold: 1 },
        reminders: { amount: 0, interval: 5 },
        parallelRunFailureThreshold: { enabled: false, percentage: 10 },
      });
      const changed = await call('PUT', '/v1/accounts/me/alert-settings', { runBasedEscalation: { failedRunThreshold: 3 } });
      expect(changed.body.runBasedEscalation).toEqual({ failedRunThreshold: 3 });
      expect((await call('GET', '/v1/accounts/me/alert-settings')).body.reminders).toEqual({ amount: 0, interval: 5 });
      expectErrorB(await call('PUT', '/v1/accounts/me/alert-settings', { reminders: { amount: -1 } }), ['reminders.amount']);
    });
  });

  describe('failure and recovery', () => {
    it('sends a signed webhook, a Slack message, an SMS and an e-mail when a check fails, and again when it recovers', async () => {
      const { channel, check, run, deliveries } = await freshAccount();
      const tag = randomUUID().slice(0, 8);
      const hook = await channel('WEBHOOK', {
        name: 'Ops',
        url: `${receiver.base}/hook-${tag}`,
        method: 'PUT',
        headers: [{ key: 'X-Team', value: 'ops' }],
        queryParameters: [{ key: 'source', value: 'outpost' }],
      });
      const slack = await channel('SLACK', { url: `${receiver.base}/slack-${tag}` });
      const sms = await channel('SMS', { number: '+4915112345678', name: `On call ${tag}` });
      const mailTo = `ops-${tag}@example.test`;
      const mail = await channel('EMAIL', { address: mailTo });
      const subscriptions = [hook, slack, sms, mail].map((c) => ({ alertChannelId: c.id, activated: true }));
      const watched = await check({ name: `Checkout ${tag}`, alertChannelSubscriptions: subscriptions });

      const failedSession = await run(watched.id, FAIL);
      const hooked = await eventually(async () => receiver.at(`/hook-${tag}`)[0], 5000, 'the webhook');
      expect(hooked.method).toBe('PUT');
      expect(hooked.query.get('source')).toBe('outpost');
      expect(hooked.headers['x-team']).toBe('ops');
      expect(hooked.headers['content-type']).toBe('application/json');
      expect(hooked.headers['x-outpost-event']).toBe('ALERT_FAILURE');
      const [t, v1] = String(hooked.headers['x-outpost-signature']).split(',').map((part) => part.split('=')[1]!);
      expect(v1).toBe(createHmac('sha256', hook.signingSecret).update(`${t}.${hooked.body}`).digest('hex'));
      expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(60);
      const event = JSON.parse(hooked.body);
      expect(event).toMatchObject({
        event: 'ALERT_FAILURE',
        check: { id: watched.id, name: `Checkout ${tag}`, checkType: 'URL' },
        checkSession: { id: failedSession, status: 'FAILED' },
        results: [{ hasErrors: true, error: { code: 'CONNECTION_FAILED' } }],
        consecutiveFailures: 1,
      });

      const slackMessage = await eventually(async () => receiver.at(`/slack-${tag}`)[0], 5000, 'the Slack message');
      expect(JSON.parse(slackMessage.body).text).toMatch(new RegExp(`^Checkout ${tag} is failing .*ECONNREFUSED`));
      const text = await eventually(
        async () => receiver.at('/sms').find((entry) => JSON.parse(entry.body).name === `On call ${tag}`),
        5000,
        'the SMS',
      );
      expect(JSON.parse(text.body)).toMatchObject({ to: '+4915112345678', message: expect.stringMatching(/is failing/) });
      expect((await smtp.waitFor(mailTo, /is failing/)).subject).toMatch(new RegExp(`^\\[Outpost\\] Checkout ${tag} is failing`));

      // A second failure does not alert again; the recovery does, everywhere.
      await run(watched.id, FAIL);
      await run(watched.id);
      await eventually(async () => (receiver.at(`/hook-${tag}`).length >= 2 ? true : undefined), 5000, 'the recovery');
      await settle();
      expect(receiver.at(`/hook-${tag}`).map((entry) => entry.headers['x-outpost-event'])).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);
      expect(receiver.at(`/slack-${tag}`).map((entry) => JSON.parse(entry.body).text)).toEqual([
        expect.stringMatching(/is failing/),
        expect.stringMatching(/has recovered/),
      ]);
      await smtp.waitFor(mailTo, /has recovered/);
      const recorded = await eventually(async () => {
        const found = await deliveries(hook.id);
        return found.length === 2 && found.every((d: { state: string }) => d.state === 'delivered') ? found : undefined;
      }, 5000, 'both deliveries recorded');
      expect(recorded.map((d: { event: string; state: string }) => [d.event, d.state])).toEqual([
        ['ALERT_RECOVERY', 'delivered'],
        ['ALERT_FAILURE', 'delivered'],
      ]);
      expect(recorded[0]).toMatchObject({ channelType: 'WEBHOOK', checkId: watched.id, attempts: 1, lastError: null });
      expect(recorded[0]).not.toHaveProperty('lastStatus');
    });

    it('waits for failedRunThreshold failed runs in a row before alerting', async () => {
      const { channel, check, run } = await freshAccount();
      const tag = randomUUID().slice(0, 8);
      const hook = await channel('WEBHOOK', { name: 'x', url: `${receiver.base}/threshold-${tag}` });
      const watched = await check({
        useGlobalAlertSettings: false,
        alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
        alertChannelSubscriptions: [{ alertChannelId: hook.id, activated: true }],
      });
      await run(watched.id, FAIL);
      await run(watched.id);
      await run(watched.id, FAIL);
      await settle();
      expect(receiver.at(`/threshold-${tag}`)).toEqual([]);
      await run(watched.id, FAIL);
      const alert = await eventually(async () => receiver.at(`/threshold-${tag}`)[0], 5000, 'the alert');
      expect(JSON.parse(alert.body)).toMatchObject({ event: 'ALERT_FAILURE', consecutiveFailures: 2 });
    });

    it('leaves test runs out of alerting: failing TEST_RECORD runs send nothing and count for nothing', async () => {
      const { channel, check, run } = await freshAccount();
      const tag = randomUUID().slice(0, 8);
      const hook = await channel('WEBHOOK', { name: 'x', url: `${receiver.base}/tests-${tag}` });
      const watched = await check({
        useGlobalAlertSettings: false,
        alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
        alertChannelSubscriptions: [{ alertChannelId: hook.id, activated: true }],
      });
      await run(watched.id, FAIL, 'TEST_RECORD');
      await run(watched.id, FAIL, 'TEST_NO_RECORD');
      await run(watched.id, FAIL);
      await settle();
      expect(receiver.at(`/tests-${tag}`)).toEqual([]);
      await run(watched.id, FAIL);
      await eventually(async () => receiver.at(`/tests-${tag}`)[0], 5000, 'the alert after two monitored failures');
    });

    it('holds alerts back for a muted check and during a maintenance window on its tags', async () => {
      const { call, channel, check, run } = await freshAccount();
      const tag = randomUUID().slice(0, 8);
      const hook = await channel('WEBHOOK', { name: 'x', url: `${receiver.base}/quiet-${tag}` });
      const subscriptions = [{ alertChannelId: hook.id, activated: true }];
      const muted = await check({ muted: true, alertChannelSubscriptions: subscriptions });
      const maintained = await check({ tags: [`db-${tag}`], alertChannelSubscriptions: subscriptions });
      await call('POST', '/v1/maintenance-windows', {
        name: 'Upgrade',
        tags: [`db-${tag}`],
        startsAt: new Date(Date.now() - 60_000).toISOString(),
        endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      });
      await run(muted.id, FAIL);
      await run(maintained.id, FAIL);
      await settle();
      expect(receiver.at(`/quiet-${tag}`)).toEqual([]);
      expect(service.logs.filter((line) => line.includes('alert held back') && line.includes(muted.id))).toHaveLength(1);
      expect(service.logs.some((line) => line.includes('alert held back') && line.includes(maintained.id) && line.includes('maintenance'))).toBe(true);
    });

    it('retries a webhook the receiver refuses, and records each attempt', async () => {
      const { channel, check, run, deliveries } = await freshAccount();
      const tag = randomUUID().slice(0, 8);
      const hook = await channel('WEBHOOK', { name: 'x', url: `${receiver.base}/flaky-${tag}` });
      receiver.fail(`/flaky-${tag}`, 2);
      const watched = await check({ alertChannelSubscriptions: [{ alertChannelId: hook.id, activated: true }] });
      await run(watched.id, FAIL);
      const delivered = await eventually(async () => {
        const [latest] = await deliveries(hook.id);
        return latest?.state === 'delivered' ? latest : undefined;
      }, 10_000, 'the delivery');
      expect(delivered).toMatchObject({ attempts: 3, lastError: null });
      expect(delivered).not.toHaveProperty('lastStatus');
      expect(receiver.at(`/flaky-${tag}`)).toHaveLength(3);
    });

    it('sends reminders while the check stays failing, as many as asked, then stops', async () => {
      const { channel, check, run } = await freshAccount();
      const tag = randomUUID().slice(0, 8);
      const hook = await channel('WEBHOOK', { name: 'x', url: `${receiver.base}/remind-${tag}` });
      const watched = await check({
        useGlobalAlertSettings: false,
        // 0.01 minutes: 0.6 s between reminders.
        alertSettings: { escalationType: 'RUN_BASED', reminders: { amount: 2, interval: 0.01 } },
        alertChannelSubscriptions: [{ alertChannelId: hook.id, activated: true }],
      });
      await run(watched.id, FAIL);
      await eventually(async () => (receiver.at(`/remind-${tag}`).length >= 3 ? true : undefined), 10_000, 'two reminders');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(receiver.at(`/remind-${tag}`).map((entry) => entry.headers['x-outpost-event'])).toEqual([
        'ALERT_FAILURE',
        'ALERT_REMINDER',
        'ALERT_REMINDER',
      ]);
    });

    it('counts a run at several locations as failed only past parallelRunFailureThreshold, and as degraded below it', async () => {
      const { call, channel } = await freshAccount();
      const tag = randomUUID().slice(0, 8);
      const hook = await channel('WEBHOOK', { name: 'x', url: `${receiver.base}/parallel-${tag}` }, { sendDegraded: true });
      const agents: ManualAgent[] = [];
      const slugs: string[] = [];
      for (const name of ['east', 'west']) {
        const slugName = `${name}-${tag}`;
        const location = await call('POST', '/v1/private-locations', { name, slugName });
        const key = await call('POST', `/v1/private-locations/${location.body.id}/keys`);
        agents.push(await new ManualAgent(service, key.body.rawKey).connect());
        slugs.push(slugName);
      }
      const watched = (
        await call('POST', '/v1/checks/url', urlCheckBody(slugs, {
          activated: false,
          useGlobalAlertSettings: false,
          alertSettings: { escalationType: 'RUN_BASED', parallelRunFailureThreshold: { enabled: true, percentage: 60 } },
          alertChannelSubscriptions: [{ alertChannelId: hook.id, activated: true }],
        }))
      ).body;
      const runWith = async (outcomes: Partial<Result>[]) => {
        await call('POST', '/v2/check-sessions/trigger', { target: { checkId: [watched.id] } });
        for (const [index, agent] of agents.entries()) await agent.report(await agent.claimOne(), outcomes[index]);
      };
      await runWith([FAIL, {}]);
      const degraded = await eventually(async () => receiver.at(`/parallel-${tag}`)[0], 5000, 'the degraded alert');
      expect(JSON.parse(degraded.body)).toMatchObject({ event: 'ALERT_DEGRADED', checkSession: { status: 'FAILED' } });
      await runWith([FAIL, FAIL]);
      await eventually(async () => (receiver.at(`/parallel-${tag}`).length >= 2 ? true : undefined), 5000, 'the failure alert');
      expect(receiver.at(`/parallel-${tag}`).map((entry) => entry.headers['x-outpost-event'])).toEqual(['ALERT_DEGRADED', 'ALERT_FAILURE']);
    });

    it('opens an incident on the status page service when the check fails, and resolves it when it recovers', async () => {
      const { call, check, run } = await freshAccount();
      const serviceId = (await call('POST', '/v1/status-pages/services', { name: 'Checkout' })).body.id;
      const watched = await check({ triggerIncident: { serviceId, name: 'Checkout is down', description: 'Payments fail' } });
      await run(watched.id, FAIL);
      const opened = await eventually(async () => (await call('GET', '/v1/status-pages/incidents')).body[0], 5000, 'the incident');
      expect(opened).toMatchObject({
        name: 'Checkout is down',
        services: [{ id: serviceId, name: 'Checkout' }],
        lastUpdateStatus: 'INVESTIGATING',
        incidentUpdates: [{ description: 'Payments fail', status: 'INVESTIGATING' }],
      });
      await run(watched.id);
      const resolved = await eventually(async () => {
        const incident = (await call('GET', `/v1/status-pages/incidents/${opened.id}`)).body;
        return incident.lastUpdateStatus === 'RESOLVED' ? incident : undefined;
      }, 5000, 'the incident resolved');
      expect(resolved.resolvedAt).toEqual(expect.any(String));
      expectErrorB(
        await call('POST', '/v1/checks/url', urlCheckBody([], { triggerIncident: { serviceId: randomUUID() } })),
        ['triggerIncident.serviceId'],
      );
    });
  });
});
