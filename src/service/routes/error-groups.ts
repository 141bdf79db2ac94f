import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ServiceContext } from '../context.js';
import {
  CheckErrorGroupSchema,
  checkErrorGroup,
  errorGroupsOfCheck,
  findCheckErrorGroup,
} from '../error-groups/check-error-groups.js';
import { sendError } from '../http-errors.js';
import { ErrorA } from '../schemas/common.js';
import { getCheck } from '../store/checks.js';

const tags = ['Error groups'];

/** Where the public checkly CLI looks for a check's error groups (`checks get`, `checks get --error-group`). */
export const errorGroupRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/error-groups/checks/:checkId',
      {
        schema: {
          tags,
          summary: "List a check's error groups",
          description:
            'Its failed results of the last 30 days grouped by error (code and message, or the failed assertion), most frequent ' +
            'first: the groups of GET /v1/checks/{checkId}/error-groups, in the field names the checkly CLI reads.',
          params: Type.Object({ checkId: Type.String({ format: 'uuid' }) }),
          response: { 200: Type.Array(CheckErrorGroupSchema), 404: ErrorA },
        },
      },
      async (request, reply) => {
        const check = await getCheck(ctx.db, request.accountId, request.params.checkId);
        if (!check) return sendError(reply, 404, 'Check not found');
        return (await errorGroupsOfCheck(ctx.db, request.accountId, check.id)).map(checkErrorGroup);
      },
    );

    app.get(
      '/v1/error-groups/:errorGroupId',
      {
        schema: {
          tags,
          summary: 'Retrieve an error group',
          description: 'A check error group by its id; groups exist while their check has failed results of the last 30 days.',
          params: Type.Object({ errorGroupId: Type.String({ pattern: '^[0-9a-f]{24}$' }) }),
          response: { 200: CheckErrorGroupSchema, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const group = await findCheckErrorGroup(ctx.db, request.accountId, request.params.errorGroupId);
        return group ? checkErrorGroup(group) : sendError(reply, 404, 'Error group not found');
      },
    );
  };
