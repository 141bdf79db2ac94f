import type { CheckType } from '../protocol/enums.js';
import { checkTypeDefinition } from './check-types/index.js';
import { MAX_ENVIRONMENT_VARIABLES } from './check-types/environment-variables.js';
import type { ServiceContext } from './context.js';
import { DATA_CENTER_LOCATIONS } from './schemas/common.js';
import { MAX_ACCOUNT_VARIABLES } from './store/variables.js';

const LOCATION_NAMES: Record<(typeof DATA_CENTER_LOCATIONS)[number], string> = {
  'us-east-1': 'N. Virginia',
  'us-east-2': 'Ohio',
  'us-west-1': 'N. California',
  'us-west-2': 'Oregon',
  'ca-central-1': 'Canada',
  'sa-east-1': 'São Paulo',
  'eu-west-1': 'Ireland',
  'eu-central-1': 'Frankfurt',
  'eu-west-2': 'London',
  'eu-west-3': 'Paris',
  'eu-north-1': 'Stockholm',
  'eu-south-1': 'Milan',
  'me-south-1': 'Bahrain',
  'ap-southeast-1': 'Singapore',
  'ap-northeast-1': 'Tokyo',
  'ap-east-1': 'Hong Kong',
  'ap-southeast-2': 'Sydney',
  'ap-southeast-3': 'Jakarta',
  'ap-northeast-2': 'Seoul',
  'ap-northeast-3': 'Osaka',
  'ap-south-1': 'Mumbai',
  'af-south-1': 'Cape Town',
};

/**
 * A self-hosted installation runs checks only where its own agents are: no
 * data-center location has a runner, so none is available to a check.
 */
export const AVAILABLE_DATA_CENTER_LOCATIONS: ReadonlySet<string> = new Set<string>();

export interface Entitlement {
  key: string;
  name: string;
  description: string;
  enabled: boolean;
  quantity: number;
  requiredPlan: string;
  requiredPlanDisplayName: string;
}

export interface Entitlements {
  plan: string;
  planDisplayName: string;
  locations: { all: { id: string; name: string; available: boolean }[]; maxPerCheck: number };
  entitlements: Entitlement[];
}

export const PLAN = 'SELF_HOSTED';
const PLAN_DISPLAY_NAME = 'Self-hosted';

const CHECK_TYPE_FEATURES: readonly { type: CheckType; key: string; name: string }[] = [
  { type: 'URL', key: 'URL_MONITORS', name: 'URL monitors' },
  { type: 'TCP', key: 'TCP_MONITORS', name: 'TCP monitors' },
  { type: 'DNS', key: 'DNS_MONITORS', name: 'DNS monitors' },
  { type: 'ICMP', key: 'ICMP_MONITORS', name: 'ICMP monitors' },
  { type: 'MULTI_STEP', key: 'MULTI_STEP_CHECKS', name: 'Multi-step checks' },
  { type: 'PLAYWRIGHT', key: 'PLAYWRIGHT_CHECK_SUITES', name: 'Playwright check suites' },
  { type: 'API', key: 'API_CHECKS', name: 'API checks' },
  { type: 'BROWSER', key: 'BROWSER_CHECKS', name: 'Browser checks' },
];

/**
 * What this installation gives an account, read from what it actually does:
 * a check type is enabled when the service can create and run it, and each
 * quantity is the limit the service enforces.
 */
export function entitlementsOf(
  ctx: Pick<ServiceContext, 'maxLocationsPerCheck' | 'rateLimit'>,
  privateLocations: readonly { slugName: string; name: string }[],
): Entitlements {
  const entitlement = (key: string, name: string, description: string, enabled: boolean, quantity = 0): Entitlement => ({
    key,
    name,
    description,
    enabled,
    quantity,
    requiredPlan: PLAN,
    requiredPlanDisplayName: PLAN_DISPLAY_NAME,
  });
  return {
    plan: PLAN,
    planDisplayName: PLAN_DISPLAY_NAME,
    locations: {
      all: [
        ...DATA_CENTER_LOCATIONS.map((id) => ({
          id,
          name: LOCATION_NAMES[id],
          available: AVAILABLE_DATA_CENTER_LOCATIONS.has(id),
        })),
        ...privateLocations.map((location) => ({ id: location.slugName, name: location.name, available: true })),
      ],
      maxPerCheck: ctx.maxLocationsPerCheck,
    },
    entitlements: [
      ...CHECK_TYPE_FEATURES.map(({ type, key, name }) =>
        entitlement(key, name, `Create and run ${name.toLowerCase()}`, checkTypeDefinition(type) !== undefined),
      ),
      entitlement(
        'PRIVATE_LOCATIONS',
        'Private locations',
        'Run checks inside your own network with the agent',
        true,
        privateLocations.length,
      ),
      entitlement(
        'DATA_CENTER_LOCATIONS',
        'Data-center locations',
        'Run checks from hosted locations',
        AVAILABLE_DATA_CENTER_LOCATIONS.size > 0,
        AVAILABLE_DATA_CENTER_LOCATIONS.size,
      ),
      entitlement(
        'LOCATIONS_PER_CHECK',
        'Locations per check',
        'Locations one check may run at',
        true,
        ctx.maxLocationsPerCheck,
      ),
      entitlement(
        'ENVIRONMENT_VARIABLES',
        'Environment variables',
        'Account-wide variables for script checks',
        true,
        MAX_ACCOUNT_VARIABLES,
      ),
      entitlement(
        'CHECK_ENVIRONMENT_VARIABLES',
        'Environment variables per check',
        'Variables one check may define',
        true,
        MAX_ENVIRONMENT_VARIABLES,
      ),
      entitlement(
        'API_RATE_LIMIT',
        'API rate limit',
        ctx.rateLimit
          ? `User API calls per API key per ${ctx.rateLimit.windowSeconds} s`
          : 'User API calls per API key: not limited (quantity 0)',
        ctx.rateLimit !== undefined,
        ctx.rateLimit?.max ?? 0,
      ),
    ],
  };
}

/** Problems with where a check would run, by field: unavailable locations and too many of them. */
export function locationProblems(
  locations: readonly string[],
  privateLocations: readonly string[],
  maxPerCheck: number,
): Record<string, string> {
  const problems: Record<string, string> = {};
  const unavailable = locations.filter((location) => !AVAILABLE_DATA_CENTER_LOCATIONS.has(location));
  if (unavailable.length > 0) {
    problems.locations = `not available on this installation: ${unavailable.join(', ')} (no data-center runners; use privateLocations)`;
  } else if (locations.length + privateLocations.length > maxPerCheck) {
    problems[privateLocations.length > 0 ? 'privateLocations' : 'locations'] =
      `at most ${maxPerCheck} locations per check in all (entitlements locations.maxPerCheck); ${locations.length + privateLocations.length} given`;
  }
  return problems;
}
