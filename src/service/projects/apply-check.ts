import { nullsAsDefaults } from '../check-types/common.js';
import type { CheckDefinition } from '../check-types/index.js';
import { invalidBodyMessage } from '../http-errors.js';
import { judge } from '../routes/checks.js';
import { createCheck, deleteCheck, getCheck, updateCheck } from '../store/checks.js';
import { checkBody } from './check-body.js';
import { ConstructInvalidError } from './construct-invalid-error.js';
import type { DeployScope } from './deploy.js';
import { labelOf, refOf, type Resource } from './payload.js';
import { checkTypeOf, deployableCheckType } from './support.js';
import { bodyProblems } from './validators.js';

/**
 * A check construct becomes the check POST /v1/checks/{type} would create,
 * through the same schema, defaults and account rules; deployed again, the
 * same check is replaced by the new definition in place (a changed type
 * makes a new check).
 */
export async function applyCheck(scope: DeployScope, resource: Resource): Promise<{ physicalId: string; created: boolean }> {
  const { tx, accountId } = scope;
  const label = labelOf(resource);
  const type = deployableCheckType(checkTypeOf(resource))!;
  const payload = (resource.payload ?? {}) as Record<string, unknown>;
  const groupRef = refOf(payload.groupId);
  const serviceRef = refOf((payload.triggerIncident as { serviceId?: unknown } | null | undefined)?.serviceId);
  const mapped = checkBody(
    type,
    payload,
    {
      groupId: groupRef === undefined ? null : Number(scope.resolve(resource, 'check-group', groupRef)),
      privateLocations: await scope.locationSlugs(resource, 'check'),
      alertChannelSubscriptions: scope.subscriptions(resource, 'check'),
      serviceId: serviceRef === undefined ? undefined : String(scope.resolve(resource, 'status-page-service', serviceRef)),
    },
    scope.payload.sharedFiles ?? [],
  );
  if ('problem' in mapped) throw new ConstructInvalidError(label, mapped.problem);
  const problems = bodyProblems(type.createSchema, mapped.body);
  if (problems) throw new ConstructInvalidError(label, invalidBodyMessage(problems), problems);
  const definition = nullsAsDefaults(type.createSchema, { ...mapped.body, checkType: type.checkType }) as unknown as CheckDefinition;
  const verdict = await judge(scope.ctx, accountId, type, definition);
  if (!('definition' in verdict)) throw new ConstructInvalidError(label, verdict.message, verdict.attributes);

  const previousId = scope.previous('check', resource.logicalId);
  const stored = previousId === undefined ? undefined : await getCheck(tx, accountId, previousId);
  if (stored && stored.check_type === type.checkType) {
    const row = await updateCheck(tx, accountId, stored.id, verdict.definition);
    return { physicalId: row!.id, created: false };
  }
  if (stored) await deleteCheck(tx, accountId, stored.id);
  const row = await createCheck(tx, accountId, type.checkType, verdict.definition);
  return { physicalId: row.id, created: true };
}
