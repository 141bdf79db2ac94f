import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ServiceContext } from '../context.js';
import { entitlementsOf } from '../entitlements.js';
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
          response: { 200: EntitlementsSchema },
        },
      },
      async (request) => entitlementsOf(ctx, await listPrivateLocations(ctx.db, request.accountId)),
    );
  };
