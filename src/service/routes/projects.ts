import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ServiceContext } from '../context.js';
import { sendError } from '../http-errors.js';
import { ConstructInvalidError } from '../projects/construct-invalid-error.js';
import { ConstructRefusedError } from '../projects/construct-refused-error.js';
import { deployProject } from '../projects/deploy.js';
import { destroyProject } from '../projects/destroy.js';
import { gunzipBodies } from '../projects/gzip-bodies.js';
import { ProjectPayloadSchema } from '../projects/payload.js';
import { ErrorA, ErrorB } from '../schemas/common.js';
import { getDeployment, type DeploymentRow } from '../store/projects.js';

const tags = ['Projects'];
/** A project with many script checks and their files, inflated. */
const DEPLOY_BODY_LIMIT_BYTES = 64 * 1024 * 1024;

const DeployQuery = Type.Object({
  dryRun: Type.Optional(Type.Boolean({ default: false, description: 'Answer the diff and change nothing' })),
  scheduleOnDeploy: Type.Optional(
    Type.Boolean({ default: true, description: 'false: new checks first run one frequency after the deploy instead of at once' }),
  ),
  preserveResources: Type.Optional(
    Type.Boolean({ default: false, description: 'Keep the records of constructs removed from code (DETACHED) instead of deleting them' }),
  ),
});
const DestroyQuery = Type.Object({
  preserveResources: Type.Optional(Type.Boolean({ default: false })),
  dryRun: Type.Optional(Type.Boolean({ default: false })),
});
const ProjectParams = Type.Object({ logicalId: Type.String({ minLength: 1, maxLength: 255 }) });
const DeploymentParams = Type.Object({ logicalId: Type.String({ minLength: 1, maxLength: 255 }), id: Type.String({ format: 'uuid' }) });

const DiffSchema = Type.Array(
  Type.Object({
    type: Type.String(),
    logicalId: Type.String(),
    physicalId: Type.Union([Type.String(), Type.Number(), Type.Null()]),
    action: Type.Enum(['CREATE', 'UPDATE', 'DELETE', 'DETACHED']),
  }),
);
const Preview = Type.Object({ diff: DiffSchema });
const Deployment = Type.Object({
  id: Type.String(),
  projectLogicalId: Type.String(),
  kind: Type.Enum(['DEPLOY', 'DESTROY']),
  status: Type.String({ description: 'SUCCEEDED: deploys apply in one transaction before the answer' }),
  progress: Type.Integer(),
  result: Type.Union([Preview, Type.Null()]),
  error: Type.Null(),
  created_at: Type.String(),
});

function deploymentResponse(row: DeploymentRow) {
  return {
    id: row.id,
    projectLogicalId: row.project_logical_id,
    kind: row.kind,
    status: row.status,
    progress: 100,
    result: (row.result ?? null) as { diff: never[] } | null,
    error: null,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * `checkly deploy` and `checkly destroy`: a project's constructs become the
 * account's checks, groups and alert channels in one transaction. The
 * deployment the CLI then follows has finished by the time it is answered.
 */
export const projectRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addHook('preParsing', gunzipBodies);

    app.post(
      '/v1/projects/deploy',
      {
        bodyLimit: DEPLOY_BODY_LIMIT_BYTES,
        schema: {
          tags,
          summary: 'Deploy a project (checkly deploy)',
          description:
            'The body is the CLI\'s project bundle, plain or `Content-Encoding: gzip`. A dry run answers the diff; a deploy answers its finished deployment (202). ' +
            'A construct Outpost cannot run, or whose values the matching API route would refuse, fails the whole deploy (400) and changes nothing.',
          querystring: DeployQuery,
          body: ProjectPayloadSchema,
          response: { 200: Preview, 202: Deployment, 400: ErrorB },
        },
      },
      async (request, reply) => {
        try {
          const outcome = await deployProject(ctx, request.accountId, request.body, {
            dryRun: request.query.dryRun ?? false,
            preserveResources: request.query.preserveResources ?? false,
            scheduleOnDeploy: request.query.scheduleOnDeploy ?? true,
          });
          if (!outcome.deployment) return { diff: outcome.diff };
          return reply.code(202).send(deploymentResponse(outcome.deployment));
        } catch (error) {
          if (error instanceof ConstructRefusedError) return sendError(reply, 400, error.message, { code: error.code });
          if (error instanceof ConstructInvalidError) return sendError(reply, 400, error.message, { code: error.code, ...error.attributes });
          throw error;
        }
      },
    );

    app.delete(
      '/v1/projects/:logicalId',
      {
        schema: {
          tags,
          summary: 'Destroy a project (checkly destroy)',
          description: 'Deletes the records the project\'s constructs became (or, with preserveResources, keeps them) and the project. An unknown project answers {} (already gone).',
          params: ProjectParams,
          querystring: DestroyQuery,
          response: { 200: Type.Object({}, { additionalProperties: false, description: 'No project has this logical id: nothing to destroy' }), 202: Deployment, 400: ErrorB },
        },
      },
      async (request, reply) => {
        if (request.query.dryRun) return sendError(reply, 400, 'A dry run of destroy is not supported; nothing was changed', { dryRun: 'must be false' });
        try {
          const deployment = await destroyProject(ctx, request.accountId, request.params.logicalId, {
            preserveResources: request.query.preserveResources ?? false,
          });
          return deployment ? reply.code(202).send(deploymentResponse(deployment)) : {};
        } catch (error) {
          if (error instanceof ConstructInvalidError) return sendError(reply, 400, error.message, { code: error.code });
          throw error;
        }
      },
    );

    const found = async (accountId: string, params: { logicalId: string; id: string }) =>
      getDeployment(ctx.db, accountId, params.logicalId, params.id);

    app.get(
      '/v1/projects/:logicalId/deployments/:id',
      { schema: { tags, summary: 'Retrieve a deployment', params: DeploymentParams, response: { 200: Deployment, 404: ErrorA } } },
      async (request, reply) => {
        const row = await found(request.accountId, request.params);
        return row ? deploymentResponse(row) : sendError(reply, 404, 'Deployment not found');
      },
    );

    app.get(
      '/v1/projects/:logicalId/deployments/:id/completion',
      {
        schema: {
          tags,
          summary: 'Wait for a deployment to finish',
          description: 'Deployments finish before they are answered, so this answers at once.',
          params: DeploymentParams,
          querystring: Type.Object({ maxWaitSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 300 })) }),
          response: { 200: Deployment, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const row = await found(request.accountId, request.params);
        return row ? deploymentResponse(row) : sendError(reply, 404, 'Deployment not found');
      },
    );

    app.post(
      '/v1/projects/:logicalId/deployments/:id/cancel',
      {
        schema: {
          tags,
          summary: 'Cancel a deployment',
          description: 'A deployment has always finished by the time it is known, so there is nothing to cancel: answers it as it ended.',
          params: DeploymentParams,
          response: { 200: Deployment, 404: ErrorB },
        },
      },
      async (request, reply) => {
        const row = await found(request.accountId, request.params);
        return row ? deploymentResponse(row) : sendError(reply, 404, 'Deployment not found');
      },
    );

    app.get(
      '/v1/projects/:logicalId/deployments/:id/events',
      {
        schema: {
          tags,
          summary: 'Follow a deployment (server-sent events)',
          description: 'A `progress` event at 100 and the `complete` event with the deployment, then the stream ends.',
          params: DeploymentParams,
        },
      },
      async (request, reply) => {
        const row = await found(request.accountId, request.params);
        if (!row) return sendError(reply, 404, 'Deployment not found');
        const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
        return reply
          .type('text/event-stream')
          .header('cache-control', 'no-cache')
          .send(frame('progress', { progress: 100 }) + frame('complete', deploymentResponse(row)));
      },
    );
  };
