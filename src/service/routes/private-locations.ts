import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { parseCidrList } from '../../net-policy/index.js';
import { MAX_DESTINATION_RANGES } from '../../protocol/agent-api.js';
import type { ServiceContext } from '../context.js';
import { sendError, sendInvalidBody } from '../http-errors.js';
import { DATA_CENTER_LOCATIONS, DateTimeSchema, ErrorA, ErrorB, SlugSchema } from '../schemas/common.js';
import {
  createLocationKey,
  createPrivateLocation,
  deleteLocationKey,
  getPrivateLocation,
  listPrivateLocations,
  setDestinationPolicy,
  type DestinationPolicyLists,
} from '../store/private-locations.js';

const AddressRanges = (description: string) =>
  Type.Array(Type.String({ maxLength: 64 }), { maxItems: MAX_DESTINATION_RANGES, description });
const DestinationPolicyFields = {
  allowed: AddressRanges('Ranges (CIDR, or one address) checks may reach although a wider denied range holds them'),
  denied: AddressRanges('Ranges (CIDR, or one address) checks may not reach; 0.0.0.0/0 and ::/0 deny everything not allowed'),
};
const DestinationPolicyRecord = Type.Object(DestinationPolicyFields, {
  description:
    "Where this location's URL, TCP, DNS, ICMP and API checks may connect, judged on the resolved address: the most specific range holding it decides, an address no range holds is allowed. Both empty: anywhere",
});
const DestinationPolicyBody = Type.Object({
  allowed: Type.Optional(DestinationPolicyFields.allowed),
  denied: Type.Optional(DestinationPolicyFields.denied),
});

/** The lists normalized ("10.1.2.3/8" → "10.0.0.0/8"), or the problems by field under `prefix`. */
function destinationPolicy(
  body: { allowed?: string[]; denied?: string[] },
  prefix: string,
): { policy: DestinationPolicyLists } | { problems: Record<string, string> } {
  const problems: Record<string, string> = {};
  const policy: DestinationPolicyLists = { allowed: [], denied: [] };
  for (const name of ['allowed', 'denied'] as const) {
    const parsed = parseCidrList(body[name] ?? []);
    if ('invalid' in parsed) problems[`${prefix}${name}`] = `"${parsed.invalid}" is not an address range such as 10.0.0.0/8 or fd00::/8`;
    else policy[name] = parsed.cidrs.map((cidr) => cidr.text);
  }
  return Object.keys(problems).length > 0 ? { problems } : { policy };
}

const PrivateLocation = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slugName: Type.String(),
  icon: Type.Union([Type.String(), Type.Null()]),
  created_at: DateTimeSchema,
  updated_at: Type.Union([DateTimeSchema, Type.Null()]),
  lastSeen: Type.Union([Type.String(), Type.Null()]),
  destinationPolicy: DestinationPolicyRecord,
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
  keys: Type.Array(Type.Object({ id: Type.String(), maskedKey: Type.String(), created_at: DateTimeSchema })),
}, { title: 'PrivateLocation' });

const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  slugName: SlugSchema,
  icon: Type.Optional(Type.String({ maxLength: 100 })),
  destinationPolicy: Type.Optional(DestinationPolicyBody),
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
        const policy = destinationPolicy(request.body.destinationPolicy ?? {}, 'destinationPolicy.');
        if ('problems' in policy) return sendInvalidBody(reply, policy.problems);
        const id = await createPrivateLocation(ctx.db, request.accountId, { ...request.body, destinationPolicy: policy.policy });
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

    app.put(
      '/v1/private-locations/:id/destination-policy',
      {
        schema: {
          tags,
          params: Id,
          summary: "Replace where the location's checks may connect",
          description:
            'Jobs handed out from now on carry it; agents refuse a denied address with DESTINATION_DENIED instead of connecting. Lists left out are emptied.',
          body: DestinationPolicyBody,
          response: { 200: PrivateLocation, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const policy = destinationPolicy(request.body, '');
        if ('problems' in policy) return sendInvalidBody(reply, policy.problems);
        if (!(await setDestinationPolicy(ctx.db, request.accountId, request.params.id, policy.policy))) {
          return sendError(reply, 404, 'Private location not found');
        }
        return (await getPrivateLocation(ctx.db, request.accountId, request.params.id))!;
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
