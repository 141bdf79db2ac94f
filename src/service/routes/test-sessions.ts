/**
 * Test sessions: the runs `checkly test` and `checkly trigger` start, the
 * list and detail `checkly test-sessions` reads, and the MQTT event stream
 * the CLI follows a run on (registered here, served at /mqtt).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { ServiceContext } from '../context.js';
import { sendError } from '../http-errors.js';
import { testRunEvents } from '../mqtt/test-run-events.js';
import { ChecklyResultFields, checklyResultFields } from '../checkly-result-fields.js';
import { artifactEntries, checkResultRecord, CheckResultSchema } from '../result-records.js';
import { ErrorA, ErrorB } from '../schemas/common.js';
import { getSessionResult } from '../store/check-results.js';
import { cancelSessionJobs } from '../store/jobs.js';
import {
  getTestSessionSummary,
  listTestSessionSummaries,
  testSessionCheckSessionIds,
  testSessionResult,
  testSessionResults,
  testSessionStart,
  type TestSessionProvider,
} from '../store/test-sessions.js';
import { parseCheckRunJobs } from '../test-sessions/check-run-jobs.js';
import { Detail, IdParams, ListEntry, ListQuery, ResultParams, RunBody, Started, TriggerBody } from '../test-sessions/schemas.js';
import { testSessionDetail, testSessionLink, testSessionListEntry } from '../test-sessions/records.js';
import { startTestRun, startTriggerRun, type Refusal } from '../test-sessions/start.js';
import { checklyStorageRoutes } from './checkly-storage.js';

const tags = ['Test sessions'];
/** Every check of a project, scripts and their files included, as JSON (sent gzipped). */
const RUN_BODY_LIMIT = 64 * 1024 * 1024;
/** The longest a completion long poll is held. */
const MAX_COMPLETION_WAIT_SECONDS = 30;
const COMPLETION_POLL_MS = 500;

function refuse(reply: FastifyReply, refusal: Refusal): FastifyReply {
  return sendError(reply, 400, refusal.refused, refusal.attributes ?? {});
}

/** The CLI sends the run gzipped; anything else comes as it is. */
function gunzipped(encoding: string | string[] | undefined, payload: Readable): Readable {
  if (encoding !== 'gzip') return payload;
  const gunzip = Object.assign(createGunzip(), { receivedEncodedLength: 0 });
  // Fastify compares content-length with the bytes that came over the wire, not the inflated ones.
  payload.on('data', (chunk: Buffer) => (gunzip.receivedEncodedLength += chunk.length));
  payload.on('error', (error) => gunzip.destroy(error));
  return payload.pipe(gunzip);
}

export const testSessionRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    await app.register(testRunEvents(ctx));
    await app.register(checklyStorageRoutes(ctx));

    app.post(
      '/v1/test-sessions/run',
      {
        bodyLimit: RUN_BODY_LIMIT,
        preParsing: async (request, _reply, payload) => gunzipped(request.headers['content-encoding'], payload),
        schema: {
          tags,
          summary: 'Run checks the CLI defines (`checkly test`)',
          description:
            'Each job is validated as its check type is by the checks API and runs once at the private location named ' +
            '(Outpost has no public locations). Nothing is stored as a check. Results are published over MQTT (/mqtt) ' +
            'on account/{accountId}/ad-hoc-check-results/{checkRunSuiteId}/{sequenceId}/{checkRunId}/result. ' +
            'Content-Encoding: gzip is accepted.',
          body: RunBody,
          response: { 202: Started, 400: ErrorB },
        },
      },
      async (request, reply) => {
        const parsed = parseCheckRunJobs(request.body.checkRunJobs);
        if ('problems' in parsed) {
          return refuse(reply, { refused: 'Invalid body: check run jobs are malformed', attributes: parsed.problems });
        }
        const started = await startTestRun(ctx, request.accountId, {
          ...request.body,
          checkRunJobs: parsed.jobs,
          testRetryStrategy: firstRetryStrategy(parsed.jobs),
        });
        if ('refused' in started) return refuse(reply, started);
        request.log.info({ testSessionId: started.session.id, checks: parsed.jobs.length }, 'test session started');
        return reply.code(202).send({
          ...(started.session.recorded ? { testSessionId: started.session.id } : {}),
          sequenceIds: started.sequenceIds,
        });
      },
    );

    app.post(
      '/next/test-sessions/trigger',
      {
        schema: {
          tags,
          summary: 'Run stored checks (`checkly trigger`)',
          description:
            'Checks with all tags of one of targetTags (activated ones) or one of the ids in checkId; neither: every activated ' +
            'check. They run once at the private location named, with the environment variables given over theirs. ' +
            'None matching: 403 with errorCode ERR_NO_MATCHING_CHECKS, as the CLI expects.',
          body: TriggerBody,
          response: {
            200: Type.Object({
              ...Started.properties,
              checks: Type.Array(
                Type.Object({ id: Type.String(), name: Type.String(), checkType: Type.String(), tags: Type.Array(Type.String()) }),
              ),
            }),
            400: ErrorB,
          },
        },
      },
      async (request, reply) => {
        const started = await startTriggerRun(ctx, request.accountId, request.body);
        if (!started) {
          // Undeclared above: the route's error shape would drop the errorCode the CLI reads.
          return (reply as FastifyReply)
            .code(403)
            .send({ statusCode: 403, error: 'Forbidden', message: 'No matching checks were found', errorCode: 'ERR_NO_MATCHING_CHECKS' });
        }
        if ('refused' in started) return refuse(reply, started);
        return {
          ...(started.session.recorded ? { testSessionId: started.session.id } : {}),
          sequenceIds: started.sequenceIds,
          checks: started.checks.map((check) => ({ id: check.id, name: check.name, checkType: check.check_type, tags: check.tags })),
        };
      },
    );

    app.get(
      '/v1/test-sessions',
      {
        schema: {
          tags,
          summary: 'List recorded test sessions',
          description:
            'Newest first; nextId is the cursor of the next page. Filters: from/to (Unix seconds), statuses[], providers[] ' +
            '(API: checkly test, TRIGGER: checkly trigger), branches[] and users[] (commit owner), textSearch (in the name).',
          querystring: ListQuery,
          response: {
            200: Type.Object({ length: Type.Integer(), entries: Type.Array(ListEntry), nextId: Type.Union([Type.String(), Type.Null()]) }),
            400: ErrorA,
          },
        },
      },
      async (request, reply) => {
        const query = request.query;
        const limit = query.limit ?? 20;
        if (query.errorGroupId !== undefined) return { length: 0, entries: [], nextId: null };
        let after: { startedAt: Date; id: string } | undefined;
        if (query.nextId) {
          const startedAt = await testSessionStart(ctx.db, request.accountId, query.nextId);
          if (!startedAt) return sendError(reply, 400, 'nextId is not a cursor of this account');
          after = { startedAt, id: query.nextId };
        }
        const providers = query['providers[]']?.filter((provider): provider is TestSessionProvider => provider === 'API' || provider === 'TRIGGER');
        const rows = await listTestSessionSummaries(ctx.db, request.accountId, {
          limit,
          after,
          from: query.from === undefined ? undefined : new Date(query.from * 1000),
          to: query.to === undefined ? undefined : new Date(query.to * 1000),
          statuses: query['statuses[]'],
          providers,
          branches: query['branches[]'],
          users: query['users[]'],
          noUsers: query.noUsers,
          search: query.textSearch,
        });
        const page = rows.slice(0, limit);
        return {
          length: page.length,
          entries: page.map(testSessionListEntry),
          nextId: rows.length > limit ? page.at(-1)!.id : null,
        };
      },
    );

    const detailOf = async (accountId: string, id: string) => {
      const session = await getTestSessionSummary(ctx.db, accountId, id);
      return session && testSessionDetail(session, await testSessionResults(ctx.db, id), ctx.baseUrl);
    };

    app.get(
      '/v1/test-sessions/:id',
      {
        schema: {
          tags,
          summary: 'Retrieve a recorded test session with its results',
          params: IdParams,
          response: { 200: Detail, 404: ErrorA },
        },
      },
      async (request, reply) => (await detailOf(request.accountId, request.params.id)) ?? sendError(reply, 404, 'Test session not found'),
    );

    app.get(
      '/v1/test-sessions/:id/completion',
      {
        schema: {
          tags,
          summary: 'Wait for a test session to finish',
          description: 'Answers the session once it is no longer RUNNING; 408 when it still runs after maxWaitSeconds: ask again.',
          params: IdParams,
          querystring: Type.Object({
            maxWaitSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_COMPLETION_WAIT_SECONDS, default: MAX_COMPLETION_WAIT_SECONDS })),
          }),
          response: { 200: Detail, 404: ErrorA, 408: ErrorA },
        },
      },
      async (request, reply) => {
        const deadline = Date.now() + (request.query.maxWaitSeconds ?? MAX_COMPLETION_WAIT_SECONDS) * 1000;
        const gone = new AbortController();
        request.raw.once('close', () => gone.abort());
        for (;;) {
          const detail = await detailOf(request.accountId, request.params.id);
          if (!detail) return sendError(reply, 404, 'Test session not found');
          if (detail.status !== 'RUNNING') return detail;
          if (Date.now() >= deadline || gone.signal.aborted) return sendError(reply, 408, 'The test session is still running');
          await sleep(Math.min(COMPLETION_POLL_MS, Math.max(0, deadline - Date.now())), undefined, { signal: gone.signal }).catch(() => undefined);
        }
      },
    );

    app.get(
      '/v1/test-sessions/:id/results/:resultId',
      {
        schema: {
          tags,
          summary: 'Retrieve one result of a recorded test session',
          description:
            'The check-results record, with assertions, details, logs and signed artifact links, and for API checks the ' +
            'exchange as apiCheckResult.',
          params: ResultParams,
          response: { 200: Type.Object({ ...CheckResultSchema.properties, ...ChecklyResultFields }), 404: ErrorA },
        },
      },
      async (request, reply) => {
        const found = await testSessionResult(ctx.db, request.accountId, request.params.id, request.params.resultId);
        const row = found && (await getSessionResult(ctx.db, request.accountId, found.session_id, found.id));
        if (!row) return sendError(reply, 404, 'Test session result not found');
        // In a test session a check's run is known by the sequence id its MQTT topics carried.
        return { ...checkResultRecord(row, ctx.artifactLinks, ctx.baseUrl), ...checklyResultFields(row), sequenceId: found.sequence_id };
      },
    );

    app.post(
      '/v1/test-sessions/:id/cancel',
      {
        schema: {
          tags,
          summary: 'Cancel what is left of a test session',
          description: 'Each check not finished gets a cancelled result; an agent running one stops at its next lease extension.',
          params: IdParams,
          response: { 200: Type.Object({ testSessionId: Type.String(), cancelled: Type.Integer() }), 404: ErrorB },
        },
      },
      async (request, reply) => {
        const checkSessions = await testSessionCheckSessionIds(ctx.db, request.accountId, request.params.id);
        if (!checkSessions) return sendError(reply, 404, 'Test session not found');
        let cancelled = 0;
        for (const checkSessionId of checkSessions) {
          const outcome = await ctx.db.transaction((tx) => cancelSessionJobs(tx, request.accountId, checkSessionId));
          if (!outcome) continue;
          cancelled += outcome.cancelled;
          for (const session of outcome.completedSessions) ctx.events.emit('sessionCompleted', session);
        }
        return { testSessionId: request.params.id, cancelled };
      },
    );

    app.get(
      '/next/test-sessions/:id/link',
      {
        schema: {
          tags,
          summary: "A test session's link",
          description: 'Its address in this API: Outpost has no web page of a test session.',
          params: IdParams,
          response: { 200: Type.Object({ link: Type.String() }), 404: ErrorA },
        },
      },
      async (request, reply) =>
        (await getTestSessionSummary(ctx.db, request.accountId, request.params.id))
          ? { link: testSessionLink(ctx.baseUrl, request.params.id) }
          : sendError(reply, 404, 'Test session not found'),
    );

    app.get(
      '/next/test-sessions/:id/results/:resultId/links',
      {
        schema: {
          tags,
          summary: "A test result's links",
          description: 'The result in this API, and signed links of its Playwright traces, videos and screenshots.',
          params: ResultParams,
          response: {
            200: Type.Object({
              testResultLink: Type.String(),
              testTraceLinks: Type.Array(Type.String()),
              videoLinks: Type.Array(Type.String()),
              screenshotLinks: Type.Array(Type.String()),
            }),
            404: ErrorA,
          },
        },
      },
      async (request, reply) => {
        const { id, resultId } = request.params;
        const found = await testSessionResult(ctx.db, request.accountId, id, resultId);
        const row = found && (await getSessionResult(ctx.db, request.accountId, found.session_id, found.id));
        if (!row) return sendError(reply, 404, 'Test session result not found');
        const artifacts = artifactEntries(row, ctx.artifactLinks, ctx.baseUrl);
        const links = (pattern: RegExp) => artifacts.flatMap((entry) => (entry.link && pattern.test(entry.name) ? [entry.link] : []));
        return {
          testResultLink: `${testSessionLink(ctx.baseUrl, id)}/results/${resultId}`,
          testTraceLinks: artifacts.flatMap((entry) => (entry.traceViewerUrl ? [entry.traceViewerUrl] : [])),
          videoLinks: links(/\.webm$/i),
          screenshotLinks: links(/\.(png|jpe?g)$/i),
        };
      },
    );
  };

/** The CLI puts the run's retry strategy (--retries) on every job; the checks' own are not used in a test run. */
function firstRetryStrategy(jobs: readonly Record<string, unknown>[]): Record<string, unknown> | null {
  const strategy = jobs[0]?.testRetryStrategy;
  return typeof strategy === 'object' && strategy !== null ? (strategy as Record<string, unknown>) : null;
}
