import { unknownChannelProblems, type ChannelSubscription } from '../alerts/subscriptions.js';
import { GroupCreateSchema, groupProblems, type GroupDefinition } from '../check-groups/schema.js';
import { nullsAsDefaults } from '../check-types/common.js';
import { locationProblems } from '../entitlements.js';
import { invalidBodyMessage } from '../http-errors.js';
import { channelsById } from '../store/alert-channels.js';
import { createGroup, getGroup, updateGroup } from '../store/check-groups.js';
import { ConstructInvalidError } from './construct-invalid-error.js';
import type { DeployScope } from './deploy.js';
import { groupBody } from './group-body.js';
import { labelOf, type Resource } from './payload.js';
import { bodyProblems } from './validators.js';

/** A check group construct becomes the group POST /v1/check-groups would create; deployed again, it is updated in place. */
export async function applyGroup(scope: DeployScope, resource: Resource): Promise<{ physicalId: number; created: boolean }> {
  const { tx, accountId, ctx } = scope;
  const label = labelOf(resource);
  const body = groupBody((resource.payload ?? {}) as Record<string, unknown>, {
    privateLocations: await scope.locationSlugs(resource, 'check-group'),
    alertChannelSubscriptions: scope.subscriptions(resource, 'check-group'),
  });
  const invalid = bodyProblems(GroupCreateSchema, body);
  if (invalid) throw new ConstructInvalidError(label, invalidBodyMessage(invalid), invalid);
  const group = nullsAsDefaults(GroupCreateSchema, body) as unknown as GroupDefinition;
  const problems: Record<string, string> = {
    ...groupProblems(group),
    ...locationProblems(group.locations, group.privateLocations, ctx.maxLocationsPerCheck),
    ...unknownChannelProblems((group.alertChannelSubscriptions ?? []) as ChannelSubscription[], await channelsById(tx, accountId)),
  };
  if (Object.keys(problems).length > 0) throw new ConstructInvalidError(label, invalidBodyMessage(problems), problems);

  const previousId = scope.previous('check-group', resource.logicalId);
  const stored = previousId === undefined ? undefined : await getGroup(tx, accountId, Number(previousId));
  if (stored) {
    const row = await updateGroup(tx, accountId, stored.id, group);
    return { physicalId: row!.id, created: false };
  }
  return { physicalId: (await createGroup(tx, accountId, group)).id, created: true };
}
