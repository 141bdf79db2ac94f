import type { ChannelRecord } from '../store/alert-channels.js';

export interface ChannelSubscription {
  alertChannelId: number;
  activated: boolean;
}

/**
 * autoAssignAlerts: a new check or group also subscribes to every channel
 * marked autoSubscribe that it does not name itself.
 */
export function withAutoSubscribed(
  own: readonly ChannelSubscription[],
  channels: ReadonlyMap<number, ChannelRecord>,
): ChannelSubscription[] {
  const named = new Set(own.map((subscription) => subscription.alertChannelId));
  const auto = [...channels.values()]
    .filter((channel) => channel.autoSubscribe && !named.has(channel.id))
    .map((channel) => ({ alertChannelId: channel.id, activated: true }));
  return [...own, ...auto];
}

/** Subscriptions naming channels that are not the account's, by field. */
export function unknownChannelProblems(
  subscriptions: readonly ChannelSubscription[],
  channels: ReadonlyMap<number, ChannelRecord>,
): Record<string, string> {
  const problems: Record<string, string> = {};
  subscriptions.forEach((subscription, index) => {
    if (!channels.has(subscription.alertChannelId)) {
      problems[`alertChannelSubscriptions.${index}.alertChannelId`] = `unknown alert channel: ${subscription.alertChannelId}`;
    }
  });
  return problems;
}
