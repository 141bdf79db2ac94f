import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { speaksChecklyDialect } from '../auth.js';
import type { ServiceContext } from '../context.js';
import { entitlementsOf, type Entitlements } from '../entitlements.js';
import { listPrivateLocations } from '../store/private-locations.js';

const EntitlementsSchema = Type.Object({
  plan: Type.String(),
  planDisplayName: Type.Optional(Type.String()),
  locations: Type.Object({
    all: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), available: Type.Boolean() })),
    maxPerCheck: Type.Number(),
  }),
  entitlements: Type.Array(
    Type.Object({
      key: Type.String(),
      name: Type.String(),
      description: Type.String(),
      enabled: Type.Boolean(),
      quantity: Type.Number(),
      requiredPlan: Type.String(),
      requiredPlanDisplayName: Type.String(),
      requiredAddon: Type.Optional(
        Type.Object({
          name: Type.String(),
          displayName: Type.String(),
          tierDisplayName: Type.String(),
        }),
      ),
    }),
  ),
  addons: Type.Optional(
    Type.Object({
      communicate: Type.Object({ tier: Type.String(), tierDisplayName: Type.String() }),
      resolve: Type.Object({ tier: Type.String(), tierDisplayName: Type.String() }),
    }),
  ),
});

/**
 * The plan as the public `checkly` CLI reads it (`checkly account plan`):
 * each entitlement is `metered` (a number) or a `flag`; `addons` is an object,
 * empty here; a disabled entitlement names no plan to upgrade to, since none
 * would enable it, and an entitlement with no limit has no quantity.
 */
const ChecklyPlanSchema = Type.Object(
  {
    plan: Type.String(),
    planDisplayName: Type.String(),
    locations: EntitlementsSchema.properties.locations,
    entitlements: Type.Array(
      Type.Object({
        key: Type.String(),
        name: Type.String(),
        description: Type.String(),
        type: Type.Union([Type.Literal('metered'), Type.Literal('flag')]),
        enabled: Type.Boolean(),
        quantity: Type.Optional(Type.Number()),
        requiredPlan: Type.Optional(Type.String()),
        requiredPlanDisplayName: Type.Optional(Type.String()),
      }),
    ),
    addons: Type.Object({}, { additionalProperties: false, description: 'Always empty: Outpost sells no add-ons' }),
  },
  { description: 'Answered to a caller that names its account in x-checkly-account (the public checkly CLI)' },
);

/** Entitlements that are a number rather than on or off. */
const METERED = new Set([
  'PRIVATE_LOCATIONS',
  'DATA_CENTER_LOCATIONS',
  'LOCATIONS_PER_CHECK',
  'ENVIRONMENT_VARIABLES',
  'CHECK_ENVIRONMENT_VARIABLES',
  'API_RATE_LIMIT',
]);
/** Metered entitlements whose quantity is not a limit: how many private locations the account has. */
const NOT_A_LIMIT = new Set(['PRIVATE_LOCATIONS']);

export function checklyPlan(plan: Entitlements) {
  return {
    plan: plan.plan,
    planDisplayName: plan.planDisplayName,
    locations: plan.locations,
    entitlements: plan.entitlements.map((e) => {
      const metered = METERED.has(e.key);
      const limited = metered && e.enabled && !NOT_A_LIMIT.has(e.key);
      return {
        key: e.key,
        name: e.name,
        description: e.description,
        type: metered ? ('metered' as const) : ('flag' as const),
        enabled: e.enabled,
        ...(limited ? { quantity: e.quantity } : {}),
        ...(e.enabled ? { requiredPlan: e.requiredPlan, requiredPlanDisplayName: e.requiredPlanDisplayName } : {}),
      };
    }),
    addons: {},
  };
}

const tags = ['Account'];

export const accountRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/accounts/me/entitlements',
      {
        schema: {
          tags,
          summary: 'Fetch current account entitlements',
          description:
            'The plan, where checks may run (locations.all, maxPerCheck: enforced when checks are created or updated) and the features and limits of this installation.',
          response: { 200: Type.Union([EntitlementsSchema, ChecklyPlanSchema]) },
        },
      },
      async (request) => {
        const plan = entitlementsOf(ctx, await listPrivateLocations(ctx.db, request.accountId));
        return speaksChecklyDialect(request) ? checklyPlan(plan) : plan;
      },
    );
  };
