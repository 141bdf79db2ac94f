import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Result } from '../../src/protocol/agent-api.js';
import {
  asNewAccount,
  eventually,
  expectErrorA,
  expectErrorB,
  ManualAgent,
  sendText,
  urlCheckBody,
  type AccountCall,
} from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';
import { LOOPBACK_WEBHOOKS, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const REFUSED: Partial<Result> = { hasErrors: true, statusCode: null, error: { code: 'CONNECTION_FAILED', message: 'connect ECONNREFUSED 127.0.0.1:9' } };

/**
 * The answers `checkly alert-channels`, `status-pages`, `incidents` and `rca`
 * read: a caller naming its account in x-checkly-account gets them, everyone
 * else keeps Outpost's own.
 */
describe.each(DB_KINDS)('Checkly operations dialect (%s)', (kind) => {
  let service: TestService;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    service = await startTestService(kind, { tickMs: 100, alertRetryBaseMs: 50, env: { ...LOOPBACK_WEBHOOKS } });
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
  });

  /** A new account, called both ways: `call` as Outpost's clients do, `cli` as the public checkly CLI does. */
  async function freshAccount() {
    const { account, call } = await asNewAccount(service);
    const cli: AccountCall = (method, path, body) =>
      service.raw(method, path, body, { authorization: `Bearer ${account.apiKey}`, 'x-checkly-account': account.accountId });
    return { accountId: account.accountId, apiKey: account.apiKey, call, cli };
  }

  /** A check at a new private location whose runs a hand-driven agent reports as told. */
  async function checkWithAgent(call: AccountCall, body: Record<string, unknown> = {}) {
    const slugName = `ops-${randomUUID().slice(0, 8)}`;
    const location = await call('POST', '/v1/private-locations', { name: 'Rack', slugName });
    const key = await call('POST', `/v1/private-locations/${location.body.id}/keys`);
    const agent = await new ManualAgent(service, key.body.rawKey).connect();
    const created = await call('POST', '/v1/checks/url', urlCheckBody([slugName], { activated: false, ...body }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = async (outcome: Partial<Result>) => {
      const triggered = await call('POST', '/v2/check-sessions/trigger', { target: { checkId: [created.body.id] } });
      const job = await agent.claimOne();
      expect((await agent.report(job, outcome)).status).toBe(200);
      const sessionId = triggered.body.sessions[0].checkSessionId as string;
      await eventually(async () => {
        const session = await call('GET', `/v1/check-sessions/${sessionId}`);
        return ['PASSED', 'FAILED', 'DEGRADED'].includes(session.body.status) ? true : undefined;
      }, 5000, 'the session final');
      return sessionId;
    };
    return { check: created.body, run };
  }

  describe('alert channels', () => {
    it('pages the list with a content-range total and shows who subscribes, to the CLI only', async () => {
      const { call, cli } = await freshAccount();
      const channels = [];
      for (const address of ['a@example.test', 'b@example.test', 'c@example.test']) {
        channels.push((await call('POST', '/v1/alert-channels', { type: 'EMAIL', config: { address } })).body);
      }
      const check = (await call('POST', '/v1/checks/url', urlCheckBody([], {
        activated: false,
        name: 'Checkout',
        alertChannelSubscriptions: [{ alertChannelId: channels[1].id, activated: true }],
      }))).body;
      const group = (await call('POST', '/v1/check-groups', {
        name: 'Payments',
        activated: true,
        alertChannelSubscriptions: [{ alertChannelId: channels[1].id, activated: false }],
      })).body;

      const second = await cli('GET', '/v1/alert-channels?limit=2&page=1');
      expect(second.status).toBe(200);
      expect(second.headers.get('content-range')).toBe('0-1/3');
      expect(second.body.map((channel: { id: number }) => channel.id)).toEqual([channels[0].id, channels[1].id]);
      expect(second.body[1].subscriptions).toEqual([
        { checkId: check.id, checkName: 'Checkout', groupId: null, activated: true },
        { checkId: null, groupId: group.id, groupName: 'Payments', activated: false },
      ]);
      expect(second.body[0].subscriptions).toEqual([]);
      const last = await cli('GET', '/v1/alert-channels?limit=2&page=2');
      expect(last.headers.get('content-range')).toBe('2-2/3');
      expect(last.body).toHaveLength(1);
      expect((await cli('GET', '/v1/alert-channels?limit=2&page=3')).headers.get('content-range')).toBe('*/3');

      const one = await cli('GET', `/v1/alert-channels/${channels[1].id}`);
      expect(one.body).toMatchObject({ id: channels[1].id, type: 'EMAIL', config: { address: 'b@example.test' } });
      expect(one.body.subscriptions).toHaveLength(2);

      // Outpost's own callers read what they always read: every channel, no subscriptions.
      const own = await call('GET', '/v1/alert-channels');
      expect(own.body).toHaveLength(3);
      expect(own.body[1]).not.toHaveProperty('subscriptions');
      expect((await call('GET', `/v1/alert-channels/${channels[1].id}`)).body).not.toHaveProperty('subscriptions');
      expectErrorA(await cli('GET', '/v1/alert-channels?limit=101'), 400, 'Bad Request');
    });

    it('lists real deliveries as the notification log, filtered by channel, time and failure', async () => {
      const { call, cli } = await freshAccount();
      const path = `/hook-${randomUUID().slice(0, 8)}`;
      const hook = (await call('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'On call', url: `${receiver.base}${path}` } })).body;
      const other = (await call('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'Broken', url: `${receiver.base}${path}-down` } })).body;
      receiver.fail(`${path}-down`, 100);
      const { check, run } = await checkWithAgent(call, {
        name: 'Shop API',
        alertChannelSubscriptions: [
          { alertChannelId: hook.id, activated: true },
          { alertChannelId: other.id, activated: true },
        ],
      });
      const before = Math.floor(Date.now() / 1000) - 1;
      const sessionId = await run(REFUSED);

      const delivered = await eventually(async () => {
        const answer = await cli('GET', `/v1/alert-notifications?alertChannelId=${hook.id}&limit=10&page=1`);
        return answer.body[0]?.status === 'SUCCESS' ? answer : undefined;
      }, 10_000, 'the webhook delivered');
      expect(delivered.headers.get('content-range')).toBe('0-0/1');
      expect(delivered.body).toEqual([
        {
          id: expect.any(String),
          type: 'WEBHOOK',
          status: 'SUCCESS',
          event: 'ALERT_FAILURE',
          notificationResult: 'ALERT_FAILURE: delivered after 1 attempt',
          timestamp: expect.any(String),
          deliveredAt: expect.any(String),
          attempts: 1,
          alertChannelId: hook.id,
          checkId: check.id,
          checkName: 'Shop API',
          checkType: 'URL',
          checkSessionId: sessionId,
          checkResultId: null,
        },
      ]);
      expect(receiver.at(path)).toHaveLength(1);

      const failed = await eventually(async () => {
        const answer = await cli('GET', `/v1/alert-notifications?alertChannelId=${other.id}&hasFailures=true`);
        return answer.body[0]?.status === 'FAILURE' ? answer : undefined;
      }, 15_000, 'the broken webhook given up on');
      // The receiver's answer is the operator's to read in the log, not the account's: a stored status would probe internal hosts.
      // Every field is named, so none can carry it (ids and times are random, and may hold any digits).
      expect(failed.body).toEqual([
        {
          id: expect.any(String),
          type: 'WEBHOOK',
          status: 'FAILURE',
          event: 'ALERT_FAILURE',
          notificationResult: 'ALERT_FAILURE: given up after 5 attempts: the receiver did not accept it',
          timestamp: expect.any(String),
          deliveredAt: null,
          attempts: 5,
          alertChannelId: other.id,
          checkId: check.id,
          checkName: 'Shop API',
          checkType: 'URL',
          checkSessionId: expect.any(String),
          checkResultId: null,
        },
      ]);
      expect(service.logs.some((line) => line.includes('alert delivery given up') && line.includes('"status":500'))).toBe(true);
      expect((await cli('GET', `/v1/alert-notifications?alertChannelId=${hook.id}&hasFailures=true`)).body).toEqual([]);

      const all = await cli('GET', `/v1/alert-notifications?from=${before}`);
      expect(all.body.map((entry: { alertChannelId: number }) => entry.alertChannelId).sort()).toEqual([hook.id, other.id].sort());
      expect((await cli('GET', `/v1/alert-notifications?to=${before}`)).body).toEqual([]);
      expectErrorA(await cli('GET', '/v1/alert-notifications?alertChannelId=999999'), 404, 'Not Found');
    }, 30_000);
  });

  describe('status pages and incidents', () => {
    async function pageWithServices(call: AccountCall) {
      const api = (await call('POST', '/v1/status-pages/services', { name: `API ${randomUUID().slice(0, 6)}` })).body;
      const web = (await call('POST', '/v1/status-pages/services', { name: `Web ${randomUUID().slice(0, 6)}` })).body;
      const page = await call('POST', '/v1/status-pages', {
        name: 'Shop status',
        url: `shop-${randomUUID().slice(0, 8)}`,
        cards: [{ name: 'Public', services: [api.id, web.id] }],
      });
      expect(page.status, JSON.stringify(page.body)).toBe(201);
      return { api, web, page: page.body };
    }

    it('answers pages with services and their account, in cursor pages, to the CLI only', async () => {
      const { accountId, call, cli } = await freshAccount();
      const { api, web, page } = await pageWithServices(call);
      const more = [];
      for (const name of ['Second', 'Third']) {
        more.push((await call('POST', '/v1/status-pages', { name, url: `${name.toLowerCase()}-${randomUUID().slice(0, 8)}` })).body);
      }

      const first = await cli('GET', '/v1/status-pages?limit=2');
      expect(first.body).toEqual({ entries: [expect.any(Object), expect.any(Object)], length: 2, nextId: more[1].id });
      expect(first.body.entries[0]).toEqual({
        id: page.id,
        name: 'Shop status',
        url: page.url,
        customDomain: null,
        isPrivate: false,
        defaultTheme: 'AUTO',
        cards: [{ id: null, name: 'Public', services: [{ ...api, accountId }, { ...web, accountId }].map(({ created_at: _at, ...service }) => service) }],
        logo: null,
        redirectTo: null,
        favicon: null,
        created_at: page.created_at,
        updated_at: null,
      });
      const rest = await cli('GET', `/v1/status-pages?limit=2&nextId=${first.body.nextId}`);
      expect(rest.body).toEqual({ entries: [expect.objectContaining({ id: more[1].id, cards: [] })], length: 1, nextId: null });
      expect((await cli('GET', `/v1/status-pages?limit=2&nextId=${randomUUID()}`)).body).toEqual({ entries: [], length: 0, nextId: null });
      expect((await cli('GET', `/v1/status-pages/${page.id}`)).body).toEqual(first.body.entries[0]);

      expect((await call('GET', '/v1/status-pages?limit=2')).body).toEqual([page, more[0]]);
      expect((await call('GET', `/v1/status-pages/${page.id}`)).body).toEqual(page);
    });

    it('opens an incident from services as the CLI names them, changes its severity and lists it newest update first', async () => {
      const { accountId, call, cli } = await freshAccount();
      const { api, web } = await pageWithServices(call);
      const opened = await cli('POST', '/v1/status-pages/incidents', {
        name: 'Checkout errors',
        severity: 'MINOR',
        services: [{ id: api.id, name: api.name, accountId }],
        incidentUpdates: [{ description: 'We are investigating this incident.', status: 'INVESTIGATING', notifySubscribers: false }],
      });
      expect(opened.status, JSON.stringify(opened.body)).toBe(201);
      expect(opened.body).toMatchObject({
        name: 'Checkout errors',
        severity: 'MINOR',
        lastUpdateStatus: 'INVESTIGATING',
        services: [{ id: api.id, name: api.name, accountId }],
        incidentUpdates: [{ description: 'We are investigating this incident.', status: 'INVESTIGATING' }],
      });
      const id = opened.body.id as string;

      const changed = await cli('PATCH', `/v1/status-pages/incidents/${id}`, { severity: 'CRITICAL' });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ id, severity: 'CRITICAL', updated_at: expect.any(String) });
      expect((await cli('POST', `/v1/status-pages/incidents/${id}/incident-updates`, { description: 'Found it', status: 'IDENTIFIED' })).status).toBe(201);

      const read = await cli('GET', `/v1/status-pages/incidents/${id}`);
      expect(read.body.incidentUpdates.map((update: { status: string }) => update.status)).toEqual(['IDENTIFIED', 'INVESTIGATING']);
      expect((await call('GET', `/v1/status-pages/incidents/${id}`)).body.incidentUpdates.map((update: { status: string }) => update.status)).toEqual([
        'INVESTIGATING',
        'IDENTIFIED',
      ]);

      const second = await call('POST', '/v1/status-pages/incidents', {
        name: 'Slow pages',
        services: [web.id],
        incidentUpdates: [{ description: 'Looking' }],
      });
      expect(second.body.services).toEqual([{ id: web.id, name: web.name }]);
      const page = await cli('GET', '/v1/status-pages/incidents?limit=1');
      expect(page.body).toMatchObject({ entries: [{ id: second.body.id }], length: 1, nextId: id });
      expect((await cli('GET', `/v1/status-pages/incidents?limit=1&nextId=${id}`)).body).toMatchObject({ entries: [{ id }], nextId: null });
      expect((await call('GET', '/v1/status-pages/incidents')).body.map((incident: { id: string }) => incident.id)).toEqual([second.body.id, id]);

      expectErrorB(await call('PATCH', `/v1/status-pages/incidents/${id}`, {}), ['(root)']);
      expectErrorB(await call('PATCH', `/v1/status-pages/incidents/${randomUUID()}`, { severity: 'MAJOR' }), ['incidentId'], 404);
      expectErrorB(
        await call('POST', '/v1/status-pages/incidents', {
          name: 'Twice',
          services: [api.id, { id: api.id }],
          incidentUpdates: [{ description: 'x' }],
        }),
        ['services'],
      );
    });
  });

  describe('root cause analyses', () => {
    it('starts an analysis by error group id alone, with the user context, and answers it as the CLI reads it', async () => {
      const { accountId, apiKey, call, cli } = await freshAccount();
      const { check, run } = await checkWithAgent(call);
      await run({});
      await run(REFUSED);
      const [group] = (await call('GET', `/v1/checks/${check.id}/error-groups`)).body;

      const started = await cli('POST', `/v1/root-cause-analyses/error-groups/${group.id}`, { userContext: 'We moved the API last night' });
      expect(started.status).toBe(202);
      expect(started.body).toEqual({ id: expect.any(String), status: 'PENDING' });
      const analysis = await eventually(async () => {
        const answer = await cli('GET', `/v1/root-cause-analyses/${started.body.id}`);
        return answer.status === 200 ? answer.body : undefined;
      }, 10_000, 'the analysis written');
      expect(analysis).toEqual({
        id: started.body.id,
        errorGroupId: group.id,
        checkId: check.id,
        analysis: {
          classification: 'CONNECTION',
          rootCause: expect.stringContaining('not listening'),
          userImpact: 'The host answered, but nothing accepted connections on the port.',
          codeFix: 'Check that the service runs and listens on the port. Check recent deployments and firewall changes on the target.',
          evidence: expect.arrayContaining([{ artifacts: [], description: expect.stringContaining('1 failed result with this error') }]),
          referenceLinks: null,
        },
        provider: 'outpost-builtin',
        model: 'outpost-rules-1',
        durationMs: expect.any(Number),
        userContext: [{ text: 'We moved the API last night', type: 'USER' }],
        created_at: expect.any(String),
        completed_at: expect.any(String),
      });

      const own = await call('GET', `/v1/root-cause-analyses/${started.body.id}`);
      expect(own.body).toMatchObject({ status: 'COMPLETED', subject: 'CHECK_ERROR_GROUP', analysis: { category: 'CONNECTION' } });
      expect(own.body).not.toHaveProperty('userContext');

      // Without a body, as the CLI sends it when told no context: an empty form.
      const form = (text: string) =>
        sendText(service, 'POST', `/v1/root-cause-analyses/error-groups/${group.id}`, text, {
          authorization: `Bearer ${apiKey}`,
          'x-checkly-account': accountId,
          'content-type': 'application/x-www-form-urlencoded',
        });
      expect((await form('')).status).toBe(202);
      expect((await form('userContext=x')).status).toBe(415);
      expect((await cli('POST', `/v1/root-cause-analyses/error-groups/${group.id}`)).status).toBe(202);
      const unknown = await cli('POST', `/v1/root-cause-analyses/error-groups/${'0'.repeat(24)}`);
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ statusCode: 404, message: 'Error group not found' });
    });
  });
});
