import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ServiceContext } from '../context.js';
import { sendError } from '../http-errors.js';
import { DateTimeSchema, ErrorA } from '../schemas/common.js';
import { listCheckStatuses, type CheckStatusRow } from '../store/check-statuses.js';

const tags = ['Check statuses'];

const CheckStatus = Type.Object({
  name: Type.String(),
  checkId: Type.String(),
  hasFailures: Type.Boolean({ description: 'A location of the latest finished run failed' }),
  hasErrors: Type.Boolean({ description: 'A location of the latest finished run could not run the check (or was not run)' }),
  isDegraded: Type.Boolean({ description: 'A location of the latest finished run was degraded' }),
  longestRun: Type.Union([Type.Number(), Type.Null()], { description: 'Longest response time ever recorded, ms' }),
  shortestRun: Type.Union([Type.Number(), Type.Null()], { description: 'Shortest response time ever recorded, ms' }),
  lastRunLocation: Type.Union([Type.String(), Type.Null()]),
  lastCheckRunId: Type.Union([Type.String(), Type.Null()], { description: 'The latest result of that run (GET /v1/check-results/{checkId}/{id})' }),
  sslDaysRemaining: Type.Union([Type.Integer(), Type.Null()], { description: 'URL monitors over HTTPS: whole days until the certificate expires (negative once expired)' }),
  created_at: DateTimeSchema,
  updated_at: Type.Union([DateTimeSchema, Type.Null()], { description: 'When the run the status comes from ended' }),
}, { title: 'CheckStatus' });

function statusRecord(row: CheckStatusRow) {
  return {
    name: row.name,
    checkId: row.check_id,
    hasFailures: row.has_failures ?? false,
    hasErrors: row.has_errors ?? false,
    isDegraded: row.is_degraded ?? false,
    longestRun: row.longest_run,
    shortestRun: row.shortest_run,
    lastRunLocation: row.last_run_location,
    lastCheckRunId: row.last_result_id,
    sslDaysRemaining: row.ssl_days_remaining,
    created_at: row.created_at.toISOString(),
    updated_at: row.last_stopped_at?.toISOString() ?? null,
  };
}

const description =
  "Computed from the stored results: the flags, location and result id come from the check's latest finished run " +
  '(cancelled runs and test runs are passed over); longest and shortest runs over every result that ran; ' +
  "the days left on the certificate from the latest result that carried one. A check that has not run yet has false flags and nulls.";

export const checkStatusRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/check-statuses',
      {
        schema: { tags, summary: 'List all check statuses', description, response: { 200: Type.Array(CheckStatus) } },
      },
      async (request) => (await listCheckStatuses(ctx.db, request.accountId)).map(statusRecord),
    );

    app.get(
      '/v1/check-statuses/:checkId',
      {
        schema: {
          tags,
          summary: 'Retrieve a check status',
          description,
          params: Type.Object({ checkId: Type.String({ format: 'uuid' }) }),
          response: { 200: CheckStatus, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const [row] = await listCheckStatuses(ctx.db, request.accountId, request.params.checkId);
        return row ? statusRecord(row) : sendError(reply, 404, 'Check not found');
      },
    );
  };
