/**
 * Wires the MQTT broker to the service: served over WebSocket at /mqtt on
 * the service's own port (CHECKLY_MQTT_URL=ws://<service>/mqtt for the CLI),
 * and each subscription to a check run suite's topics starts streaming that
 * test run's results to it.
 */
import type { Client } from 'aedes';
import type { FastifyPluginAsync } from 'fastify';
import type { ServiceContext } from '../context.js';
import { TestSessionStreams } from '../test-sessions/result-streams.js';
import { suiteOfFilter } from '../test-sessions/topics.js';
import { createAccountBroker } from './broker.js';
import { serveMqttOverWebSocket } from './websocket.js';

export const testRunEvents =
  (ctx: ServiceContext): FastifyPluginAsync =>
  async (app) => {
    const broker = await createAccountBroker(ctx.db);
    const logger = ctx.logger.child({ component: 'mqtt' });
    const streams = new TestSessionStreams(ctx.db, ctx.events, broker.publish, logger);
    const following = new Map<Client, Map<string, { accountId: string; checkRunSuiteId: string }>>();

    const unfollowAll = (client: Client) => {
      for (const suite of following.get(client)?.values() ?? []) streams.unfollow(suite.accountId, suite.checkRunSuiteId);
      following.delete(client);
    };
    broker.broker.on('subscribe', (subscriptions, client) => {
      const accountId = broker.accountOf(client);
      if (!accountId) return;
      for (const { topic } of subscriptions) {
        const suite = suiteOfFilter(topic);
        if (!suite || suite.accountId !== accountId) continue;
        const mine = following.get(client) ?? new Map<string, { accountId: string; checkRunSuiteId: string }>();
        following.set(client, mine);
        if (mine.has(topic)) continue;
        mine.set(topic, suite);
        streams.follow(suite.accountId, suite.checkRunSuiteId);
      }
    });
    broker.broker.on('unsubscribe', (topics, client) => {
      const mine = following.get(client);
      for (const topic of topics) {
        const suite = mine?.get(topic);
        if (!suite) continue;
        mine!.delete(topic);
        streams.unfollow(suite.accountId, suite.checkRunSuiteId);
      }
    });
    broker.broker.on('clientDisconnect', unfollowAll);
    broker.broker.on('clientError', (client, error) => logger.debug({ err: error, client: client.id }, 'mqtt client error'));

    const websocket = serveMqttOverWebSocket(app.server, broker.broker);
    app.addHook('preClose', async () => {
      await websocket.close();
      await streams.close();
      await broker.close();
    });
  };
