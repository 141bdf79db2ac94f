import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { speaksChecklyDialect } from '../auth.js';
import type { ServiceContext } from '../context.js';
import {
  EnvironmentVariableSchema,
  MAX_VARIABLE_VALUE_CHARS,
  maskSecrets,
  reservedKeyProblem,
  SECRET_MASK,
  VariableKeySchema,
  type EnvironmentVariable,
} from '../check-types/environment-variables.js';
import { sendError } from '../http-errors.js';
import { ErrorA, ErrorB, Pagination } from '../schemas/common.js';
import {
  createVariable,
  deleteVariable,
  getVariable,
  listVariables,
  MAX_ACCOUNT_VARIABLES,
  updateVariable,
} from '../store/variables.js';

const Variable = Type.Object({
  key: Type.String(),
  value: Type.String({ description: `"${SECRET_MASK}" for a secret variable: its value is never read back` }),
  locked: Type.Boolean(),
  secret: Type.Boolean(),
}, { title: 'Variable' });

const UpdateBody = Type.Object({
  value: Type.String({
    maxLength: MAX_VARIABLE_VALUE_CHARS,
    description: `For a secret variable, "${SECRET_MASK}" keeps the stored value`,
  }),
  locked: Type.Optional(Type.Boolean({ description: 'Kept as stored when left out' })),
  secret: Type.Optional(Type.Boolean({ description: 'Kept as stored when left out; a secret variable stays secret' })),
});

const KeyParams = Type.Object({ key: VariableKeySchema });
const tags = ['Environment variables'];

/** What any read answers: a secret's value never leaves the service except in a run's job. */
const shown = (variable: EnvironmentVariable) => maskSecrets([variable])[0]!;

export const variableRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/variables',
      {
        schema: {
          tags,
          summary: 'List environment variables',
          description:
            'In key order. Each script check run gets all of them; a check variable of the same key wins. A caller that names its account in x-checkly-account and no limit gets all of them: the public checkly CLI asks for no page and lists (env ls) or writes (env pull) what it gets.',
          querystring: Pagination,
          response: { 200: Type.Array(Variable) },
        },
      },
      async (request) => {
        const allAtOnce = speaksChecklyDialect(request) && !new URLSearchParams(request.url.split('?')[1] ?? '').has('limit');
        const rows = await listVariables(ctx.db, request.accountId, {
          limit: allAtOnce ? MAX_ACCOUNT_VARIABLES : (request.query.limit ?? 10),
          page: request.query.page ?? 1,
        });
        return rows.map(shown);
      },
    );

    app.post(
      '/v1/variables',
      {
        schema: {
          tags,
          summary: 'Create an environment variable',
          body: EnvironmentVariableSchema,
          response: { 201: Variable, 400: ErrorB },
        },
      },
      async (request, reply) => {
        const { key, value } = request.body;
        const reserved = reservedKeyProblem(key);
        if (reserved) return sendError(reply, 400, `key ${reserved}`, { key: reserved });
        const outcome = await createVariable(ctx.db, request.accountId, {
          key,
          value,
          locked: request.body.locked ?? false,
          secret: request.body.secret ?? false,
        });
        if ('created' in outcome) return reply.code(201).send(shown(outcome.created));
        if (outcome.refused === 'exists') {
          return sendError(reply, 400, `An environment variable with key ${key} already exists`, { key: 'already exists' });
        }
        return sendError(reply, 400, `The account already has ${MAX_ACCOUNT_VARIABLES} environment variables, the most it may have`, {
          key: `no room: at most ${MAX_ACCOUNT_VARIABLES} variables per account`,
        });
      },
    );

    app.get(
      '/v1/variables/:key',
      {
        schema: {
          tags,
          summary: 'Retrieve an environment variable',
          params: KeyParams,
          response: { 200: Variable, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const variable = await getVariable(ctx.db, request.accountId, request.params.key);
        return variable ? shown(variable) : sendError(reply, 404, 'Environment variable not found');
      },
    );

    app.put(
      '/v1/variables/:key',
      {
        schema: {
          tags,
          summary: 'Update an environment variable',
          params: KeyParams,
          body: UpdateBody,
          response: { 200: Variable, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const stored = await getVariable(ctx.db, request.accountId, request.params.key);
        if (!stored) return sendError(reply, 404, 'Environment variable not found');
        const { value, locked, secret } = request.body;
        if (stored.secret && secret === false) {
          return sendError(reply, 400, 'A secret variable stays secret: its value is never shown again', {
            secret: 'cannot be cleared once set',
          });
        }
        const updated = await updateVariable(ctx.db, request.accountId, {
          key: stored.key,
          value: stored.secret && value === SECRET_MASK ? stored.value : value,
          locked: locked ?? stored.locked,
          secret: secret ?? stored.secret,
        });
        return updated ? shown(updated) : sendError(reply, 404, 'Environment variable not found');
      },
    );

    app.delete(
      '/v1/variables/:key',
      {
        schema: {
          tags,
          summary: 'Delete an environment variable',
          params: KeyParams,
          response: { 204: Type.Null(), 400: ErrorB, 404: ErrorB },
        },
      },
      async (request, reply) => {
        const deleted = await deleteVariable(ctx.db, request.accountId, request.params.key);
        if (!deleted) return sendError(reply, 404, 'Environment variable not found', { key: 'not found' });
        return reply.code(204).send(null);
      },
    );
  };
