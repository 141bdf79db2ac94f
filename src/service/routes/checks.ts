import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { nullsAsDefaults } from '../check-types/common.js';
import { maskSecrets, type EnvironmentVariable } from '../check-types/environment-variables.js';
import {
  checkTypeDefinition,
  checkTypes,
  type CheckDefinition,
  type CheckTypeDefinition,
} from '../check-types/index.js';
import type { ServiceContext } from '../context.js';
import { unknownChannelProblems, withAutoSubscribed, type ChannelSubscription } from '../alerts/subscriptions.js';
import { locationProblems } from '../entitlements.js';
import { collapse, invalidBodyMessage, sendError, sendInvalidBody } from '../http-errors.js';
import { answerAsBuilt, AnyCheckResponseSchema, typedCheckResponseSchema, type CheckResponse } from '../schemas/check-response.js';
import { ErrorA, ErrorB } from '../schemas/common.js';
import { checkIdsWithStatus, CheckListQuery } from '../check-list-filters.js';
import {
  countChecks,
  createCheck,
  deleteCheck,
  getCheck,
  listChecks,
  updateCheck,
  type CheckListFilter,
  type CheckRow,
} from '../store/checks.js';
import { channelsById, type ChannelRecord } from '../store/alert-channels.js';
import { getGroup } from '../store/check-groups.js';
import { serviceNames } from '../store/status-pages.js';
import { privateLocationIdsBySlug } from '../store/private-locations.js';
import { compileBodyValidator } from '../validation.js';

const tags = ['Checks'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const AutoAssign = Type.Object({ autoAssignAlerts: Type.Optional(Type.Boolean({ default: true })) });
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** What a read may show of a definition: no request-only fields, no secret values. */
function shownDefinition(row: CheckRow): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...row.definition };
  for (const field of checkTypeDefinition(row.check_type)?.requestOnlyFields ?? []) delete shown[field];
  if (Array.isArray(shown.environmentVariables)) {
    shown.environmentVariables = maskSecrets(shown.environmentVariables as EnvironmentVariable[]);
  }
  return shown;
}

/** The channels a check sends to, by kind, as the spec's alertChannels shows them. */
export function alertChannelsOf(definition: CheckDefinition, channels: ReadonlyMap<number, ChannelRecord>): CheckResponse['alertChannels'] {
  const shown: CheckResponse['alertChannels'] = { email: [], webhook: [], slack: [], sms: [] };
  const subscriptions = (definition.alertChannelSubscriptions ?? []) as { alertChannelId: number; activated: boolean }[];
  for (const subscription of subscriptions) {
    const channel = subscription.activated ? channels.get(subscription.alertChannelId) : undefined;
    if (!channel) continue;
    const config = channel.config;
    if (channel.type === 'EMAIL') shown.email.push({ address: String(config.address) });
    else if (channel.type === 'SLACK') shown.slack.push({ url: String(config.url) });
    else if (channel.type === 'SMS') shown.sms.push({ number: String(config.number), name: String(config.name) });
    else {
      // A webhook channel's config was validated against its schema when it was saved.
      const webhook = config as CheckResponse['alertChannels']['webhook'][number];
      shown.webhook.push({ url: webhook.url, name: webhook.name, method: webhook.method, headers: webhook.headers, queryParameters: webhook.queryParameters });
    }
  }
  return shown;
}

export function checkResponse(row: CheckRow, channels: ReadonlyMap<number, ChannelRecord>): CheckResponse {
  return {
    ...shownDefinition(row),
    id: row.id,
    checkType: row.check_type,
    name: row.name,
    activated: row.activated,
    muted: row.muted,
    frequency: row.frequency,
    locations: row.definition.locations,
    tags: row.tags,
    privateLocations: row.private_locations,
    alertChannels: alertChannelsOf(row.definition, channels),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at?.toISOString() ?? null,
  };
}

type Verdict = { definition: CheckDefinition } | { message: string; attributes: Record<string, string> };

/**
 * Everything a definition must satisfy beyond its own fields: rules across
 * fields, locations the account's entitlements allow, and private locations
 * and a check group that exist in this account.
 */
export async function judge(
  ctx: ServiceContext,
  accountId: string,
  type: CheckTypeDefinition,
  definition: CheckDefinition,
): Promise<Verdict> {
  const { db } = ctx;
  const attributes: Record<string, string> = {
    ...type.crossFieldProblems(definition),
    ...locationProblems(definition.locations, definition.privateLocations, ctx.maxLocationsPerCheck),
  };
  const known = await privateLocationIdsBySlug(db, accountId, definition.privateLocations);
  const unknown = definition.privateLocations.filter((slug) => !known.has(slug));
  if (unknown.length > 0) attributes.privateLocations = `unknown private location: ${unknown.join(', ')}`;
  const subscriptions = (definition.alertChannelSubscriptions ?? []) as ChannelSubscription[];
  Object.assign(attributes, unknownChannelProblems(subscriptions, await channelsById(db, accountId)));
  const serviceId = (definition.triggerIncident as { serviceId?: string } | null | undefined)?.serviceId;
  if (serviceId !== undefined && !(UUID.test(serviceId) && (await serviceNames(db, accountId, [serviceId])).has(serviceId))) {
    attributes['triggerIncident.serviceId'] = `unknown status page service: ${serviceId}`;
  }
  if (typeof definition.groupId === 'number' && !(await getGroup(db, accountId, definition.groupId))) {
    attributes.groupId = `unknown check group: ${definition.groupId}`;
  }
  if (Object.keys(attributes).length === 0 && type.resolveInAccount) {
    const resolved = await type.resolveInAccount(db, accountId, definition);
    Object.assign(attributes, resolved.problems);
    definition = resolved.definition;
  }
  if (Object.keys(attributes).length === 0) return { definition };
  return { message: invalidBodyMessage(attributes), attributes };
}

export const checkRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const type of checkTypes) {
      const validateMerged = compileBodyValidator(type.createSchema);

      app.post(
        `/v1/checks/${type.path}`,
        {
          ...(type.bodyLimit ? { bodyLimit: type.bodyLimit } : {}),
          preSerialization: answerAsBuilt,
          schema: {
            tags,
            summary: `Create a ${type.checkType} check`,
            description: type.summary,
            querystring: AutoAssign,
            body: type.createSchema,
            response: { 201: typedCheckResponseSchema(type), 400: ErrorB },
          },
        },
        async (request, reply) => {
          // ajv has filled every default in.
          const body: CheckDefinition = nullsAsDefaults(type.createSchema, {
            ...(request.body as unknown as CheckDefinition),
            checkType: type.checkType,
          });
          const channels = await channelsById(ctx.db, request.accountId);
          if (request.query.autoAssignAlerts ?? true) {
            body.alertChannelSubscriptions = withAutoSubscribed((body.alertChannelSubscriptions ?? []) as ChannelSubscription[], channels);
          }
          const verdict = await judge(ctx, request.accountId, type, body);
          if (!('definition' in verdict)) return sendError(reply, 400, verdict.message, verdict.attributes);
          const row = await createCheck(ctx.db, request.accountId, type.checkType, verdict.definition);
          return reply.code(201).send(checkResponse(row, channels));
        },
      );

      app.put(
        `/v1/checks/${type.path}/:id`,
        {
          ...(type.bodyLimit ? { bodyLimit: type.bodyLimit } : {}),
          preSerialization: answerAsBuilt,
          schema: {
            tags,
            summary: `Update a ${type.checkType} check`,
            description:
              'Fields left out keep their stored values; `request` is merged field by field. ' +
              'A secret environment variable sent back with its masked value keeps its stored value.',
            querystring: AutoAssign,
            params: IdParams,
            body: type.updateSchema,
            response: { 200: typedCheckResponseSchema(type), 400: ErrorB, 404: ErrorA },
          },
        },
        async (request, reply) => {
          const stored = await getCheck(ctx.db, request.accountId, request.params.id);
          if (!stored || stored.check_type !== type.checkType) {
            return sendError(reply, 404, `${type.checkType} check not found`);
          }
          const merged = type.mergeUpdate(stored.definition, request.body);
          // The whole check is validated again: a change may break a rule across fields.
          if (!validateMerged(merged)) {
            return sendInvalidBody(reply, collapse(validateMerged.errors ?? []));
          }
          const definition = nullsAsDefaults(type.createSchema, merged) as CheckDefinition;
          const verdict = await judge(ctx, request.accountId, type, definition);
          if (!('definition' in verdict)) return sendError(reply, 400, verdict.message, verdict.attributes);
          const row = await updateCheck(ctx.db, request.accountId, stored.id, verdict.definition);
          return row
            ? checkResponse(row, await channelsById(ctx.db, request.accountId))
            : sendError(reply, 404, `${type.checkType} check not found`);
        },
      );
    }

    app.get(
      '/v1/checks',
      {
        preSerialization: answerAsBuilt,
        schema: {
          tags,
          summary: 'List checks',
          description:
            'Oldest first, narrowed by every filter given. The Content-Range header gives the page and the total over all pages ' +
            '(`0-9/42`; `*/0` when nothing matches).',
          querystring: CheckListQuery,
          response: { 200: Type.Array(AnyCheckResponseSchema) },
        },
      },
      async (request, reply) => {
        const { query } = request;
        const limit = query.limit ?? 10;
        const page = query.page ?? 1;
        const filter: CheckListFilter = {
          tags: [...(query.tag ?? []), ...(query['tag[]'] ?? [])].flatMap((tag) => tag.split(',')).filter(Boolean),
          checkType: query.checkType,
          search: query.search,
          ids: query.status === undefined ? undefined : await checkIdsWithStatus(ctx.db, request.accountId, query.status),
        };
        const [rows, total] = await Promise.all([
          listChecks(ctx.db, request.accountId, { limit, page }, filter),
          countChecks(ctx.db, request.accountId, filter),
        ]);
        const channels = await channelsById(ctx.db, request.accountId);
        const first = (page - 1) * limit;
        void reply.header('content-range', rows.length > 0 ? `${first}-${first + rows.length - 1}/${total}` : `*/${total}`);
        return rows.map((row) => checkResponse(row, channels));
      },
    );

    app.get(
      '/v1/checks/:id',
      {
        preSerialization: answerAsBuilt,
        schema: { tags, summary: 'Retrieve a check', params: IdParams, response: { 200: AnyCheckResponseSchema, 404: ErrorA } },
      },
      async (request, reply) => {
        const row = await getCheck(ctx.db, request.accountId, request.params.id);
        return row ? checkResponse(row, await channelsById(ctx.db, request.accountId)) : sendError(reply, 404, 'Check not found');
      },
    );

    app.delete(
      '/v1/checks/:id',
      {
        schema: {
          tags,
          summary: 'Delete a check, with its sessions and results',
          params: IdParams,
          response: { 204: Type.Null(), 404: ErrorB },
        },
      },
      async (request, reply) => {
        const deleted = await deleteCheck(ctx.db, request.accountId, request.params.id);
        if (!deleted) return sendError(reply, 404, 'Check not found', { id: 'not found' });
        return reply.code(204).send(null);
      },
    );
  };
