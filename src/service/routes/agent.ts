import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  ClaimRequestSchema,
  ClaimResponseSchema,
  GoodbyeRequestSchema,
  HelloRequestSchema,
  HelloResponseSchema,
  LeaseRequestSchema,
  LeaseResponseSchema,
  LeasesRequestSchema,
  LeasesResponseSchema,
  ARTIFACT_NAME_PATTERN,
  MAX_ARTIFACT_BYTES,
  MAX_RESULTS_PER_BATCH,
  ReleasedSchema,
  ReleaseManyRequestSchema,
  ReleaseRequestSchema,
  ResultBatchAnswerSchema,
  ResultBatchSchema as ProtocolResultBatchSchema,
  ResultSchema as ProtocolResultSchema,
  type Job,
} from '../../protocol/agent-api.js';
import { ArtifactTooLargeError, storeArtifact } from '../artifacts.js';
import type { ServiceContext } from '../context.js';
import { sendErrorA, sendErrorB } from '../http-errors.js';
import { waitForJobs } from '../long-poll.js';
import { ErrorA, ErrorB } from '../schemas/common.js';
import { upsertArtifact } from '../store/artifacts.js';
import { artifactWriteAccess, claimJobs, extendLease, recordResults, releaseJobs, renewLeases, sayGoodbye } from '../store/jobs.js';
import { recordAgent, touchAgent, type DestinationPolicyLists } from '../store/private-locations.js';
import { acceptRawBodies } from '../raw-bodies.js';

const tags = ['Agent protocol'];
const JobParams = Type.Object({ jobId: Type.String({ format: 'uuid' }) });
const ArtifactParams = Type.Object({
  jobId: Type.String({ format: 'uuid' }),
  name: Type.String({ pattern: ARTIFACT_NAME_PATTERN }),
});
/** A location's key is shared by its agents: the agent names itself, and only the job's own may write its artifacts. */
const ArtifactQuery = Type.Object({ agentId: Type.String({ format: 'uuid' }) });
const security = [{ privateLocationKey: [] }];
/**
 * A job id names a row of a uuid column: anything else is refused as a bad
 * field (400) rather than left for the database to choke on.
 */
const ResultSchema = Type.Object({ ...ProtocolResultSchema.properties, jobId: Type.String({ format: 'uuid' }) });
const ResultBatchSchema = Type.Object({
  ...ProtocolResultBatchSchema.properties,
  results: Type.Array(ResultSchema, { minItems: 1, maxItems: MAX_RESULTS_PER_BATCH }),
});

export const agentRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    // Agent ids are uuids: compared as text in places, so one spelling for all.
    app.addHook('preHandler', async (request) => {
      const body = request.body as { agentId?: unknown; results?: { agentId?: unknown }[] } | undefined;
      for (const item of [body, ...(Array.isArray(body?.results) ? body.results : [])]) {
        if (item && typeof item.agentId === 'string') item.agentId = item.agentId.toLowerCase();
      }
    });

    app.post(
      '/v1/agent/hello',
      {
        schema: {
          tags,
          security,
          body: HelloRequestSchema,
          response: { 200: HelloResponseSchema, 400: ErrorB, 401: ErrorA, 409: ErrorA },
        },
      },
      async (request, reply) => {
        const location = request.privateLocation;
        if (!(await recordAgent(ctx.db, location.id, request.body))) {
          return sendErrorA(reply, 409, 'This agentId is registered at another private location; choose a new one');
        }
        request.log.info({ agentId: request.body.agentId, location: location.slug_name }, 'agent said hello');
        return {
          privateLocation: { id: location.id, slugName: location.slug_name, name: location.name },
          leaseSeconds: ctx.leaseSeconds,
          maxWaitSeconds: ctx.maxWaitSeconds,
        };
      },
    );

    app.post(
      '/v1/agent/jobs/claim',
      {
        schema: {
          tags,
          security,
          description: 'Long poll: held up to waitSeconds while no job is ready.',
          body: ClaimRequestSchema,
          response: { 200: ClaimResponseSchema, 400: ErrorB, 401: ErrorA, 409: ErrorA },
        },
      },
      async (request, reply) => {
        const location = request.privateLocation;
        const { agentId, max } = request.body;
        const agent = await touchAgent(ctx.db, location.id, agentId);
        if (!agent) return sendErrorA(reply, 409, 'Unknown agentId: say hello first');
        // A client gone before jobs are leased must not take any with it.
        const gone = new AbortController();
        request.raw.once('close', () => gone.abort());
        reply.raw.once('close', () => gone.abort());
        const deadline = Date.now() + Math.min(request.body.waitSeconds, ctx.maxWaitSeconds) * 1000;
        for (;;) {
          if (gone.signal.aborted) return reply.send({ jobs: [] });
          const claimed = await claimJobs(ctx.db, {
            privateLocationId: location.id,
            agentId,
            checkTypes: agent.check_types,
            runtimes: agent.runtimes,
            max,
            lanes: request.body.lanes,
            leaseSeconds: ctx.leaseSeconds,
          });
          if (!claimed) return sendErrorA(reply, 409, 'This agent said goodbye: say hello first');
          const { jobs } = claimed;
          if (jobs.length > 0 && gone.signal.aborted) {
            // The agent stopped waiting while these were leased: nobody will run them.
            await releaseJobs(ctx.db, location.id, agentId, jobs.map((job) => job.jobId));
            ctx.events.emit('jobsQueued', location.id);
            return reply.send({ jobs: [] });
          }
          const remaining = deadline - Date.now();
          if (jobs.length > 0) return { jobs: withDestinationPolicy(jobs, claimed.destinationPolicy) };
          if (remaining <= 0) return { jobs };
          await waitForJobs(ctx.events, location.id, remaining, gone.signal);
        }
      },
    );

    app.post(
      '/v1/agent/jobs/:jobId/lease',
      {
        schema: {
          tags,
          security,
          params: JobParams,
          body: LeaseRequestSchema,
          response: { 200: LeaseResponseSchema, 409: ErrorA },
        },
      },
      async (request, reply) => {
        const expires = await extendLease(
          ctx.db,
          request.privateLocation.id,
          request.params.jobId,
          request.body.agentId,
          ctx.leaseSeconds,
        );
        if (!expires) return sendErrorA(reply, 409, 'The job is no longer leased to this agent');
        return { leaseExpiresAt: expires.toISOString() };
      },
    );

    app.post(
      '/v1/agent/leases',
      {
        schema: {
          tags,
          security,
          description:
            'Protocol addition: one heartbeat renewing the lease of every job the agent holds, running or waiting; ' +
            'running ones are marked started. Answers the ids that are no longer this agent\'s.',
          body: LeasesRequestSchema,
          response: { 200: LeasesResponseSchema, 400: ErrorB, 409: ErrorA },
        },
      },
      async (request, reply) => {
        const location = request.privateLocation;
        if (!(await touchAgent(ctx.db, location.id, request.body.agentId))) {
          return sendErrorA(reply, 409, 'Unknown agentId: say hello first');
        }
        const { expires, lost, cancelled } = await renewLeases(ctx.db, location.id, request.body, ctx.leaseSeconds);
        return { leaseExpiresAt: expires.toISOString(), lost, cancelled };
      },
    );

    app.post(
      '/v1/agent/jobs/:jobId/result',
      {
        schema: {
          tags,
          security,
          params: JobParams,
          body: ResultSchema,
          response: { 200: Type.Object({ recorded: Type.Boolean() }), 404: ErrorA, 409: ErrorA },
        },
      },
      async (request, reply) => {
        if (request.body.jobId !== request.params.jobId) {
          return sendErrorB(reply, 400, 'Invalid body: jobId does not match the path', {
            jobId: 'must equal the jobId in the path',
          });
        }
        const { outcomes, completedSessions, retriesQueued } = await ctx.db.transaction((tx) =>
          recordResults(tx, request.privateLocation.id, [request.body]),
        );
        for (const session of completedSessions) ctx.events.emit('sessionCompleted', session);
        wakeForRetries(ctx, retriesQueued);
        const outcome = outcomes[0]!;
        switch (outcome.kind) {
          case 'not-found':
            return sendErrorA(reply, 404, 'Job not found at this private location');
          case 'conflict':
            return sendErrorA(reply, 409, `Result refused: ${outcome.reason}`);
          case 'duplicate':
            return { recorded: false };
          case 'recorded':
            return { recorded: true };
        }
      },
    );

    app.post(
      '/v1/agent/results',
      {
        // A hundred results with their logs outgrow the default body limit.
        bodyLimit: 32 * 1024 * 1024,
        schema: {
          tags,
          security,
          description:
            'Protocol addition: up to 100 results in one call, recorded in one transaction. ' +
            'Each gets its own outcome: recorded, duplicate (the same result again), conflict (another agent\'s job) ' +
            'or not-found; the call itself answers 200.',
          body: ResultBatchSchema,
          response: { 200: ResultBatchAnswerSchema, 400: ErrorB },
        },
      },
      async (request) => {
        const { results } = request.body;
        const { outcomes, completedSessions, retriesQueued } = await ctx.db.transaction((tx) =>
          recordResults(tx, request.privateLocation.id, results),
        );
        for (const session of completedSessions) ctx.events.emit('sessionCompleted', session);
        wakeForRetries(ctx, retriesQueued);
        return {
          outcomes: outcomes.map((outcome, index) => ({
            jobId: results[index]!.jobId,
            outcome: outcome.kind,
            ...(outcome.kind === 'conflict' ? { message: outcome.reason } : {}),
          })),
        };
      },
    );

    // Artifacts are raw bytes of any type (a report may well be JSON), streamed
    // to disk by the route itself rather than parsed.
    await app.register(async (scope) => {
      const raw = scope.withTypeProvider<TypeBoxTypeProvider>();
      acceptRawBodies(raw);
      raw.put(
        '/v1/agent/jobs/:jobId/artifacts/:name',
        {
          schema: {
            tags,
            security,
            params: ArtifactParams,
            querystring: ArtifactQuery,
            description:
              `Raw bytes; at most ${MAX_ARTIFACT_BYTES} bytes (150 MB). ` +
              'Only the agent the job is leased to (the one whose result would be accepted) may write them: 409 otherwise.',
            response: {
              201: Type.Object({ name: Type.String(), size: Type.Integer() }),
              400: ErrorB,
              404: ErrorA,
              409: ErrorA,
              413: ErrorA,
            },
          },
        },
        async (request, reply) => {
          const declared = Number(request.headers['content-length'] ?? NaN);
          if (declared > MAX_ARTIFACT_BYTES) {
            // Answer without reading the body; closing spares both sides the upload.
            reply.header('connection', 'close');
            return sendErrorA(reply, 413, `Artifacts are limited to ${MAX_ARTIFACT_BYTES} bytes`);
          }
          const { jobId, name } = request.params;
          const access = await artifactWriteAccess(ctx.db, jobId, request.privateLocation.id, request.query.agentId.toLowerCase());
          if (access === 'not-found') return sendErrorA(reply, 404, 'Job not found at this private location');
          if (access === 'not-leased') return sendErrorA(reply, 409, 'The job is not leased to this agent');
          const id = randomUUID();
          try {
            const stored = await storeArtifact(
              // No content type and no length: Fastify parses nothing and leaves no stream.
              (request.body as Readable | undefined) ?? Readable.from([]),
              join(ctx.artifactsDir, jobId),
              name,
              MAX_ARTIFACT_BYTES,
            );
            await upsertArtifact(ctx.db, {
              id,
              jobId,
              name,
              contentType: request.headers['content-type'] ?? 'application/octet-stream',
              size: stored.size,
              path: stored.path,
            });
            return reply.code(201).send({ name, size: stored.size });
          } catch (error) {
            if (error instanceof ArtifactTooLargeError) {
              reply.header('connection', 'close');
              return sendErrorA(reply, 413, `Artifacts are limited to ${MAX_ARTIFACT_BYTES} bytes`);
            }
            throw error;
          }
        },
      );
    });

    app.post(
      '/v1/agent/jobs/:jobId/release',
      {
        schema: {
          tags,
          security,
          params: JobParams,
          body: ReleaseRequestSchema,
          response: { 204: Type.Null(), 409: ErrorA },
        },
      },
      async (request, reply) => {
        const released = await releaseJobs(ctx.db, request.privateLocation.id, request.body.agentId, [request.params.jobId]);
        if (released === 0) return sendErrorA(reply, 409, 'The job is not leased to this agent');
        request.log.info({ jobId: request.params.jobId, reason: request.body.reason }, 'job released');
        ctx.events.emit('jobsQueued', request.privateLocation.id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v1/agent/jobs/release',
      {
        schema: {
          tags,
          security,
          description: 'Protocol addition: releases several jobs in one call; each is offered again at once.',
          body: ReleaseManyRequestSchema,
          response: { 200: ReleasedSchema, 400: ErrorB },
        },
      },
      async (request) => {
        const { agentId, jobIds, reason } = request.body;
        const released = await releaseJobs(ctx.db, request.privateLocation.id, agentId, jobIds);
        if (released > 0) {
          request.log.info({ agentId, jobs: released, reason }, 'jobs released');
          ctx.events.emit('jobsQueued', request.privateLocation.id);
        }
        return { released };
      },
    );

    app.post(
      '/v1/agent/goodbye',
      {
        schema: {
          tags,
          security,
          description:
            'Protocol addition: the agent is leaving. Every job leased to it but `keep` is offered again at once, ' +
            'those of a claim still in flight included; its claims are refused until it says hello again.',
          body: GoodbyeRequestSchema,
          response: { 200: ReleasedSchema, 400: ErrorB, 409: ErrorA },
        },
      },
      async (request, reply) => {
        const { agentId, keep, reason } = request.body;
        const released = await sayGoodbye(ctx.db, request.privateLocation.id, agentId, keep);
        if (released === undefined) return sendErrorA(reply, 409, 'Unknown agentId');
        request.log.info({ agentId, released, kept: keep.length, reason }, 'agent said goodbye');
        if (released > 0) ctx.events.emit('jobsQueued', request.privateLocation.id);
        return { released };
      },
    );
  };

/** Long-polling agents at a retry's location hear of it once its backoff has passed. */
/** Each job carries its location's destination policy; a location without one sends none (anywhere). */
function withDestinationPolicy(jobs: Job[], { allowed, denied }: DestinationPolicyLists): Job[] {
  if (allowed.length === 0 && denied.length === 0) return jobs;
  return jobs.map((job) => ({ ...job, destinationPolicy: { allowed, denied } }));
}

function wakeForRetries(ctx: ServiceContext, retries: readonly { privateLocationId: string; delaySeconds: number }[]): void {
  for (const { privateLocationId, delaySeconds } of retries) {
    setTimeout(() => ctx.events.emit('jobsQueued', privateLocationId), delaySeconds * 1000).unref();
  }
}
