import Type, { type Static } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { GroupCreateSchema, GroupUpdateSchema, groupProblems, mergeGroupUpdate, type GroupDefinition } from '../check-groups/schema.js';
import { unknownChannelProblems, withAutoSubscribed, type ChannelSubscription } from '../alerts/subscriptions.js';
import { nullsAsDefaults } from '../check-types/common.js';
import { maskSecrets } from '../check-types/environment-variables.js';
import type { ServiceContext } from '../context.js';
import { locationProblems } from '../entitlements.js';
import { startGroupRun } from '../group-runs.js';
import { collapse, sendError, sendInvalidBody } from '../http-errors.js';
import { answerAsBuilt, AnyCheckResponseSchema, definitionFields } from '../schemas/check-response.js';
import { DateTimeSchema, ErrorA, ErrorB } from '../schemas/common.js';
import { channelsById } from '../store/alert-channels.js';
import { createGroup, deleteGroup, getGroup, groupChecks, listGroups, updateGroup, type GroupRow } from '../store/check-groups.js';
import { privateLocationIdsBySlug } from '../store/private-locations.js';
import { sessionRecord } from '../store/sessions.js';
import { compileBodyValidator } from '../validation.js';
import { checkResponse } from './checks.js';
import { CheckSession } from './check-sessions.js';

const tags = ['Check groups'];
const GroupId = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
const AutoAssign = Type.Object({ autoAssignAlerts: Type.Optional(Type.Boolean({ default: true })) });
const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  tag: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 50 })),
  name: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 50 })),
});

/** The fields every answer has; the rest is the stored definition's. */
const GroupServiceFields = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    activated: Type.Boolean(),
    concurrency: Type.Integer(),
    created_at: DateTimeSchema,
    updated_at: Type.Union([DateTimeSchema, Type.Null()]),
  },
  { additionalProperties: true },
);
const GroupResponse = Type.Unsafe<Static<typeof GroupServiceFields>>(
  Type.Object(
    { ...definitionFields(GroupCreateSchema), ...GroupServiceFields.properties },
    { title: 'CheckGroup', additionalProperties: true },
  ),
);

/** What a read shows: the stored group with its secret values masked. */
function groupResponse(row: GroupRow): Static<typeof GroupServiceFields> {
  const shown = { ...row.definition, environmentVariables: maskSecrets(row.definition.environmentVariables) };
  return { ...shown, id: row.id, created_at: row.created_at.toISOString(), updated_at: row.updated_at?.toISOString() ?? null };
}

const validateMerged = compileBodyValidator(GroupCreateSchema);

export const checkGroupRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    /** Rules beyond the fields: variables, where the group may run, private locations that exist. */
    async function problems(accountId: string, group: GroupDefinition): Promise<Record<string, string>> {
      const found: Record<string, string> = {
        ...groupProblems(group),
        ...locationProblems(group.locations, group.privateLocations, ctx.maxLocationsPerCheck),
      };
      const known = await privateLocationIdsBySlug(ctx.db, accountId, group.privateLocations);
      const unknown = group.privateLocations.filter((slug) => !known.has(slug));
      if (unknown.length > 0) found.privateLocations = `unknown private location: ${unknown.join(', ')}`;
      const subscriptions = (group.alertChannelSubscriptions ?? []) as ChannelSubscription[];
      Object.assign(found, unknownChannelProblems(subscriptions, await channelsById(ctx.db, accountId)));
      return found;
    }

    app.post(
      '/v1/check-groups',
      {
        preSerialization: answerAsBuilt,
        schema: {
          tags,
          summary: 'Create a check group',
          querystring: AutoAssign,
          body: GroupCreateSchema,
          response: { 201: GroupResponse, 400: ErrorB },
        },
      },
      async (request, reply) => {
        const group = nullsAsDefaults(GroupCreateSchema, request.body) as unknown as GroupDefinition;
        if (request.query.autoAssignAlerts ?? true) {
          const own = (group.alertChannelSubscriptions ?? []) as ChannelSubscription[];
          group.alertChannelSubscriptions = withAutoSubscribed(own, await channelsById(ctx.db, request.accountId));
        }
        const found = await problems(request.accountId, group);
        if (Object.keys(found).length > 0) return sendInvalidBody(reply, found);
        return reply.code(201).send(groupResponse(await createGroup(ctx.db, request.accountId, group)));
      },
    );

    app.get(
      '/v1/check-groups',
      {
        preSerialization: answerAsBuilt,
        schema: {
          tags,
          summary: 'List check groups',
          description: 'Oldest first. tag: groups with any of these tags; name: groups named exactly one of these.',
          querystring: ListQuery,
          response: { 200: Type.Array(GroupResponse) },
        },
      },
      async (request) => {
        const rows = await listGroups(ctx.db, request.accountId, {
          limit: request.query.limit ?? 10,
          page: request.query.page ?? 1,
          tags: request.query.tag ?? [],
          names: request.query.name ?? [],
        });
        return rows.map(groupResponse);
      },
    );

    app.get(
      '/v1/check-groups/:id',
      {
        preSerialization: answerAsBuilt,
        schema: { tags, summary: 'Retrieve a check group', params: GroupId, response: { 200: GroupResponse, 404: ErrorA } },
      },
      async (request, reply) => {
        const row = await getGroup(ctx.db, request.accountId, request.params.id);
        return row ? groupResponse(row) : sendError(reply, 404, 'Check group not found');
      },
    );

    app.put(
      '/v2/check-groups/:id',
      {
        preSerialization: answerAsBuilt,
        schema: {
          tags,
          summary: 'Update a check group (V2)',
          description: 'Fields left out keep their stored value; the group is validated whole again.',
          params: GroupId,
          querystring: AutoAssign,
          body: GroupUpdateSchema,
          response: { 200: GroupResponse, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const stored = await getGroup(ctx.db, request.accountId, request.params.id);
        if (!stored) return sendError(reply, 404, 'Check group not found');
        const merged = mergeGroupUpdate(stored.definition, request.body);
        if (!validateMerged(merged)) {
          const attributes = collapse(validateMerged.errors ?? []);
          return sendInvalidBody(reply, attributes);
        }
        const group = nullsAsDefaults(GroupCreateSchema, merged) as unknown as GroupDefinition;
        const found = await problems(request.accountId, group);
        if (Object.keys(found).length > 0) return sendInvalidBody(reply, found);
        const row = await updateGroup(ctx.db, request.accountId, stored.id, group);
        return row ? groupResponse(row) : sendError(reply, 404, 'Check group not found');
      },
    );

    app.delete(
      '/v1/check-groups/:id',
      {
        schema: {
          tags,
          summary: 'Delete a check group',
          description: 'Only an empty group: move or delete its checks first (409 otherwise).',
          params: GroupId,
          response: { 204: Type.Null(), 404: ErrorB, 409: ErrorB },
        },
      },
      async (request, reply) => {
        const outcome = await deleteGroup(ctx.db, request.accountId, request.params.id);
        if (outcome === 'not-found') return sendError(reply, 404, 'Check group not found', { id: 'not found' });
        if (outcome === 'has-checks') {
          return sendError(reply, 409, 'The check group still holds checks; move or delete them first', {
            id: 'holds checks',
          });
        }
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/v1/check-groups/:id/checks',
      {
        preSerialization: answerAsBuilt,
        schema: {
          tags,
          summary: "List a check group's checks, in run order",
          description: 'By groupOrder, checks without one last, then oldest first.',
          params: GroupId,
          response: { 200: Type.Array(AnyCheckResponseSchema), 404: ErrorA },
        },
      },
      async (request, reply) => {
        const group = await getGroup(ctx.db, request.accountId, request.params.id);
        if (!group) return sendError(reply, 404, 'Check group not found');
        const channels = await channelsById(ctx.db, request.accountId);
        return (await groupChecks(ctx.db, request.accountId, group.id)).map((row) => checkResponse(row, channels));
      },
    );

    app.post(
      '/v1/check-groups/:id/trigger',
      {
        schema: {
          tags,
          summary: 'Run every check of the group now',
          description:
            'One session per check (runSource GROUP_RUN_ALL), started in groupOrder, at most the group\'s concurrency at a ' +
            'time: the others answer STARTED and wait until a session before them finishes.',
          params: GroupId,
          response: { 201: Type.Object({ sessions: Type.Array(CheckSession) }), 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const group = await getGroup(ctx.db, request.accountId, request.params.id);
        if (!group) return sendError(reply, 404, 'Check group not found');
        const checks = await groupChecks(ctx.db, request.accountId, group.id);
        if (checks.length === 0) return sendError(reply, 400, 'The check group has no checks to run', { id: 'has no checks' });
        const started = await startGroupRun(ctx, group, checks);
        if (started.sessions.length === 0) return sendError(reply, 400, 'None of the group\'s checks can run', started.refused);
        const sessions = [];
        for (const session of started.sessions) sessions.push(await sessionRecord(ctx.db, session, ctx.baseUrl));
        return reply.code(201).send({ sessions });
      },
    );
  };
