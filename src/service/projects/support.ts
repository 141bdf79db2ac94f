import { CHANNEL_TYPES } from '../alerts/channel-config.js';
import { checkTypes, type CheckTypeDefinition } from '../check-types/index.js';
import type { Refusal } from './construct-refused-error.js';
import type { Resource } from './payload.js';

/** Check types deploy creates through the check routes' own validation. */
const DEPLOYABLE_CHECK_TYPES = new Map<string, CheckTypeDefinition>(
  checkTypes.filter((type) => type.checkType !== 'PLAYWRIGHT').map((type) => [type.checkType, type]),
);

/** Why a check type Outpost has no deploy path for is refused. */
const CHECK_REFUSALS: Record<string, string> = {
  HEARTBEAT: 'Outpost has no heartbeat monitors: nothing here receives pings',
  PLAYWRIGHT:
    'Playwright check suites are not deployed by `checkly deploy` on Outpost; create them with POST /v1/checks/playwright and a code bundle',
};

/** Member constructs Outpost keeps no record of, and what to do instead. */
const TYPE_REFUSALS: Record<string, string> = {
  'private-location':
    'deploy does not create private locations on Outpost; create it through the API and refer to it by its slug or with PrivateLocation.fromId()',
  'status-page': 'deploy does not manage status pages on Outpost; create them through /v1/status-pages',
  'status-page-service': 'deploy does not manage status page services on Outpost; create them through /v1/status-pages',
  'status-page-component': 'Outpost has no v3 status page components',
  'status-page-automation-rule': 'Outpost has no status page automation rules',
  dashboard: 'Outpost has no dashboards',
};

/** The check type definition a check construct is created with, if Outpost deploys its type. */
export function deployableCheckType(checkType: unknown): CheckTypeDefinition | undefined {
  return typeof checkType === 'string' ? DEPLOYABLE_CHECK_TYPES.get(checkType) : undefined;
}

export function checkTypeOf(resource: Resource): string | undefined {
  const checkType = (resource.payload as { checkType?: unknown } | null)?.checkType;
  return typeof checkType === 'string' ? checkType : undefined;
}

/**
 * Why Outpost cannot deploy this construct, or undefined when it can.
 * References to existing records (member: false) are never managed, only
 * looked up, so any kind may be referenced.
 */
export function refusalOf(resource: Resource): Refusal | undefined {
  if (!resource.member) return undefined;
  const { type, logicalId } = resource;
  switch (type) {
    case 'check': {
      const kind = checkTypeOf(resource) ?? 'unknown';
      if (deployableCheckType(kind)) return undefined;
      return { type, logicalId, kind, reason: CHECK_REFUSALS[kind] ?? `Outpost does not run ${kind} checks` };
    }
    case 'alert-channel': {
      const declared = (resource.payload as { type?: unknown } | null)?.type;
      const kind = typeof declared === 'string' ? declared : 'unknown';
      if ((CHANNEL_TYPES as readonly string[]).includes(kind)) return undefined;
      return { type, logicalId, kind, reason: `Outpost sends alerts by ${CHANNEL_TYPES.join(', ')} only` };
    }
    case 'check-group':
    case 'maintenance-window':
    case 'alert-channel-subscription':
    case 'private-location-check-assignment':
    case 'private-location-group-assignment':
      return undefined;
    default:
      return { type, logicalId, reason: TYPE_REFUSALS[type] ?? `Outpost has no counterpart for ${type}` };
  }
}
