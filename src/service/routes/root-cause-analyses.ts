import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { speaksChecklyDialect } from '../auth.js';
import type { ServiceContext } from '../context.js';
import { acceptEmptyFormBodies } from '../empty-form-body.js';
import { findCheckErrorGroup } from '../error-groups/check-error-groups.js';
import { sendError } from '../http-errors.js';
import { ChecklyAnalysisSchema, checklyAnalysis, isCompleted } from '../rca/checkly-dialect.js';
import { failedResults, groupErrors, type ErrorGroup } from '../rca/error-groups.js';
import { AnalysisSchema, type AnalysisInput } from '../rca/provider.js';
import { ErrorA } from '../schemas/common.js';
import { getCheck, type CheckRow } from '../store/checks.js';
import { createAnalysis, getAnalysis, lastPassedBefore } from '../store/root-cause-analyses.js';
import { getSessionRow } from '../store/sessions.js';

const tags = ['Root cause analyses'];
const Uuid = Type.String({ format: 'uuid' });
const GroupId = Type.String({ pattern: '^[0-9a-f]{24}$' });

const ErrorGroupSchema = Type.Object({
  id: Type.String(),
  checkId: Type.String(),
  checkSessionId: Type.Union([Type.String(), Type.Null()]),
  fingerprint: Type.String(),
  code: Type.String(),
  message: Type.String(),
  count: Type.Integer(),
  locations: Type.Array(Type.String()),
  firstSeen: Type.String(),
  lastSeen: Type.String(),
});
const Pending = Type.Object({ id: Type.String(), status: Type.Literal('PENDING') });
const AnalysisRequest = Type.Union([
  Type.Object({
    userContext: Type.Optional(
      Type.String({ minLength: 1, maxLength: 10_000, description: 'What the analysis should take into account; handed to the provider' }),
    ),
  }),
  Type.Null(),
]);
const AnalysisRecordSchema = Type.Object({
  id: Type.String(),
  status: Type.Literal('COMPLETED'),
  subject: Type.String(),
  checkId: Type.Union([Type.String(), Type.Null()]),
  checkSessionId: Type.Union([Type.String(), Type.Null()]),
  errorGroup: ErrorGroupSchema,
  provider: Type.String(),
  model: Type.String(),
  analysis: AnalysisSchema,
  created_at: Type.String(),
  completed_at: Type.String(),
});

export const rootCauseAnalysisRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    acceptEmptyFormBodies(app);

    type Grouped = { check: CheckRow; groups: ReturnType<typeof groupErrors> } | { missing: string };

    /** A check's error groups (its recent failed results), or what of the path is not the account's. */
    async function checkGroups(accountId: string, checkId: string): Promise<Grouped> {
      const check = await getCheck(ctx.db, accountId, checkId);
      if (!check) return { missing: 'Check not found' };
      return { check, groups: groupErrors(await failedResults(ctx.db, accountId, { checkId: check.id }), { checkSessionId: null }) };
    }

    /** A test session's error groups (its failed location results), with the session's check. */
    async function sessionGroups(accountId: string, sessionId: string): Promise<Grouped> {
      const session = await getSessionRow(ctx.db, accountId, sessionId);
      if (!session) return { missing: 'Check session not found' };
      const check = await getCheck(ctx.db, accountId, session.check_id);
      if (!check) return { missing: 'Check not found' };
      const results = await failedResults(ctx.db, accountId, { checkSessionId: session.id });
      return { check, groups: groupErrors(results, { checkSessionId: session.id }) };
    }

    /** Starts an analysis of `groupId` among `groups`; answers 202 PENDING, or 404 for a group that is not there. */
    async function start(
      reply: FastifyReply,
      accountId: string,
      check: CheckRow,
      subject: AnalysisInput['subject'],
      groups: ReturnType<typeof groupErrors>,
      groupId: string,
      userContext: string | undefined,
    ) {
      const found = groups.find(({ group }) => group.id === groupId);
      if (!found) return sendError(reply, 404, 'Error group not found');
      const input: AnalysisInput = {
        subject,
        check: { id: check.id, name: check.name, checkType: check.check_type },
        errorGroup: found.group,
        results: found.sample,
        lastPassedAt: await lastPassedBefore(ctx.db, accountId, check.id, found.group.firstSeen),
        ...(userContext === undefined ? {} : { userContext }),
      };
      const id = await createAnalysis(ctx.db, accountId, input);
      ctx.wakeAnalyses();
      return reply.code(202).send({ id, status: 'PENDING' as const });
    }

    app.get(
      '/v1/checks/:checkId/error-groups',
      {
        schema: {
          tags,
          summary: "List a check's error groups",
          description: 'Its failed results of the last 30 days grouped by error (code and message, or the failed assertion), most frequent first.',
          params: Type.Object({ checkId: Uuid }),
          response: { 200: Type.Array(ErrorGroupSchema), 404: ErrorA },
        },
      },
      async (request, reply) => {
        const found = await checkGroups(request.accountId, request.params.checkId);
        if ('missing' in found) return sendError(reply, 404, found.missing);
        return found.groups.map(({ group }): ErrorGroup => group);
      },
    );

    app.post(
      '/v1/checks/:checkId/error-groups/:errorGroupId/root-cause-analyses',
      {
        schema: {
          tags,
          summary: "Analyse a check's error group",
          description: 'Answers 202 with the analysis id; GET /v1/root-cause-analyses/{id} answers 202 until it is written.',
          params: Type.Object({ checkId: Uuid, errorGroupId: GroupId }),
          body: AnalysisRequest,
          response: { 202: Pending, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const found = await checkGroups(request.accountId, request.params.checkId);
        if ('missing' in found) return sendError(reply, 404, found.missing);
        const { errorGroupId } = request.params;
        return start(reply, request.accountId, found.check, 'CHECK_ERROR_GROUP', found.groups, errorGroupId, request.body?.userContext);
      },
    );

    app.post(
      '/v1/root-cause-analyses/error-groups/:errorGroupId',
      {
        schema: {
          tags,
          summary: 'Analyse an error group of any check',
          description:
            'As POST /v1/checks/{checkId}/error-groups/{errorGroupId}/root-cause-analyses, for a group of any check of the account ' +
            'that failed in the last 30 days: what `checkly rca run` calls.',
          params: Type.Object({ errorGroupId: GroupId }),
          body: AnalysisRequest,
          response: { 202: Pending, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const group = await findCheckErrorGroup(ctx.db, request.accountId, request.params.errorGroupId);
        if (!group) return sendError(reply, 404, 'Error group not found');
        const found = await checkGroups(request.accountId, group.checkId);
        if ('missing' in found) return sendError(reply, 404, found.missing);
        return start(reply, request.accountId, found.check, 'CHECK_ERROR_GROUP', found.groups, group.id, request.body?.userContext);
      },
    );

    app.get(
      '/v1/check-sessions/:checkSessionId/error-groups',
      {
        schema: {
          tags,
          summary: "List a test session's error groups",
          description: "The session's failed location results grouped by error.",
          params: Type.Object({ checkSessionId: Uuid }),
          response: { 200: Type.Array(ErrorGroupSchema), 404: ErrorA },
        },
      },
      async (request, reply) => {
        const found = await sessionGroups(request.accountId, request.params.checkSessionId);
        if ('missing' in found) return sendError(reply, 404, found.missing);
        return found.groups.map(({ group }): ErrorGroup => group);
      },
    );

    app.post(
      '/v1/check-sessions/:checkSessionId/error-groups/:errorGroupId/root-cause-analyses',
      {
        schema: {
          tags,
          summary: "Analyse a test session's error group",
          description: 'Answers 202 with the analysis id; GET /v1/root-cause-analyses/{id} answers 202 until it is written.',
          params: Type.Object({ checkSessionId: Uuid, errorGroupId: GroupId }),
          body: AnalysisRequest,
          response: { 202: Pending, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const found = await sessionGroups(request.accountId, request.params.checkSessionId);
        if ('missing' in found) return sendError(reply, 404, found.missing);
        const { errorGroupId } = request.params;
        return start(reply, request.accountId, found.check, 'TEST_SESSION_ERROR_GROUP', found.groups, errorGroupId, request.body?.userContext);
      },
    );

    app.get(
      '/v1/root-cause-analyses/:id',
      {
        schema: {
          tags,
          summary: 'Retrieve a root cause analysis',
          description:
            '202 {id, status: PENDING} while it is being written; 200 with the full record once COMPLETED. ' +
            'A caller that names its account in x-checkly-account gets it as the public checkly CLI reads it.',
          params: Type.Object({ id: Uuid }),
          response: { 200: Type.Union([ChecklyAnalysisSchema, AnalysisRecordSchema]), 202: Pending, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const record = await getAnalysis(ctx.db, request.accountId, request.params.id);
        if (!record) return sendError(reply, 404, 'Root cause analysis not found');
        if (record.status === 'PENDING') return reply.code(202).send({ id: record.id, status: 'PENDING' as const });
        if (!isCompleted(record)) throw new Error(`analysis ${record.id} is COMPLETED without its result`);
        if (speaksChecklyDialect(request)) return reply.code(200).send(checklyAnalysis(record));
        return reply.code(200).send({ ...record, status: 'COMPLETED' as const });
      },
    );
  };
