import type { ChannelSubscription } from '../alerts/subscriptions.js';

/**
 * A check group construct's payload as the body of POST /v1/check-groups,
 * its links resolved. `v` (the CLI's group version) means nothing here. The
 * CLI leaves `activated` out of a group that does not set it, for the hosted
 * API's default (on); Outpost's route requires it, so that default is sent.
 */
export function groupBody(
  payload: Record<string, unknown>,
  links: { privateLocations: string[]; alertChannelSubscriptions: ChannelSubscription[] },
): Record<string, unknown> {
  const body: Record<string, unknown> = structuredClone(payload);
  delete body.v;
  body.activated ??= true;
  body.privateLocations = links.privateLocations;
  body.alertChannelSubscriptions = links.alertChannelSubscriptions;
  return body;
}
