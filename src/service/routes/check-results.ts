import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { parseInstant } from '../analytics/time-range.js';
import type { ServiceContext } from '../context.js';
import { sendError } from '../http-errors.js';
import { ChecklyResultFields, checklyResultFields } from '../checkly-result-fields.js';
import { artifactEntries, CheckResultSchema as BaseResultSchema, checkResultRecord as baseResultRecord } from '../result-records.js';
import { ASSET_TYPES, AssetManifestSchema, assetManifest } from '../result-asset-manifest.js';
import type { ResultWithArtifactsRow } from '../store/check-results.js';
import type { ArtifactLinks } from '../artifact-links.js';
import { ErrorA } from '../schemas/common.js';
import { getCheck } from '../store/checks.js';
import {
  getCheckResult,
  isResultOfCheck,
  listResultsFrom,
  listResultsPage,
  type ResultFilters,
} from '../store/check-results.js';
import { CHECK_TYPES } from '../../protocol/enums.js';

const tags = ['Check results'];

const CheckResultSchema = Type.Object({ ...BaseResultSchema.properties, ...ChecklyResultFields }, { title: 'CheckResult' });

function checkResultRecord(row: ResultWithArtifactsRow, links: ArtifactLinks, baseUrl: string, now?: Date) {
  return { ...baseResultRecord(row, links, baseUrl, now), ...checklyResultFields(row) };
}

const RESULT_TYPES = ['ALL', 'FINAL', 'ATTEMPT'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const filterFields = {
  from: Type.Optional(
    Type.String({ description: 'Runs from this time on (>=): unix seconds, unix milliseconds or ISO 8601' }),
  ),
  to: Type.Optional(Type.String({ description: 'Runs before this time (<), in the same forms' })),
  location: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Run location (a private location slug)' })),
  checkType: Type.Optional(Type.Enum(CHECK_TYPES)),
  hasFailures: Type.Optional(Type.Boolean({ description: 'Only results with (true) or without (false) failures' })),
  resultType: Type.Optional(
    Type.Enum(RESULT_TYPES, { default: 'FINAL', description: 'FINAL: the result of each location; ATTEMPT: failed attempts before it; ALL' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
};

const V1Query = Type.Object({ ...filterFields, page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })) });
const V2Query = Type.Object({
  ...filterFields,
  nextId: Type.Optional(
    Type.String({ description: 'Cursor: the nextId of the previous answer; the page starts with that result' }),
  ),
});

const CheckParams = Type.Object({ checkId: Type.String({ format: 'uuid' }) });

type FilterQuery = {
  from?: string;
  to?: string;
  location?: string;
  checkType?: string;
  hasFailures?: boolean;
  resultType?: (typeof RESULT_TYPES)[number];
};

/** The query's filters, or the problem with each bad one (named as the query names it). */
function parseFilters(query: FilterQuery): { filters: ResultFilters } | { problems: Record<string, string> } {
  const problems: Record<string, string> = {};
  const from = query.from === undefined ? undefined : parseInstant(query.from);
  const to = query.to === undefined ? undefined : parseInstant(query.to);
  if (query.from !== undefined && !from) problems.from = 'must be a unix timestamp or an ISO 8601 date';
  if (query.to !== undefined && !to) problems.to = 'must be a unix timestamp or an ISO 8601 date';
  if (from && to && from >= to) problems.from = 'must be before to';
  if (Object.keys(problems).length > 0) return { problems };
  return {
    filters: {
      from,
      to,
      location: query.location,
      checkType: query.checkType,
      hasFailures: query.hasFailures,
      resultType: query.resultType ?? 'FINAL',
    },
  };
}

const invalidQuery = (problems: Record<string, string>) =>
  `Invalid query: ${Object.entries(problems)
    .map(([field, problem]) => `${field} ${problem}`)
    .join('; ')}`;

export const checkResultRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/check-results/:checkId',
      {
        schema: {
          tags,
          summary: 'List check results',
          description:
            "A check's results, newest first by when they ran, with everything each location's run reported and " +
            'signed links to its artifacts. Paged by page and limit; GET /v2/check-results/{checkId} pages by cursor.',
          params: CheckParams,
          querystring: V1Query,
          response: { 200: Type.Array(CheckResultSchema), 400: ErrorA, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const parsed = parseFilters(request.query);
        if ('problems' in parsed) return sendError(reply, 400, invalidQuery(parsed.problems), parsed.problems);
        const check = await getCheck(ctx.db, request.accountId, request.params.checkId);
        if (!check) return sendError(reply, 404, 'Check not found');
        const rows = await listResultsPage(ctx.db, request.accountId, check.id, parsed.filters, {
          limit: request.query.limit ?? 10,
          page: request.query.page ?? 1,
        });
        const now = new Date();
        return rows.map((row) => checkResultRecord(row, ctx.artifactLinks, ctx.baseUrl, now));
      },
    );

    app.get(
      '/v2/check-results/:checkId',
      {
        schema: {
          tags,
          summary: 'List check results (cursor)',
          description:
            "A check's results, newest first by when they ran. Each answer gives nextId, the first result of the next " +
            'page (null after the last): send it back as nextId, with the same filters. Results that arrive meanwhile ' +
            'do not shift the pages.',
          params: CheckParams,
          querystring: V2Query,
          response: {
            200: Type.Object({
              length: Type.Integer({ description: 'Number of entries in this answer' }),
              entries: Type.Array(CheckResultSchema),
              nextId: Type.Union([Type.String(), Type.Null()]),
            }),
            400: ErrorA,
            404: ErrorA,
          },
        },
      },
      async (request, reply) => {
        const parsed = parseFilters(request.query);
        const { nextId } = request.query;
        const problems = 'problems' in parsed ? { ...parsed.problems } : {};
        if (nextId !== undefined && !UUID.test(nextId)) problems.nextId = 'must be the nextId of a previous answer';
        if ('problems' in parsed || Object.keys(problems).length > 0) return sendError(reply, 400, invalidQuery(problems), problems);
        const check = await getCheck(ctx.db, request.accountId, request.params.checkId);
        if (!check) return sendError(reply, 404, 'Check not found');
        if (nextId !== undefined && !(await isResultOfCheck(ctx.db, request.accountId, check.id, nextId))) {
          const unknown = { nextId: 'names no result of this check: send the nextId of a previous answer' };
          return sendError(reply, 400, invalidQuery(unknown), unknown);
        }
        const limit = request.query.limit ?? 10;
        const rows = await listResultsFrom(ctx.db, request.accountId, check.id, parsed.filters, nextId, limit + 1);
        const now = new Date();
        const entries = rows.slice(0, limit).map((row) => checkResultRecord(row, ctx.artifactLinks, ctx.baseUrl, now));
        return { length: entries.length, entries, nextId: rows[limit]?.id ?? null };
      },
    );

    app.get(
      '/v1/check-results/:checkId/:checkResultId/assets',
      {
        schema: {
          tags,
          summary: "List a result's assets",
          description:
            'Its uploaded artifacts, each with its kind (trace, video, screenshot, pcap, report, log or file) and a signed ' +
            'download link; narrowed by type and by exact name (any case).',
          params: Type.Object({ checkId: Type.String({ format: 'uuid' }), checkResultId: Type.String({ format: 'uuid' }) }),
          querystring: Type.Object({
            type: Type.Optional(Type.Enum(ASSET_TYPES)),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
          }),
          response: { 200: AssetManifestSchema, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const { checkId, checkResultId } = request.params;
        const row = await getCheckResult(ctx.db, request.accountId, checkId, checkResultId);
        if (!row) return sendError(reply, 404, 'Check result not found');
        return assetManifest(artifactEntries(row, ctx.artifactLinks, ctx.baseUrl), request.query);
      },
    );

    app.get(
      '/v1/check-results/:checkId/:checkResultId',
      {
        schema: {
          tags,
          summary: 'Retrieve a check result',
          description:
            'One result with everything its run reported: timings, assertion results, type-specific details ' +
            '(steps, tests, answers, certificate), logs, the error, and signed links to its artifacts.',
          params: Type.Object({ checkId: Type.String({ format: 'uuid' }), checkResultId: Type.String({ format: 'uuid' }) }),
          response: { 200: CheckResultSchema, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const { checkId, checkResultId } = request.params;
        const row = await getCheckResult(ctx.db, request.accountId, checkId, checkResultId);
        if (!row) return sendError(reply, 404, 'Check result not found');
        return checkResultRecord(row, ctx.artifactLinks, ctx.baseUrl);
      },
    );
  };
