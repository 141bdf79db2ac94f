import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { queryAnalytics } from '../analytics/query.js';
import { METRIC_NAMES, metric } from '../analytics/metrics.js';
import { parseInstant, quickRange, QUICK_RANGES } from '../analytics/time-range.js';
import type { ServiceContext } from '../context.js';
import { sendError } from '../http-errors.js';
import { analyticsRateLimit } from '../rate-limit.js';
import { ErrorA, ErrorB } from '../schemas/common.js';
import { getCheck } from '../store/checks.js';

const Query = Type.Object({
  from: Type.Optional(Type.String({ description: 'Window start: unix seconds, unix milliseconds or ISO 8601; overrides quickRange' })),
  to: Type.Optional(Type.String({ description: 'Window end, in the same forms; overrides quickRange' })),
  quickRange: Type.Optional(Type.Enum(QUICK_RANGES, { default: 'last24Hours' })),
  aggregationInterval: Type.Optional(Type.Integer({ minimum: 1, maximum: 43200, description: 'Minutes per point' })),
  filterByStatus: Type.Optional(Type.Array(Type.String(), { description: 'success, failure (repeated or comma-separated)' })),
  groupBy: Type.Optional(Type.Enum(['runLocation', 'statusCode'])),
  metrics: Type.String({ minLength: 1, description: `Comma-separated: ${METRIC_NAMES.slice(0, 4).join(', ')}, …` }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
});

const Answer = Type.Object({
  checkId: Type.String(),
  name: Type.String(),
  checkType: Type.String(),
  activated: Type.Boolean(),
  muted: Type.Boolean(),
  frequency: Type.Number(),
  from: Type.String(),
  to: Type.String(),
  tags: Type.Array(Type.String()),
  series: Type.Array(
    Type.Object(
      {
        runLocation: Type.Optional(Type.String()),
        statusCode: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
        data: Type.Array(Type.Record(Type.String(), Type.Union([Type.Number(), Type.String(), Type.Null()]))),
      },
    ),
  ),
  pagination: Type.Object({ page: Type.Number(), limit: Type.Number() }),
  metadata: Type.Record(Type.String(), Type.Object({ label: Type.String() })),
});

function splitList(values: readonly string[] | string | undefined): string[] {
  const list: readonly string[] = typeof values === 'string' ? [values] : (values ?? []);
  return list
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter(Boolean);
}

export const analyticsRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/analytics/url-monitors/:id',
      {
        config: analyticsRateLimit(ctx.rateLimit),
        schema: {
          tags: ['Analytics'],
          summary: 'URL monitor analytics',
          description:
            'Aggregates of stored results, per time bucket (aggregationInterval) and optionally per run location or status code.',
          params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
          querystring: Query,
          response: { 200: Answer, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const query = request.query;
        const attributes: Record<string, string> = {};
        const metrics = splitList(query.metrics);
        const unknown = metrics.filter((name) => !metric(name));
        if (metrics.length === 0) attributes.metrics = 'must name at least one metric';
        else if (unknown.length > 0) attributes.metrics = `unknown metric: ${unknown.join(', ')}`;
        const statuses = splitList(query.filterByStatus);
        if (statuses.some((status) => status !== 'success' && status !== 'failure')) {
          attributes.filterByStatus = 'must be success or failure';
        }
        const range = quickRange(query.quickRange ?? 'last24Hours', new Date());
        const from = query.from === undefined ? undefined : parseInstant(query.from);
        const to = query.to === undefined ? undefined : parseInstant(query.to);
        if (query.from !== undefined && !from) attributes.from = 'must be a unix timestamp or an ISO 8601 date';
        if (query.to !== undefined && !to) attributes.to = 'must be a unix timestamp or an ISO 8601 date';
        // A custom window overrides quickRange; a lone end takes a day before it, a lone start runs to now.
        const window =
          from || to
            ? { from: from ?? new Date((to ?? new Date()).getTime() - 86_400_000), to: to ?? new Date() }
            : range;
        if (!attributes.from && !attributes.to && window.from >= window.to) attributes.from = 'must be before to';
        if (Object.keys(attributes).length > 0) {
          const list = Object.entries(attributes).map(([field, problem]) => `${field} ${problem}`);
          return sendError(reply, 400, `Invalid query: ${list.join('; ')}`, attributes);
        }

        const check = await getCheck(ctx.db, request.accountId, request.params.id);
        if (!check || check.check_type !== 'URL') return sendError(reply, 404, 'URL monitor not found');
        const page = query.page ?? 1;
        const limit = query.limit ?? 10;
        const series = await queryAnalytics(ctx.db, {
          accountId: request.accountId,
          checkId: check.id,
          from: window.from,
          to: window.to,
          metrics,
          aggregationMinutes: query.aggregationInterval,
          statuses: statuses as ('success' | 'failure')[],
          groupBy: query.groupBy,
          limit,
          page,
        });
        return {
          checkId: check.id,
          name: check.name,
          checkType: check.check_type,
          activated: check.activated,
          muted: check.muted,
          frequency: check.frequency,
          from: window.from.toISOString(),
          to: window.to.toISOString(),
          tags: check.tags,
          series,
          pagination: { page, limit },
          metadata: Object.fromEntries(metrics.map((name) => [name, { label: metric(name)!.label }])),
        };
      },
    );
  };
