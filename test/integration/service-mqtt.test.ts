/**
 * The service's MQTT endpoint, as the public `checkly` CLI connects to it:
 * MQTT over WebSocket at /mqtt, the account id as username and an API key
 * as password. Tried with the same client library the CLI uses.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt';
import { WebSocket } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureAccount, ensureApiKey } from '../../src/service/store/accounts.js';
import { startTestService, type TestService } from '../support/service.js';

/** What a refused subscription is granted (MQTT 3.1.1 SUBACK failure). */
const REFUSED_QOS = 128;

describe('the MQTT endpoint', () => {
  let service: TestService;
  const otherAccount = randomUUID();
  const otherKey = `test_${randomUUID()}`;
  const clients: MqttClient[] = [];

  const url = () => `${service.url.replace(/^http/, 'ws')}/mqtt?authenticationScheme=userApiKey`;
  const connect = async (username: string, password: string, options: IClientOptions = {}) => {
    const client = await connectAsync(url(), { username, password, reconnectPeriod: 0, connectTimeout: 5000, ...options });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    service = await startTestService('pglite');
    await ensureAccount(service.service.db, otherAccount, 'Other account');
    await ensureApiKey(service.service.db, otherAccount, otherKey);
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.endAsync(true)));
  });

  afterAll(async () => {
    await service?.close();
  });

  it('lets an account in with its API key and its own topics only', async () => {
    const client = await connect(service.accountId, service.apiKey);
    const own = await client.subscribeAsync(`account/${service.accountId}/ad-hoc-check-results/${randomUUID()}/+/+/+`);
    expect(own.map((grant) => grant.qos)).toEqual([0]);

    // mqtt.js rejects a subscription the broker granted with the failure code.
    for (const topic of [`account/${otherAccount}/ad-hoc-check-results/#`, '#', 'account/+/#', 'account']) {
      await expect(client.subscribeAsync(topic), topic).rejects.toMatchObject({ packet: { granted: [REFUSED_QOS] } });
    }
    // Refusals keep the connection: the client goes on with its own topics.
    expect(client.connected).toBe(true);
    expect((await client.subscribeAsync(`account/${service.accountId}/#`)).map((grant) => grant.qos)).toEqual([0]);
  });

  it('refuses an unknown key, another account\'s key and a username that is not an account id', async () => {
    await expect(connect(service.accountId, 'test_not-a-key')).rejects.toThrow(/Bad username or password/i);
    await expect(connect(service.accountId, otherKey)).rejects.toThrow(/Bad username or password/i);
    await expect(connect('someone', service.apiKey)).rejects.toThrow(/Bad username or password/i);
    await expect(connect(service.accountId, '')).rejects.toThrow();
  });

  it('delivers nothing a client publishes, even on its own topics', async () => {
    const topic = `account/${service.accountId}/ad-hoc-check-results/${randomUUID()}/a/b/result`;
    const listener = await connect(service.accountId, service.apiKey);
    await listener.subscribeAsync(topic);
    const received: string[] = [];
    listener.on('message', (_topic, payload) => received.push(payload.toString()));

    const talker = await connect(service.accountId, service.apiKey);
    talker.on('error', () => undefined);
    await talker.publishAsync(topic, JSON.stringify({ result: { hasFailures: false } })).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(received).toEqual([]);
  });

  it('answers a WebSocket upgrade to another path with 404', async () => {
    const socket = new WebSocket(`${service.url.replace(/^http/, 'ws')}/not-mqtt`, 'mqtt');
    const [, response] = (await once(socket, 'unexpected-response')) as [unknown, IncomingMessage];
    expect(response.statusCode).toBe(404);
    response.resume();
  });
});
