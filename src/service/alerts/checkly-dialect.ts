import Type from 'typebox';
import type { ChannelRecord, ChannelSubscriber, DeliveryLogEntry } from '../store/alert-channels.js';

/**
 * Alert channels and their deliveries as the public `checkly` CLI reads them
 * (`checkly alert-channels list|get|logs`).
 */

const Subscription = Type.Object({
  checkId: Type.Union([Type.String(), Type.Null()]),
  checkName: Type.Optional(Type.String()),
  groupId: Type.Union([Type.Integer(), Type.Null()]),
  groupName: Type.Optional(Type.String()),
  activated: Type.Boolean(),
});

/** The channel as Outpost answers it, with the checks and groups subscribed to it. */
export const ChecklyChannelSchema = Type.Object(
  {
    id: Type.Integer(),
    type: Type.String(),
    config: Type.Record(Type.String(), Type.Unknown()),
    sendFailure: Type.Boolean(),
    sendRecovery: Type.Boolean(),
    sendDegraded: Type.Boolean(),
    autoSubscribe: Type.Boolean(),
    subscriptions: Type.Array(Subscription, { description: 'Checks and groups naming the channel in alertChannelSubscriptions' }),
    created_at: Type.String(),
    updated_at: Type.Union([Type.String(), Type.Null()]),
  },
  { description: 'Answered to a caller that names its account in x-checkly-account (the public checkly CLI)' },
);
export type ChecklyChannel = Type.Static<typeof ChecklyChannelSchema>;

export function checklyChannel(channel: ChannelRecord, subscribers: readonly ChannelSubscriber[]): ChecklyChannel {
  return {
    ...channel,
    subscriptions: subscribers
      .filter((subscriber) => subscriber.channelId === channel.id)
      .map((subscriber) =>
        subscriber.kind === 'check'
          ? { checkId: subscriber.id, checkName: subscriber.name, groupId: null, activated: subscriber.activated }
          : { checkId: null, groupId: Number(subscriber.id), groupName: subscriber.name, activated: subscriber.activated },
      ),
  };
}

const NOTIFICATION_STATUSES = ['IN_PROGRESS', 'SUCCESS', 'FAILURE'] as const;

export const AlertNotificationSchema = Type.Object({
  id: Type.String(),
  type: Type.String({ description: "The channel's type" }),
  status: Type.Enum(NOTIFICATION_STATUSES, { description: 'IN_PROGRESS while queued or being retried' }),
  event: Type.String({ description: 'ALERT_FAILURE, ALERT_RECOVERY, ALERT_DEGRADED or ALERT_REMINDER' }),
  notificationResult: Type.String({
    description: "What became of it, in words: delivered, or the service's reason; never what the receiver answered",
  }),
  timestamp: Type.String({ description: 'When the alert was queued' }),
  deliveredAt: Type.Union([Type.String(), Type.Null()]),
  attempts: Type.Integer(),
  alertChannelId: Type.Union([Type.Integer(), Type.Null()], { description: 'Null once the channel is deleted' }),
  checkId: Type.Union([Type.String(), Type.Null()]),
  checkName: Type.Union([Type.String(), Type.Null()]),
  checkType: Type.Union([Type.String(), Type.Null()]),
  checkSessionId: Type.Union([Type.String(), Type.Null()], { description: 'The run that caused it; null for a reminder' }),
  checkResultId: Type.Null({ description: 'An alert is about a run (checkSessionId), not one location result' }),
});
export type AlertNotification = Type.Static<typeof AlertNotificationSchema>;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function resultOf(entry: DeliveryLogEntry): string {
  switch (entry.state) {
    case 'delivered':
      return `${entry.event}: delivered after ${plural(entry.attempts, 'attempt')}`;
    case 'failed':
      return `${entry.event}: given up after ${plural(entry.attempts, 'attempt')}: ${entry.lastError ?? 'no reason recorded'}`;
    case 'pending':
      if (entry.attempts === 0) return `${entry.event}: queued`;
      return entry.lastError === null
        ? `${entry.event}: sending (attempt ${entry.attempts})`
        : `${entry.event}: attempt ${entry.attempts} failed: ${entry.lastError}; it will be retried`;
  }
}

export function alertNotification(entry: DeliveryLogEntry): AlertNotification {
  return {
    id: entry.id,
    type: entry.channelType,
    status: entry.state === 'delivered' ? 'SUCCESS' : entry.state === 'failed' ? 'FAILURE' : 'IN_PROGRESS',
    event: entry.event,
    notificationResult: resultOf(entry),
    timestamp: entry.created_at,
    deliveredAt: entry.delivered_at,
    attempts: entry.attempts,
    alertChannelId: entry.channelId,
    checkId: entry.checkId,
    checkName: entry.checkName,
    checkType: entry.checkType,
    checkSessionId: entry.checkSessionId,
    checkResultId: null,
  };
}

/** `content-range` the way the CLI reads a total from it: `<first>-<last>/<total>`, or `*` for an empty page. */
export function contentRange(offset: number, count: number, total: number): string {
  return count === 0 ? `*/${total}` : `${offset}-${offset + count - 1}/${total}`;
}
