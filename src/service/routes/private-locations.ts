import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ServiceContext } from '../context.js';
import { sendError } from '../http-errors.js';
import { DATA_CENTER_LOCATIONS, ErrorA, ErrorB, SlugSchema } from '../schemas/common.js';
import {
  createLocationKey,
  createPrivateLocation,
  deleteLocationKey,
  getPrivateLocation,
  listPrivateLocations,
} from '../store/private-locations.js';

const PrivateLocation = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slugName: Type.String(),
  icon: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.Union([Type.String(), Type.Null()]),
  lastSeen: Type.Union([Type.String(), Type.Null()]),
  agentCount: Type.Integer(),
  queuedJobs: Type.Integer({ description: 'Jobs due and waiting for an agent of this location: the queue depth' }),
  runningJobs: Type.Integer({ description: 'Jobs the agents of this location hold and run now' }),
  runningAgents: Type.Array(
    Type.Object({
      agentId: Type.String(),
      hostname: Type.String(),
      version: Type.String(),
      mode: Type.String(),
      lastSeen: Type.String(),
    }),
  ),
  keys: Type.Array(Type.Object({ id: Type.String(), maskedKey: Type.String(), created_at: Type.String() })),
});

const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  slugName: SlugSchema,
  icon: Type.Optional(Type.String({ maxLength: 100 })),
});

const Id = Type.Object({ id: Type.String({ format: 'uuid' }) });
const tags = ['Private locations'];

export const privateLocationRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/private-locations',
      { schema: { tags, body: CreateBody, response: { 201: PrivateLocation, 400: ErrorB } } },
      async (request, reply) => {
        const { slugName } = request.body;
        if ((DATA_CENTER_LOCATIONS as readonly string[]).includes(slugName)) {
          return sendError(reply, 400, `slugName "${slugName}" is a data-center location name`, {
            slugName: 'must not look like a data-center location',
          });
        }
        const id = await createPrivateLocation(ctx.db, request.accountId, request.body);
        if (id === undefined) {
          return sendError(reply, 400, `slugName "${slugName}" is already used in this account`, {
            slugName: 'is already used',
          });
        }
        const created = await getPrivateLocation(ctx.db, request.accountId, id);
        return reply.code(201).send(created!);
      },
    );

    app.get(
      '/v1/private-locations',
      { schema: { tags, response: { 200: Type.Array(PrivateLocation) } } },
      async (request) => listPrivateLocations(ctx.db, request.accountId),
    );

    app.get(
      '/v1/private-locations/:id',
      { schema: { tags, params: Id, response: { 200: PrivateLocation, 404: ErrorA } } },
      async (request, reply) => {
        const location = await getPrivateLocation(ctx.db, request.accountId, request.params.id);
        return location ?? sendError(reply, 404, 'Private location not found');
      },
    );

    app.post(
      '/v1/private-locations/:id/keys',
      {
        schema: {
          tags,
          params: Id,
          description: 'Creates a key for the agents of this location. The raw key is shown only in this answer.',
          response: {
            201: Type.Object({ id: Type.String(), rawKey: Type.String(), maskedKey: Type.String() }),
            404: ErrorA,
          },
        },
      },
      async (request, reply) => {
        const location = await getPrivateLocation(ctx.db, request.accountId, request.params.id);
        if (!location) return sendError(reply, 404, 'Private location not found');
        const key = await createLocationKey(ctx.db, location.id);
        // An agent that tried this key a moment early must not wait out a cached refusal.
        ctx.agentKeys.forget();
        return reply.code(201).send(key);
      },
    );

    app.delete(
      '/v1/private-locations/:id/keys/:keyId',
      {
        schema: {
          tags,
          params: Type.Object({ id: Type.String({ format: 'uuid' }), keyId: Type.String({ format: 'uuid' }) }),
          response: { 204: Type.Null(), 404: ErrorB },
        },
      },
      async (request, reply) => {
        const location = await getPrivateLocation(ctx.db, request.accountId, request.params.id);
        const removed = location ? await deleteLocationKey(ctx.db, location.id, request.params.keyId) : false;
        if (!removed) return sendError(reply, 404, 'Private location key not found', { keyId: 'not found' });
        ctx.agentKeys.forget();
        return reply.code(204).send(null);
      },
    );
  };
