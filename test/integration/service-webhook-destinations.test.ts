import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Result } from '../../src/protocol/agent-api.js';
import { createChannel } from '../../src/service/store/alert-channels.js';
import { eventually, expectErrorB, ManualAgent, urlCheckBody } from '../support/agent-protocol.js';
import { startTestService, type TestService } from '../support/service.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Webhook destinations as a real service enforces them: loopback, link-local
 * and metadata addresses refused when a channel is saved, and again on the
 * address a delivery really connects to.
 */

const FAIL: Partial<Result> = { hasErrors: true, hasFailures: true, statusCode: null, error: { code: 'CONNECTION_FAILED', message: 'refused' } };
const DENIED = "the destination is denied by the service's webhook destination policy";

/** A failing run of a new check subscribed to `channelId`: what makes the service send an alert. */
async function alertThrough(service: TestService, channelId: number): Promise<void> {
  const location = await service.privateLocation();
  const agent = await new ManualAgent(service, location.rawKey).connect();
  const check = await service.api(
    'POST',
    '/v1/checks/url',
    urlCheckBody([location.slugName], { activated: false, alertChannelSubscriptions: [{ alertChannelId: channelId, activated: true }] }),
  );
  expect(check.status, JSON.stringify(check.body)).toBe(201);
  await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.body.id] }, runSource: 'TRIGGER_API' });
  expect((await agent.report(await agent.claimOne(), FAIL)).status).toBe(200);
}

async function settledDelivery(service: TestService, channelId: number): Promise<Record<string, any>> {
  return eventually(async () => {
    const [latest] = (await service.api('GET', `/v1/alert-channels/${channelId}/deliveries`)).body as Record<string, any>[];
    return latest && latest.state !== 'pending' ? latest : undefined;
  }, 10_000, 'the delivery settled');
}

describe('webhook destinations, by default', () => {
  let service: TestService;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    service = await startTestService('pglite', { tickMs: 100, alertRetryBaseMs: 50 });
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
  });

  it('refuses a channel pointing at loopback, link-local or metadata addresses: 400 naming config.url', async () => {
    for (const url of [
      `${receiver.base}/hook`,
      'http://[::ffff:127.0.0.1]:8080/',
      'http://169.254.169.254/latest/meta-data/iam/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://localhost:8080/',
    ]) {
      const answer = await service.api('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'hook', url } });
      expectErrorB(answer, ['config.url']);
      expect(answer.body.attributes['config.url']).toMatch(/denied destination/);
    }
    expectErrorB(await service.api('POST', '/v1/alert-channels', { type: 'SLACK', config: { url: 'http://[fe80::1]/slack' } }), ['config.url']);
  });

  it('accepts a private address, and refuses to change it to a denied one', async () => {
    const created = await service.api('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'intranet', url: 'http://10.20.30.40/hook' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const replaced = await service.api('PUT', `/v1/alert-channels/${created.body.id}`, {
      type: 'WEBHOOK',
      config: { name: 'intranet', url: 'http://169.254.169.254/' },
    });
    expectErrorB(replaced, ['config.url']);
    expect(replaced.body.attributes['config.url']).toContain('169.254.169.254/32 (cloud metadata service)');
  });

  it('does not connect when the name resolves to loopback at delivery time, and records only that it was denied', async () => {
    // Saved past the API's check, as a channel from before the policy (or before the operator tightened it) is.
    const port = new URL(receiver.base).port;
    const path = `/resolved-${randomUUID().slice(0, 8)}`;
    const channel = await createChannel(service.service.db, service.accountId, {
      type: 'WEBHOOK',
      config: { name: 'rebound', url: `http://localhost:${port}${path}`, method: 'POST', headers: [], queryParameters: [] },
      sendFailure: true,
      sendRecovery: true,
      sendDegraded: false,
      autoSubscribe: false,
    });
    await alertThrough(service, channel.id);
    const delivery = await settledDelivery(service, channel.id);
    expect(delivery).toMatchObject({ state: 'failed', attempts: 1, lastError: DENIED });
    expect(receiver.at(path)).toEqual([]);
    expect(service.logs.some((line) => line.includes('alert delivery given up') && line.includes('resolves only to denied addresses'))).toBe(true);
  });
});

describe('webhook destinations, with loopback allowed by the operator', () => {
  let service: TestService;
  let receiver: WebhookReceiver;
  let bouncer: Server;
  const bounced: string[] = [];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // Answers every call with a redirect to the receiver: a delivery must not follow it.
    bouncer = createServer((request, response) => {
      bounced.push(request.url ?? '');
      response.writeHead(307, { location: `${receiver.base}/landed` }).end();
    });
    await new Promise<void>((resolve) => bouncer.listen(0, '127.0.0.1', resolve));
    service = await startTestService('pglite', {
      tickMs: 100,
      alertRetryBaseMs: 50,
      env: { WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.0/8,::1', WEBHOOK_DENIED_DESTINATIONS: '10.0.0.0/8' },
    });
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    bouncer?.closeAllConnections();
    await new Promise((resolve) => bouncer?.close(resolve));
  });

  it('delivers to a loopback receiver by name', async () => {
    const path = `/allowed-${randomUUID().slice(0, 8)}`;
    const port = new URL(receiver.base).port;
    const created = await service.api('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'local', url: `http://localhost:${port}${path}` },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await alertThrough(service, created.body.id);
    expect(await settledDelivery(service, created.body.id)).toMatchObject({ state: 'delivered', attempts: 1, lastError: null });
    expect(receiver.at(path)).toHaveLength(1);
  });

  it('still refuses the metadata address, and the private range the operator denied', async () => {
    const metadata = await service.api('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'm', url: 'http://169.254.169.254/' } });
    expectErrorB(metadata, ['config.url']);
    const intranet = await service.api('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'i', url: 'http://10.1.2.3/' } });
    expectErrorB(intranet, ['config.url']);
    expect(intranet.body.attributes['config.url']).toContain('10.0.0.0/8');
  });

  it('does not follow a redirect, and keeps the answer out of the record', async () => {
    const created = await service.api('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'bouncer', url: `http://127.0.0.1:${(bouncer.address() as AddressInfo).port}/bounce` },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await alertThrough(service, created.body.id);
    const delivery = await settledDelivery(service, created.body.id);
    expect(delivery).toMatchObject({ state: 'failed', attempts: 5, lastError: 'the receiver did not accept it' });
    expect(delivery).not.toHaveProperty('lastStatus');
    expect(bounced).toHaveLength(5);
    expect(receiver.at('/landed')).toEqual([]);
    expect(service.logs.some((line) => line.includes('alert delivery given up') && line.includes('"status":307'))).toBe(true);
  });
});
