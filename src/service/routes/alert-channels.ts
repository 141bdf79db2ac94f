import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { CHANNEL_TYPES, parseChannelConfig } from '../alerts/channel-config.js';
import { ChecklyChannelSchema, checklyChannel, contentRange } from '../alerts/checkly-dialect.js';
import { speaksChecklyDialect } from '../auth.js';
import { AlertSettingsSchema } from '../check-types/alert-fields.js';
import type { ServiceContext } from '../context.js';
import { sendError, sendInvalidBody } from '../http-errors.js';
import { DateTimeSchema, ErrorA, ErrorB } from '../schemas/common.js';
import {
  accountAlertSettings,
  channelSubscribers,
  countChannels,
  createChannel,
  deleteChannel,
  getChannel,
  listChannels,
  listDeliveries,
  saveAccountAlertSettings,
  updateChannel,
  type AlertSettings,
  type ChannelInput,
  type ChannelRecord,
} from '../store/alert-channels.js';
import { alertNotificationRoutes } from './alert-notifications.js';

const tags = ['Alert channels'];
const ChannelId = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });

const ChannelBody = Type.Object({
  type: Type.Enum(CHANNEL_TYPES),
  config: Type.Record(Type.String(), Type.Unknown(), { description: 'By type: see docs/api.md' }),
  sendFailure: Type.Optional(Type.Boolean({ default: true })),
  sendRecovery: Type.Optional(Type.Boolean({ default: true })),
  sendDegraded: Type.Optional(Type.Boolean({ default: false })),
  autoSubscribe: Type.Optional(
    Type.Boolean({ default: false, description: 'Checks created with autoAssignAlerts (the default) subscribe to it' }),
  ),
});
const ChannelRecord = Type.Object({
  id: Type.Integer(),
  type: Type.String(),
  config: Type.Record(Type.String(), Type.Unknown()),
  sendFailure: Type.Boolean(),
  sendRecovery: Type.Boolean(),
  sendDegraded: Type.Boolean(),
  autoSubscribe: Type.Boolean(),
  created_at: DateTimeSchema,
  updated_at: Type.Union([DateTimeSchema, Type.Null()]),
}, { title: 'AlertChannel' });
const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'A page of this many; all of them without it' })),
  page: Type.Optional(Type.Integer({ minimum: 1, description: 'With limit: which page, from 1' })),
});
const NewChannel = Type.Object({
  ...ChannelRecord.properties,
  signingSecret: Type.String({ description: 'Signs webhook bodies (x-outpost-signature); shown in this answer only' }),
});
const Delivery = Type.Object({
  id: Type.String(),
  channelId: Type.Union([Type.Integer(), Type.Null()]),
  channelType: Type.String(),
  checkId: Type.Union([Type.String(), Type.Null()]),
  checkSessionId: Type.Union([Type.String(), Type.Null()]),
  event: Type.String(),
  state: Type.String(),
  attempts: Type.Integer(),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description: "Why the last attempt failed, in the service's words (the receiver's answer is only in the service's log)",
  }),
  created_at: DateTimeSchema,
  delivered_at: Type.Union([DateTimeSchema, Type.Null()]),
}, { title: 'AlertDelivery' });
const SettingsRecord = Type.Object({
  escalationType: Type.String(),
  runBasedEscalation: Type.Object({ failedRunThreshold: Type.Number() }),
  reminders: Type.Object({ amount: Type.Number(), interval: Type.Number() }),
  parallelRunFailureThreshold: Type.Object({ enabled: Type.Boolean(), percentage: Type.Number() }),
});

export const alertChannelRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    await app.register(alertNotificationRoutes(ctx));

    const input = (body: {
      type: ChannelInput['type'];
      config: Record<string, unknown>;
      sendFailure?: boolean;
      sendRecovery?: boolean;
      sendDegraded?: boolean;
      autoSubscribe?: boolean;
    }): { input: ChannelInput } | { problems: Record<string, string> } => {
      const parsed = parseChannelConfig(body.type, body.config, ctx.webhookPolicy);
      if ('problems' in parsed) return parsed;
      return {
        input: {
          type: body.type,
          config: parsed.config,
          sendFailure: body.sendFailure ?? true,
          sendRecovery: body.sendRecovery ?? true,
          sendDegraded: body.sendDegraded ?? false,
          autoSubscribe: body.autoSubscribe ?? false,
        },
      };
    };

    app.post(
      '/v1/alert-channels',
      { schema: { tags, summary: 'Create an alert channel', body: ChannelBody, response: { 201: NewChannel, 400: ErrorB } } },
      async (request, reply) => {
        const parsed = input(request.body);
        if ('problems' in parsed) return sendInvalidBody(reply, parsed.problems);
        return reply.code(201).send(await createChannel(ctx.db, request.accountId, parsed.input));
      },
    );

    /** What the caller reads: a caller speaking the Checkly dialect also learns who subscribes to each channel. */
    const shown = async (request: FastifyRequest, channels: ChannelRecord[]) => {
      if (!speaksChecklyDialect(request)) return channels;
      const subscribers = await channelSubscribers(ctx.db, request.accountId, channels.map((channel) => channel.id));
      return channels.map((channel) => checklyChannel(channel, subscribers));
    };

    app.get(
      '/v1/alert-channels',
      {
        schema: {
          tags,
          summary: 'List alert channels',
          description:
            'Oldest first; content-range tells how many there are. A caller that names its account in x-checkly-account also gets each channel\'s subscriptions.',
          querystring: ListQuery,
          response: { 200: Type.Union([Type.Array(ChecklyChannelSchema), Type.Array(ChannelRecord)]) },
        },
      },
      async (request, reply) => {
        const { limit, page = 1 } = request.query;
        const offset = limit === undefined ? 0 : (page - 1) * limit;
        const channels = await listChannels(ctx.db, request.accountId, limit === undefined ? undefined : { limit, offset });
        const total = limit === undefined ? channels.length : await countChannels(ctx.db, request.accountId);
        void reply.header('content-range', contentRange(offset, channels.length, total));
        return shown(request, channels);
      },
    );

    app.get(
      '/v1/alert-channels/:id',
      {
        schema: {
          tags,
          summary: 'Retrieve an alert channel',
          description: "A caller that names its account in x-checkly-account also gets the channel's subscriptions.",
          params: ChannelId,
          response: { 200: Type.Union([ChecklyChannelSchema, ChannelRecord]), 404: ErrorA },
        },
      },
      async (request, reply) => {
        const channel = await getChannel(ctx.db, request.accountId, request.params.id);
        if (!channel) return sendError(reply, 404, 'Alert channel not found');
        const [answer] = await shown(request, [channel]);
        return answer;
      },
    );

    app.put(
      '/v1/alert-channels/:id',
      {
        schema: {
          tags,
          summary: 'Replace an alert channel',
          params: ChannelId,
          body: ChannelBody,
          response: { 200: ChannelRecord, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const parsed = input(request.body);
        if ('problems' in parsed) return sendInvalidBody(reply, parsed.problems);
        return (
          (await updateChannel(ctx.db, request.accountId, request.params.id, parsed.input)) ??
          sendError(reply, 404, 'Alert channel not found')
        );
      },
    );

    app.delete(
      '/v1/alert-channels/:id',
      {
        schema: {
          tags,
          summary: 'Delete an alert channel',
          description: 'Checks subscribed to it stop sending there; their subscriptions to it are ignored.',
          params: ChannelId,
          response: { 204: Type.Null(), 400: ErrorB, 404: ErrorB },
        },
      },
      async (request, reply) => {
        if (!(await deleteChannel(ctx.db, request.accountId, request.params.id))) {
          return sendError(reply, 404, 'Alert channel not found', { id: 'not found' });
        }
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/v1/alert-channels/:id/deliveries',
      {
        schema: {
          tags,
          summary: "An alert channel's latest deliveries",
          description: 'Newest first, at most 50: what was sent, how often it was tried, and whether it was delivered.',
          params: ChannelId,
          response: { 200: Type.Array(Delivery), 404: ErrorA },
        },
      },
      async (request, reply) => {
        const channel = await getChannel(ctx.db, request.accountId, request.params.id);
        return channel ? listDeliveries(ctx.db, request.accountId, channel.id) : sendError(reply, 404, 'Alert channel not found');
      },
    );

    app.get(
      '/v1/accounts/me/alert-settings',
      {
        schema: {
          tags,
          summary: "The account's alert settings",
          description: 'What checks with useGlobalAlertSettings (the default) alert by.',
          response: { 200: SettingsRecord },
        },
      },
      async (request) => accountAlertSettings(ctx.db, request.accountId),
    );

    app.put(
      '/v1/accounts/me/alert-settings',
      {
        schema: {
          tags,
          summary: "Change the account's alert settings",
          description: 'Fields left out keep their value.',
          body: AlertSettingsSchema,
          response: { 200: SettingsRecord, 400: ErrorB },
        },
      },
      async (request) => {
        const stored = await accountAlertSettings(ctx.db, request.accountId);
        const body = request.body;
        const settings: AlertSettings = {
          escalationType: body.escalationType ?? stored.escalationType,
          runBasedEscalation: { ...stored.runBasedEscalation, ...body.runBasedEscalation },
          reminders: { ...stored.reminders, ...body.reminders },
          parallelRunFailureThreshold: { ...stored.parallelRunFailureThreshold, ...body.parallelRunFailureThreshold },
        };
        await saveAccountAlertSettings(ctx.db, request.accountId, settings);
        return settings;
      },
    );
  };

