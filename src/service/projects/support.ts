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
  'status-page-component': 'Outpost has no v3 status page components',
  'status-page-automation-rule': 'Outpost has no status page automation rules',
  dashboard: 'Outpost has no dashboards',
};

/**
 * Why a status page construct holds what Outpost's status pages cannot, or
 * undefined: Outpost keeps StatusPage's fields, served at /status/{url}.
 */
function statusPageRefusal(payload: unknown): string | undefined {
  const page = (payload ?? {}) as { version?: unknown; customDomain?: unknown };
  if (page.version !== undefined && page.version !== null) {
    return 'Outpost has no v3 status pages; use StatusPage, with cards of StatusPageServices';
  }
  if (typeof page.customDomain === 'string' && page.customDomain !== '') {
    return `Outpost serves status pages at /status/{url} only and has no custom domains; leave customDomain (${page.customDomain}) out`;
  }
  return undefined;
}

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
    case 'status-page': {
      const reason = statusPageRefusal(resource.payload);
      return reason === undefined ? undefined : { type, logicalId, reason };
    }
    case 'check-group':
    case 'maintenance-window':
    case 'status-page-service':
    case 'alert-channel-subscription':
    case 'private-location-check-assignment':
    case 'private-location-group-assignment':
      return undefined;
    default:
      return { type, logicalId, reason: TYPE_REFUSALS[type] ?? `Outpost has no counterpart for ${type}` };
  }
}
