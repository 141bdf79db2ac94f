import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { findRuntime, RUNTIME_STAGES, runtimeCatalog, type RuntimeRecord } from '../../runtimes/catalog.js';
import { speaksChecklyDialect } from '../auth.js';
import { sendError } from '../http-errors.js';
import { ErrorA } from '../schemas/common.js';

const tags = ['Runtimes'];

const Runtime = Type.Object({
  name: Type.String({ description: 'The runtime id, e.g. 2026.04' }),
  multiStepSupport: Type.Boolean(),
  nodeJsVersion: Type.String(),
  dependencies: Type.Record(Type.String(), Type.String(), { description: 'npm package → exact version' }),
  stage: Type.Enum(RUNTIME_STAGES),
  runtimeEndOfLife: Type.String({ description: 'Date (YYYY-MM-DD) on which the runtime is removed' }),
  description: Type.String(),
}, { title: 'Runtime' });

/**
 * The public face of a record: whether this service's own disk could install it is nobody's business.
 * The public checkly CLI reads a runtime's Node.js version from a `node` entry among its dependencies.
 */
function present(runtime: RuntimeRecord, request: FastifyRequest) {
  const { name, multiStepSupport, nodeJsVersion, stage, runtimeEndOfLife, description } = runtime;
  const dependencies = speaksChecklyDialect(request) && nodeJsVersion ? { node: nodeJsVersion, ...runtime.dependencies } : runtime.dependencies;
  return { name, multiStepSupport, nodeJsVersion, dependencies, stage, runtimeEndOfLife, description };
}

// No account data: every account sees the same catalog, read from runtimes/ at first use.
export const runtimeRoutes = (): FastifyPluginAsyncTypebox => async (app) => {
  app.get(
    '/v1/runtimes',
    { schema: { tags, summary: 'List the runtimes', response: { 200: Type.Array(Runtime) } } },
    async (request) => runtimeCatalog().map((runtime) => present(runtime, request)),
  );

  app.get(
    '/v1/runtimes/:id',
    {
      schema: {
        tags,
        summary: 'One runtime',
        // Any string: an id that is no runtime is a 404, not a 400.
        params: Type.Object({ id: Type.String() }),
        response: { 200: Runtime, 404: ErrorA },
      },
    },
    async (request, reply) => {
      const runtime = findRuntime(request.params.id);
      return runtime ? present(runtime, request) : sendError(reply, 404, `Runtime "${request.params.id}" not found`);
    },
  );
};
