import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { checklyCli, type CheckCli } from '../support/checkly-cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { LOOPBACK_WEBHOOKS, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** A loopback port nothing listens on: a connection to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The public `checkly` CLI's alert-channels, status-pages, incidents and rca
 * commands against a real service, with a real agent whose check really fails:
 * its alert really goes to a webhook, and its failure is what is analysed.
 */
describe('the public checkly CLI: alert channels, status pages, incidents and root cause analyses', () => {
  let service: TestService;
  let agent: TestAgent;
  let receiver: WebhookReceiver;
  let home: string;
  let ok: CheckCli['ok'];
  let ids: { channel: number; page: string; service: string; check: string };

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    service = await startTestService('pglite', { tickMs: 100, env: { ...LOOPBACK_WEBHOOKS } });
    const location = await service.privateLocation();
    agent = await startTestAgent({ apiKey: location.rawKey, apiUrl: service.url });
    home = await mkdtemp(join(tmpdir(), 'outpost-checkly-ops-'));
    const work = join(home, 'project');
    await mkdir(work);
    ok = checklyCli(() => service, home, work).ok;

    const shopApi = (await service.api('POST', '/v1/status-pages/services', { name: 'Shop API' })).body;
    const page = (
      await service.api('POST', '/v1/status-pages', { name: 'Shop status', url: 'shop-status', cards: [{ name: 'Public', services: [shopApi.id] }] })
    ).body;
    const channel = (
      await service.api('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'On call hook', url: `${receiver.base}/on-call` } })
    ).body;
    const check = await service.api('POST', '/v1/checks/url', {
      name: 'Shop API health',
      activated: false,
      privateLocations: [location.slugName],
      request: { url: `http://127.0.0.1:${await closedPort()}/health` },
      alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
      // The status page's service follows the check: its failure opens an incident there.
      triggerIncident: { serviceId: shopApi.id, name: 'Shop API is down' },
    });
    expect(check.status, JSON.stringify(check.body)).toBe(201);
    ids = { channel: channel.id, page: page.id, service: shopApi.id, check: check.body.id };

    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');
    const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [ids.check] } });
    const sessionId = triggered.body.sessions[0].checkSessionId;
    await eventually(async () => {
      const session = await service.api('GET', `/v1/check-sessions/${sessionId}`);
      return session.body.status === 'FAILED' ? true : undefined;
    }, 30_000, 'the check run failed');
    await eventually(() => (receiver.at('/on-call').length > 0 ? true : undefined), 10_000, 'the alert delivered');
  }, 90_000);

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await receiver?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('alert-channels list, get and logs show the channel, its subscriber and the real delivery', async () => {
    const [list, detail, logs, failed, json] = await Promise.all([
      ok(['alert-channels', 'list']),
      ok(['alert-channels', 'get', String(ids.channel)]),
      ok(['alert-channels', 'logs', String(ids.channel)]),
      ok(['alert-channels', 'logs', String(ids.channel), '--status', 'failed']),
      ok(['alert-channels', 'logs', String(ids.channel), '--output', 'json']),
    ]);
    expect(list).toMatch(/webhook\s+On call hook\s+On call hook\s+1\s+/);
    expect(list).toContain('Showing 1-1 of 1 alert channels (page 1/1)');

    expect(detail).toMatch(/Type:\s+webhook/);
    expect(detail).toMatch(/Enabled events:\s+failure, recovery/);
    expect(detail).toMatch(/Subscriptions:\s+1/);
    expect(detail).toMatch(new RegExp(`check\\s+Shop API health\\s+${ids.check}`));

    expect(logs).toMatch(/success\s+webhook\s+Shop API health\s+-\s+ALERT_FAILURE: delivered after 1 attempt/);
    expect(logs).toContain('Showing 1 of 1 logs (page 1/1)');
    expect(failed.trim()).toBe('No alert channel logs found.');
    const parsed = JSON.parse(json) as { data: { checkId: string; status: string }[]; pagination: { total: number } };
    expect(parsed.pagination.total).toBe(1);
    expect(parsed.data[0]).toMatchObject({ checkId: ids.check, status: 'SUCCESS', type: 'WEBHOOK' });
  }, 60_000);

  it('status-pages list and get show the page, its card and its service', async () => {
    const [list, compact, detail] = await Promise.all([
      ok(['status-pages', 'list']),
      ok(['status-pages', 'list', '--compact']),
      ok(['status-pages', 'get', ids.page]),
    ]);
    expect(list).toMatch(new RegExp(`Shop status\\s+shop-status\\s+Public\\s+Shop API\\s+${ids.page}`));
    expect(list).toContain('1 status page');
    expect(compact).toMatch(new RegExp(`Shop status\\s+shop-status\\s+-\\s+1\\s+${ids.page}`));
    expect(detail).toMatch(/Private:\s+no/);
    expect(detail).toMatch(/Theme:\s+AUTO/);
    expect(detail).toMatch(new RegExp(`Public\\s+Shop API\\s+${ids.service}`));
  }, 60_000);

  it('incidents create, list, update and resolve one on the page; the check opened one of its own', async () => {
    const created = await ok([
      'incidents', 'create', '--status-page-id', ids.page, '--title', 'Checkout errors', '--severity', 'medium',
      '--message', 'Payments fail for some customers', '--no-notify-subscribers', '--force',
    ]);
    expect(created).toMatch(/Severity:\s+medium/);
    expect(created).toMatch(/Status:\s+investigating/);
    expect(created).toMatch(new RegExp(`Shop API\\s+${ids.service}`));
    expect(created).toContain('Message: Payments fail for some customers');
    const id = /checkly incidents update ([0-9a-f-]{36})/.exec(created)?.[1];
    expect(id, created).toBeDefined();

    const open = await ok(['incidents', 'list', '--status-page-id', ids.page]);
    expect(open).toMatch(new RegExp(`Checkout errors\\s+medium\\s+investigating\\s+1\\s+.*${id}`));
    expect(open).toMatch(/Shop API is down\s+major\s+investigating\s+1/);
    expect(open).toContain(`Showing 2 incidents (status=open, status-page-id=${ids.page})`);

    const updated = await ok([
      'incidents', 'update', id!, '--message', 'A bad deploy; rolling back', '--status', 'identified', '--severity', 'major', '--force',
    ]);
    expect(updated).toContain('Incident Update Posted');
    expect(updated).toMatch(/Status:\s+identified/);
    expect(updated).toMatch(/Message:\s+A bad deploy; rolling back/);
    expect(updated).toMatch(/Severity:\s+major/);

    const resolved = await ok(['incidents', 'resolve', id!, '--force']);
    expect(resolved).toContain('Incident Resolved');
    expect(resolved).toMatch(/Status:\s+resolved/);
    expect(resolved).toMatch(/Message:\s+Incident resolved\./);

    const [stillOpen, closed, json] = await Promise.all([
      ok(['incidents', 'list']),
      ok(['incidents', 'list', '--status', 'resolved']),
      ok(['incidents', 'list', '--status', 'all', '--output', 'json']),
    ]);
    expect(stillOpen).not.toContain('Checkout errors');
    expect(stillOpen).toContain('Shop API is down');
    expect(closed).toMatch(new RegExp(`Checkout errors\\s+major\\s+resolved`));
    const all = JSON.parse(json) as { data: { id: string; incidentUpdates: { status: string }[] }[]; count: number };
    expect(all.count).toBe(2);
    expect(all.data.find((incident) => incident.id === id)?.incidentUpdates.map((update) => update.status)).toEqual([
      'RESOLVED',
      'IDENTIFIED',
      'INVESTIGATING',
    ]);
  }, 90_000);

  it('rca run analyses the failed check\'s error group and rca get reads the analysis', async () => {
    const groups = await service.api('GET', `/v1/checks/${ids.check}/error-groups`);
    expect(groups.body).toHaveLength(1);
    const groupId = groups.body[0].id as string;

    const started = await ok(['rca', 'run', '--error-group', groupId, '--user-context', 'The API moved hosts last night']);
    expect(started).toContain('Root cause analysis triggered.');
    expect(started).toMatch(new RegExp(`Error group:\\s+${groupId}`));
    expect(started).toContain(`checkly checks get ${ids.check} --error-group ${groupId}`);
    const rcaId = /RCA ID:\s+([0-9a-f-]{36})/.exec(started)?.[1];
    expect(rcaId, started).toBeDefined();

    const watched = await ok(['rca', 'get', rcaId!, '--watch'], { timeoutMs: 30_000 });
    expect(watched).toContain('ROOT CAUSE ANALYSIS');
    expect(watched).toMatch(/Classification:\s+CONNECTION/);
    expect(watched).toMatch(/Root cause:\s+The service is down or not listening on that port/);
    expect(watched).toMatch(/User impact:\s+The host answered, but nothing accepted connections on the port\./);
    expect(watched).toContain('EVIDENCE');
    expect(watched).toMatch(/Code fix:\s+Check that the service runs and listens on the port\. Check recent deployments/);
    expect(watched).toContain('1 failed result with this error');
    // A refused connection takes no time in any phase: no "slowest phase" of 0 ms.
    expect(watched).not.toContain('Slowest phase');

    const json = JSON.parse(await ok(['rca', 'get', rcaId!, '--output', 'json'])) as Record<string, any>;
    expect(json).toMatchObject({
      id: rcaId,
      errorGroupId: groupId,
      checkId: ids.check,
      provider: 'outpost-builtin',
      userContext: [{ text: 'The API moved hosts last night', type: 'USER' }],
      analysis: { classification: 'CONNECTION', referenceLinks: null },
    });

    const watchedRun = await ok(['rca', 'run', '-e', groupId, '--watch'], { timeoutMs: 30_000 });
    expect(watchedRun).toMatch(/Classification:\s+CONNECTION/);
  }, 90_000);
});
