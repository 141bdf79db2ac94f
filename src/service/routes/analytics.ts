import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { queryAnalytics } from '../analytics/query.js';
import { CATALOGS, type MetricCatalog } from '../analytics/metrics.js';
import { parseInstant, quickRange, QUICK_RANGES } from '../analytics/time-range.js';
import type { ServiceContext } from '../context.js';
import { sendError } from '../http-errors.js';
import { analyticsRateLimit } from '../rate-limit.js';
import { CheckTypeNameSchema, DateTimeSchema, ErrorA, ErrorB } from '../schemas/common.js';
import { getCheck, listChecks } from '../store/checks.js';
import { statsOfChecks } from '../analytics/batch.js';
import type { CheckType } from '../../protocol/enums.js';

type GroupBy = 'runLocation' | 'statusCode';

const RESULT_STATUSES = ['success', 'failure'] as const;
/** Query parameters that take a comma-separated list; each is checked against its enum once split. */
const LIST_PARAMETERS = ['metrics', 'filterByStatus'];

function querySchema(catalog: MetricCatalog, groupBy: readonly GroupBy[]) {
  return Type.Object({
    from: Type.Optional(Type.String({ description: 'Window start: unix seconds, unix milliseconds or ISO 8601; overrides quickRange' })),
    to: Type.Optional(Type.String({ description: 'Window end, in the same forms; overrides quickRange' })),
    quickRange: Type.Optional(Type.Enum(QUICK_RANGES, { default: 'last24Hours' })),
    aggregationInterval: Type.Optional(Type.Integer({ minimum: 1, maximum: 43200, description: 'Minutes per point' })),
    filterByStatus: Type.Optional(
      Type.Array(Type.Enum(RESULT_STATUSES), { description: 'Comma-separated (or repeated)', style: 'form', explode: false }),
    ),
    groupBy: Type.Optional(Type.Enum(groupBy)),
    metrics: Type.Array(Type.Enum(catalog.names), {
      minItems: 1,
      description: 'Comma-separated (or repeated)',
      style: 'form',
      explode: false,
    }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  });
}

interface AnalyticsEndpoint {
  path: string;
  /** The same endpoint where the checkly CLI looks for it (`checks get`). */
  alias?: string;
  checkType: CheckType;
  summary: string;
  /** What the 404 calls a check of another type or of nobody. */
  noun: string;
  groupBy: readonly GroupBy[];
}

/** URL monitors as the spec has them; API, browser and TCP checks as the comparable product names them; DNS and ICMP after URL monitors. */
const ENDPOINTS: readonly AnalyticsEndpoint[] = [
  { path: '/v1/analytics/url-monitors/:id', checkType: 'URL', summary: 'URL monitor analytics', noun: 'URL monitor', groupBy: ['runLocation', 'statusCode'] },
  { path: '/v1/analytics/api-checks/:id', checkType: 'API', summary: 'API check analytics', noun: 'API check', groupBy: ['runLocation', 'statusCode'] },
  { path: '/v1/analytics/browser-checks/:id', checkType: 'BROWSER', summary: 'Browser check analytics', noun: 'Browser check', groupBy: ['runLocation'] },
  { path: '/v1/analytics/tcp-checks/:id', checkType: 'TCP', summary: 'TCP monitor analytics', noun: 'TCP monitor', groupBy: ['runLocation'] },
  { path: '/v1/analytics/dns-monitors/:id', alias: '/v1/analytics/dns/:id', checkType: 'DNS', summary: 'DNS monitor analytics', noun: 'DNS monitor', groupBy: ['runLocation'] },
  { path: '/v1/analytics/icmp-monitors/:id', alias: '/v1/analytics/icmp/:id', checkType: 'ICMP', summary: 'ICMP monitor analytics', noun: 'ICMP monitor', groupBy: ['runLocation'] },
];

const Answer = Type.Object({
  checkId: Type.String(),
  name: Type.String(),
  checkType: CheckTypeNameSchema,
  activated: Type.Boolean(),
  muted: Type.Boolean(),
  frequency: Type.Number(),
  from: DateTimeSchema,
  to: DateTimeSchema,
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
}, { title: 'CheckAnalytics' });

const Measure = Type.Union([Type.Number(), Type.Null()]);
const BatchAnswer = Type.Object({
  checkId: Type.String(),
  checkType: CheckTypeNameSchema,
  availability: Measure,
  responseTime_avg: Measure,
  responseTime_p50: Measure,
  responseTime_p95: Measure,
  responseTime_p99: Measure,
  latency_avg: Measure,
  latency_p50: Measure,
  latency_p95: Measure,
  latency_p99: Measure,
  packetLoss_avg: Measure,
  packetLoss_p95: Measure,
  packetLoss_p99: Measure,
  hopCount_avg: Measure,
}, { title: 'CheckAnalyticsSummary' });

function splitList(values: unknown): string[] {
  const list: readonly unknown[] = Array.isArray(values) ? values : [values];
  return list
    .flatMap((value) => String(value).split(','))
    .map((value) => value.trim())
    .filter(Boolean);
}

/** `metrics=a,b` and `metrics=a&metrics=b` alike become one array before the schema checks its items. */
function splitListParameters(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  const query = request.query as Record<string, unknown>;
  for (const name of LIST_PARAMETERS) if (query[name] !== undefined) query[name] = splitList(query[name]);
  done();
}

export const analyticsRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const endpoint of ENDPOINTS.flatMap((each) => (each.alias ? [each, { ...each, path: each.alias, hidden: true }] : [each]))) {
      const catalog = CATALOGS[endpoint.checkType]!;
      app.get(
        endpoint.path,
        {
          config: analyticsRateLimit(ctx.rateLimit),
          preValidation: splitListParameters,
          schema: {
            ...('hidden' in endpoint ? { hide: true } : {}),
            tags: ['Analytics'],
            summary: endpoint.summary,
            description:
              `Aggregates of stored results, per time bucket (aggregationInterval) and optionally per ${endpoint.groupBy.join(' or ')}.`,
            params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
            querystring: querySchema(catalog, endpoint.groupBy),
            response: { 200: Answer, 400: ErrorB, 404: ErrorA },
          },
        },
        async (request, reply) => {
          const query = request.query;
          const attributes: Record<string, string> = {};
          const metrics = query.metrics;
          const statuses = query.filterByStatus ?? [];
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
          if (!check || check.check_type !== endpoint.checkType) return sendError(reply, 404, `${endpoint.noun} not found`);
          const page = query.page ?? 1;
          const limit = query.limit ?? 10;
          const series = await queryAnalytics(ctx.db, {
            accountId: request.accountId,
            checkId: check.id,
            catalog,
            from: window.from,
            to: window.to,
            metrics,
            aggregationMinutes: query.aggregationInterval,
            statuses,
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
            metadata: Object.fromEntries(metrics.map((name) => [name, { label: catalog.metric(name)!.label }])),
          };
        },
      );
    }

    app.post(
      '/v1/analytics/checks',
      {
        config: analyticsRateLimit(ctx.rateLimit),
        schema: {
          tags: ['Analytics'],
          summary: 'Headline numbers of many checks',
          description:
            'For each check of the account named in checkIds (others are left out): availability over the window, response times ' +
            '(a TCP monitor: its whole exchange) and, for ICMP monitors, latency and packet loss. A number the check type does ' +
            'not measure, or a window without results, is null; hopCount_avg is always null (no traceroute monitors here).',
          querystring: Type.Object({ quickRange: Type.Optional(Type.Enum(QUICK_RANGES, { default: 'last24Hours' })) }),
          body: Type.Object({ checkIds: Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 100 }) }),
          response: { 200: Type.Array(BatchAnswer), 400: ErrorB },
        },
      },
      async (request) => {
        const window = quickRange(request.query.quickRange ?? 'last24Hours', new Date());
        const checks = await listChecks(ctx.db, request.accountId, { limit: 100, page: 1 }, { ids: request.body.checkIds });
        return statsOfChecks(ctx.db, request.accountId, checks, window);
      },
    );
  };
