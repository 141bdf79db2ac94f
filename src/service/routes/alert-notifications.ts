import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AlertNotificationSchema, alertNotification, contentRange } from '../alerts/checkly-dialect.js';
import type { ServiceContext } from '../context.js';
import { sendError } from '../http-errors.js';
import { ErrorA } from '../schemas/common.js';
import { deliveryLog, getChannel } from '../store/alert-channels.js';

const UnixSeconds = (description: string) => Type.Optional(Type.Integer({ minimum: 0, maximum: 253_402_300_799, description }));

const Query = Type.Object({
  alertChannelId: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "Only this channel's" })),
  from: UnixSeconds('Queued at or after this time (unix seconds)'),
  to: UnixSeconds('Queued at or before this time (unix seconds)'),
  hasFailures: Type.Optional(Type.Boolean({ description: 'Only those whose last attempt failed: given up on, or to be retried' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Per page; 10 unless told' })),
  page: Type.Optional(Type.Integer({ minimum: 1, description: 'From 1' })),
});

/** The alert deliveries as a notification log: what `checkly alert-channels logs` lists. */
export const alertNotificationRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/alert-notifications',
      {
        schema: {
          tags: ['Alert channels'],
          summary: 'The alert notification log',
          description:
            'Every alert delivery (webhook, Slack, SMS, e-mail), newest first, with what became of it; content-range tells how many match.',
          querystring: Query,
          response: { 200: Type.Array(AlertNotificationSchema), 404: ErrorA },
        },
      },
      async (request, reply) => {
        const { alertChannelId, from, to, hasFailures = false, limit = 10, page = 1 } = request.query;
        // A channel that is not the account's is a 404, not an empty log that reads as "nothing was sent".
        if (alertChannelId !== undefined && !(await getChannel(ctx.db, request.accountId, alertChannelId))) {
          return sendError(reply, 404, 'Alert channel not found');
        }
        const offset = (page - 1) * limit;
        const { entries, total } = await deliveryLog(ctx.db, request.accountId, {
          channelId: alertChannelId,
          from: from === undefined ? undefined : new Date(from * 1000),
          to: to === undefined ? undefined : new Date(to * 1000),
          failedOnly: hasFailures,
          limit,
          offset,
        });
        void reply.header('content-range', contentRange(offset, entries.length, total));
        return entries.map(alertNotification);
      },
    );
  };
