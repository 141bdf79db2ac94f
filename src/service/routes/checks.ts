import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ServiceContext } from '../context.js';
import { sendErrorA, sendErrorB } from '../http-errors.js';
import { CheckResponseSchema, UrlCheckCreateSchema } from '../schemas/url-check.js';
import { ErrorA, ErrorB, Pagination } from '../schemas/common.js';
import { createCheck, getCheck, listChecks, type CheckDefinition, type CheckRow } from '../store/checks.js';
import { privateLocationIdsBySlug } from '../store/private-locations.js';

const tags = ['Checks'];
const CreateQuery = Type.Object({ autoAssignAlerts: Type.Optional(Type.Boolean({ default: true })) });

export function checkResponse(row: CheckRow): Type.Static<typeof CheckResponseSchema> {
  return {
    locations: [],
    ...row.definition,
    id: row.id,
    checkType: row.check_type,
    name: row.name,
    activated: row.activated,
    muted: row.muted,
    frequency: row.frequency,
    tags: row.tags,
    privateLocations: row.private_locations,
    alertChannels: { email: [], webhook: [], slack: [], sms: [] },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at?.toISOString() ?? null,
  };
}

export const checkRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/checks/url',
      {
        schema: {
          tags,
          summary: 'Create a URL monitor',
          querystring: CreateQuery,
          body: UrlCheckCreateSchema,
          response: { 201: CheckResponseSchema, 400: ErrorB },
        },
      },
      async (request, reply) => {
        // ajv has filled every default in, so the optional fields are all present.
        const body = request.body as Required<typeof request.body>;
        const attributes: Record<string, string> = {};
        if (body.degradedResponseTime > body.maxResponseTime) {
          attributes.degradedResponseTime = 'must not be greater than maxResponseTime';
        }
        const known = await privateLocationIdsBySlug(ctx.db, request.accountId, body.privateLocations);
        const unknown = body.privateLocations.filter((slug) => !known.has(slug));
        if (unknown.length > 0) attributes.privateLocations = `unknown private location: ${unknown.join(', ')}`;
        if (Object.keys(attributes).length > 0) {
          const list = Object.entries(attributes).map(([field, problem]) => `${field} ${problem}`);
          return sendErrorB(reply, 400, `Invalid body: ${list.join('; ')}`, attributes);
        }
        const definition: CheckDefinition = { ...body, checkType: 'URL' };
        const row = await createCheck(ctx.db, request.accountId, 'URL', definition);
        return reply.code(201).send(checkResponse(row));
      },
    );

    app.get(
      '/v1/checks',
      { schema: { tags, querystring: Pagination, response: { 200: Type.Array(CheckResponseSchema) } } },
      async (request) => {
        const rows = await listChecks(ctx.db, request.accountId, {
          limit: request.query.limit ?? 10,
          page: request.query.page ?? 1,
        });
        return rows.map(checkResponse);
      },
    );

    app.get(
      '/v1/checks/:id',
      {
        schema: {
          tags,
          params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
          response: { 200: CheckResponseSchema, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const row = await getCheck(ctx.db, request.accountId, request.params.id);
        return row ? checkResponse(row) : sendErrorA(reply, 404, 'Check not found');
      },
    );
  };
