import Type, { type Static } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ServiceContext } from '../context.js';
import { sendError } from '../http-errors.js';
import { startRun } from '../runs.js';
import { waitForSessionEnd } from '../session-completion.js';
import {
  ArtifactEntrySchema,
  artifactEntries,
  ResultAssertionSchema,
  ResultDetailsSchema,
  ResultErrorSchema,
  ResultLogLineSchema,
  ResultTimingsSchema,
} from '../result-records.js';
import { CheckTypeNameSchema, DateTimeSchema, ErrorA, ErrorB } from '../schemas/common.js';
import { getSessionResult } from '../store/check-results.js';
import { findChecksForTrigger, getCheck } from '../store/checks.js';
import { cancelSessionJobs } from '../store/jobs.js';
import { getSessionRecord, listSessionRecords, resultSummary, sessionRecord } from '../store/sessions.js';
import { RUN_SOURCES, RunSourceSchema, SESSION_STATUSES } from '../../protocol/enums.js';

const tags = ['Check sessions'];

const SessionResult = Type.Object(
  {
    checkResultId: Type.String(),
    checkResultLink: Type.String(),
    checkId: Type.String(),
    checkType: CheckTypeNameSchema,
    runLocation: Type.String(),
    resultType: Type.String(),
    hasErrors: Type.Boolean(),
    hasFailures: Type.Boolean(),
    isDegraded: Type.Boolean(),
    aborted: Type.Boolean(),
    isCancelled: Type.Boolean(),
    name: Type.String(),
    responseTime: Type.Union([Type.Number(), Type.Null()]),
    statusCode: Type.Union([Type.Integer(), Type.Null()]),
    timings: Type.Union([ResultTimingsSchema, Type.Null()]),
    error: Type.Union([ResultErrorSchema, Type.Null()]),
    attempt: Type.Integer({ description: '1 for the first run of the location, one more for each retry' }),
    retries: Type.Integer({ description: 'Retries of the location before this result' }),
    startedAt: Type.Union([DateTimeSchema, Type.Null()]),
    stoppedAt: Type.Union([DateTimeSchema, Type.Null()]),
  },
  { title: 'CheckSessionResult', additionalProperties: true },
);

/** One location's result in full: the summary, its assertions, details, logs and artifacts. */
const SessionResultDetail = Type.Object(
  {
    ...SessionResult.properties,
    checkSessionId: Type.String({ format: 'uuid' }),
    assertions: Type.Array(ResultAssertionSchema),
    details: ResultDetailsSchema,
    logs: Type.Array(ResultLogLineSchema),
    artifacts: Type.Array(ArtifactEntrySchema),
  },
  { title: 'CheckSessionResultDetail', additionalProperties: true },
);

export const CheckSession = Type.Object({
  checkSessionId: Type.String(),
  checkSessionLink: Type.String(),
  checkId: Type.String(),
  checkType: CheckTypeNameSchema,
  status: Type.Enum(SESSION_STATUSES),
  startedAt: DateTimeSchema,
  timeElapsed: Type.Number(),
  runLocations: Type.Array(Type.String()),
  name: Type.String(),
  stoppedAt: Type.Union([DateTimeSchema, Type.Null()]),
  runSource: Type.Union([RunSourceSchema, Type.Null()]),
  results: Type.Array(SessionResult),
}, { title: 'CheckSession' });

/** What a caller may say started its runs; SCHEDULER and GROUP_RUN_ALL are the service's own. */
const CALLER_RUN_SOURCES = RUN_SOURCES.filter((source) => source !== 'SCHEDULER' && source !== 'GROUP_RUN_ALL');

const TriggerBody = Type.Object({
  target: Type.Optional(
    Type.Object({
      checkId: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 100 })),
      tag: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 100 })),
      matchTags: Type.Optional(
        Type.Array(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 100 }), {
          minItems: 1,
          maxItems: 100,
          description: 'Activated checks carrying all tags of any one list (the checkly CLI’s checks run --tags)',
        }),
      ),
    }),
  ),
  refreshCache: Type.Optional(
    Type.Boolean({ description: 'Sent by the checkly CLI; this service keeps no cache of selected checks, so it changes nothing' }),
  ),
  runSource: Type.Optional(
    Type.Enum(CALLER_RUN_SOURCES, {
      default: 'TRIGGER_API',
      description: 'Who started the runs: a deployment, the CLI, a test session (TEST_*: the agent sets CI=true)…',
    }),
  ),
});

export const checkSessionRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v2/check-sessions/trigger',
      {
        schema: {
          tags,
          summary: 'Run checks now',
          description: 'Starts one session per matching check, with the runSource given (TRIGGER_API unless told).',
          body: TriggerBody,
          response: { 201: Type.Object({ sessions: Type.Array(CheckSession) }), 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const { target } = request.body;
        if (!target?.checkId && !target?.tag && !target?.matchTags) {
          // Running every check of the account at once is never what a missing target should mean here.
          return sendError(
            reply,
            400,
            'Invalid body: target needs checkId, tag or matchTags: this service runs only the checks a request names ' +
              '(with the checkly CLI: checks run --check-id <id> or --tags <tag>)',
            { target: 'must name checkId, tag or matchTags' },
          );
        }
        const checks = await findChecksForTrigger(ctx.db, request.accountId, target);
        if (checks.length === 0) return sendError(reply, 404, 'No matching checks were found');
        const sessions = [];
        const refused: Record<string, string> = {};
        for (const check of checks) {
          const started = await startRun(ctx, check, request.body.runSource ?? 'TRIGGER_API');
          if ('refused' in started) refused[check.id] = started.refused;
          else sessions.push(await sessionRecord(ctx.db, started.session, ctx.baseUrl));
        }
        if (sessions.length === 0) {
          return sendError(reply, 400, 'None of the matching checks can run', refused);
        }
        return reply.code(201).send({ sessions });
      },
    );

    app.get(
      '/v2/check-sessions/:checkSessionId/completion',
      {
        schema: {
          tags,
          summary: 'Wait for a check session to complete',
          description:
            'Long poll: answers 200 with the session and its results once it has a final status (PASSED, FAILED, DEGRADED, ' +
            'TIMED_OUT, CANCELLED), or 408 when it is still running after maxWaitSeconds; ask again then.',
          params: Type.Object({ checkSessionId: Type.String({ format: 'uuid' }) }),
          querystring: Type.Object({
            maxWaitSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 60, default: 30 })),
          }),
          response: { 200: CheckSession, 404: ErrorA, 408: ErrorA },
        },
      },
      async (request, reply) => {
        const { checkSessionId } = request.params;
        const gone = new AbortController();
        const onClose = () => gone.abort();
        reply.raw.once('close', onClose);
        try {
          const waited = await waitForSessionEnd(
            ctx.db,
            ctx.events,
            request.accountId,
            checkSessionId,
            (request.query.maxWaitSeconds ?? 30) * 1000,
            gone.signal,
          );
          if ('missing' in waited) return sendError(reply, 404, 'Check session not found');
          if ('running' in waited) {
            return sendError(reply, 408, `Check session ${checkSessionId} is still running (${waited.running.status}); ask again`);
          }
          return sessionRecord(ctx.db, waited.finished, ctx.baseUrl);
        } finally {
          reply.raw.off('close', onClose);
        }
      },
    );

    app.get(
      '/v1/check-sessions',
      {
        schema: {
          tags,
          summary: "List a check's sessions",
          description:
            'The sessions (runs) of one check, newest first, each with its results so far; ' +
            'GET /v1/check-results/{checkId}/{checkResultId} has the detail of a result.',
          querystring: Type.Object({
            checkId: Type.String({ format: 'uuid', description: 'The check whose sessions to list' }),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
            page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
          }),
          response: { 200: Type.Array(CheckSession), 400: ErrorA, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const { checkId, limit = 10, page = 1 } = request.query;
        const check = await getCheck(ctx.db, request.accountId, checkId);
        if (!check) return sendError(reply, 404, 'Check not found');
        return listSessionRecords(ctx.db, request.accountId, check.id, { limit, page }, ctx.baseUrl);
      },
    );

    app.get(
      '/v1/check-sessions/:checkSessionId',
      {
        schema: {
          tags,
          summary: 'Retrieve a check session',
          params: Type.Object({ checkSessionId: Type.String({ format: 'uuid' }) }),
          response: { 200: CheckSession, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const record = await getSessionRecord(ctx.db, request.accountId, request.params.checkSessionId, ctx.baseUrl);
        return record ?? sendError(reply, 404, 'Check session not found');
      },
    );

    app.post(
      '/v1/check-sessions/:checkSessionId/cancel',
      {
        schema: {
          tags,
          summary: 'Cancel a check session',
          description:
            'Every location not finished yet gets a cancelled result (error code CANCELLED) and its job is not handed out ' +
            'again; an agent running one stops when it next extends its lease. A session all of whose remaining locations ' +
            'were cancelled is CANCELLED. A finished session is answered as it is.',
          params: Type.Object({ checkSessionId: Type.String({ format: 'uuid' }) }),
          response: { 200: CheckSession, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const { checkSessionId } = request.params;
        const cancelled = await ctx.db.transaction((tx) => cancelSessionJobs(tx, request.accountId, checkSessionId));
        if (!cancelled) return sendError(reply, 404, 'Check session not found');
        for (const session of cancelled.completedSessions) ctx.events.emit('sessionCompleted', session);
        if (cancelled.cancelled > 0) request.log.info({ checkSessionId, jobs: cancelled.cancelled }, 'check session cancelled');
        const record = await getSessionRecord(ctx.db, request.accountId, checkSessionId, ctx.baseUrl);
        return record ?? sendError(reply, 404, 'Check session not found');
      },
    );

    app.get(
      '/v1/check-sessions/:checkSessionId/results/:checkResultId',
      {
        schema: {
          tags,
          summary: 'Retrieve one location result of a session, with assertions, details, logs and artifact links',
          params: Type.Object({
            checkSessionId: Type.String({ format: 'uuid' }),
            checkResultId: Type.String({ format: 'uuid' }),
          }),
          response: {
            200: SessionResultDetail,
            404: ErrorA,
          },
        },
      },
      async (request, reply) => {
        const { checkSessionId, checkResultId } = request.params;
        const row = await getSessionResult(ctx.db, request.accountId, checkSessionId, checkResultId);
        if (!row) return sendError(reply, 404, 'Check result not found');
        return {
          ...resultSummary(row, ctx.baseUrl),
          checkSessionId: row.session_id,
          // Stored as the agent reported them, which the result schema validated.
          assertions: row.assertions as Static<typeof ResultAssertionSchema>[],
          details: row.details,
          logs: row.logs as Static<typeof ResultLogLineSchema>[],
          artifacts: artifactEntries(row, ctx.artifactLinks, ctx.baseUrl),
        };
      },
    );
  };
