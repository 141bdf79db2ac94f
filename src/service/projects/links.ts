import { refOf, type Resource } from './payload.js';

/** What a link construct points a check or group at, by the logical ids the payload uses. */
export interface Links {
  /** alert-channel logical ids each check or group subscribes to, with whether the subscription is on. */
  subscriptions(type: 'check' | 'check-group', logicalId: string): { channel: string; activated: boolean }[];
  /** private-location logical ids each check or group is assigned to. */
  privateLocations(type: 'check' | 'check-group', logicalId: string): string[];
}

const key = (type: string, logicalId: string) => `${type}\u0000${logicalId}`;

/**
 * The CLI sends subscriptions and private location assignments as resources
 * of their own; Outpost keeps them on the check or group, so they are
 * gathered per owner before the owner is written.
 */
export function collectLinks(resources: readonly Resource[]): Links {
  const subscriptions = new Map<string, { channel: string; activated: boolean }[]>();
  const locations = new Map<string, string[]>();
  const push = <T>(map: Map<string, T[]>, owner: string, value: T) => map.set(owner, [...(map.get(owner) ?? []), value]);
  for (const resource of resources) {
    const payload = (resource.payload ?? {}) as Record<string, unknown>;
    const check = refOf(payload.checkId);
    const group = refOf(payload.groupId);
    const owner = check !== undefined ? key('check', check) : group !== undefined ? key('check-group', group) : undefined;
    if (owner === undefined) continue;
    if (resource.type === 'alert-channel-subscription') {
      const channel = refOf(payload.alertChannelId);
      if (channel !== undefined) push(subscriptions, owner, { channel, activated: payload.activated !== false });
    } else if (resource.type === 'private-location-check-assignment' || resource.type === 'private-location-group-assignment') {
      const location = refOf(payload.privateLocationId);
      if (location !== undefined) push(locations, owner, location);
    }
  }
  return {
    subscriptions: (type, logicalId) => subscriptions.get(key(type, logicalId)) ?? [],
    privateLocations: (type, logicalId) => locations.get(key(type, logicalId)) ?? [],
  };
}
