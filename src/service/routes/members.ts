import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { collapse, sendError } from '../http-errors.js';
import { ErrorA, ErrorB } from '../schemas/common.js';
import {
  createApiKey,
  createMember,
  deleteApiKey,
  getApiKey,
  getMember,
  listApiKeys,
  listMembers,
  removeMember,
} from '../store/members.js';

const ROLES = ['OWNER', 'ADMIN', 'READ_WRITE', 'READ_ONLY'] as const;

const Member = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  name: Type.String(),
  role: Type.Enum(ROLES),
  created_at: Type.String(),
});

const ApiKey = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  kind: Type.Union([Type.Literal('USER'), Type.Literal('SERVICE')]),
  memberId: Type.Union([Type.String(), Type.Null()]),
  maskedKey: Type.String(),
  created_at: Type.String(),
});
const NewApiKey = Type.Object({
  ...ApiKey.properties,
  rawKey: Type.String({ description: 'Shown in this answer only' }),
});

const CreateMemberBody = Type.Object({
  email: Type.String({ format: 'email', maxLength: 254 }),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  role: Type.Optional(Type.Enum(ROLES, { default: 'READ_WRITE' })),
});
const KeyBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }) });
const UserId = Type.Object({ userId: Type.String({ format: 'uuid' }) });
const KeyId = Type.Object({ keyId: Type.String({ format: 'uuid' }) });
const tags = ['Account'];

/**
 * Members and keys are managed by owners, admins and service keys; any
 * member may still make and revoke keys of their own.
 */
function mayManage(request: FastifyRequest, ownMemberId?: string): boolean {
  const holder = request.keyHolder;
  if (holder.kind === 'SERVICE' || holder.role === 'OWNER' || holder.role === 'ADMIN') return true;
  return ownMemberId !== undefined && holder.memberId === ownMemberId;
}

const refuse = (reply: FastifyReply) =>
  sendError(reply, 403, 'Managing members and API keys takes an owner, an admin or a service key');

export const memberRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/accounts/me/members',
      { schema: { tags, summary: 'List account members', response: { 200: Type.Array(Member) } } },
      async (request) => listMembers(ctx.db, request.accountId),
    );

    app.post(
      '/v1/accounts/me/members',
      {
        schema: {
          tags,
          summary: 'Add an account member',
          body: CreateMemberBody,
          response: { 201: Member, 400: ErrorB, 403: ErrorA },
        },
      },
      async (request, reply) => {
        if (!mayManage(request)) return refuse(reply);
        const created = await createMember(ctx.db, request.accountId, {
          email: request.body.email,
          name: request.body.name,
          role: request.body.role ?? 'READ_WRITE',
        });
        if (!created) return sendError(reply, 400, `${request.body.email} is already a member`, { email: 'is already a member' });
        return reply.code(201).send(created);
      },
    );

    app.delete(
      '/v1/accounts/me/members/:userId',
      {
        // The spec shows shape A for this operation, a malformed id included.
        attachValidation: true,
        config: { errorShape: 'A' },
        schema: {
          tags,
          summary: 'Remove an account member',
          description: 'Their API keys go with them. The last owner cannot be removed.',
          params: UserId,
          response: { 204: Type.Null(), 400: ErrorA, 403: ErrorA, 404: ErrorA, 409: ErrorA },
        },
      },
      async (request, reply) => {
        if (request.validationError) {
          const problems = collapse((request.validationError as { validation?: [] }).validation ?? []);
          return sendError(reply, 400, `Invalid path: ${Object.entries(problems).map(([f, p]) => `${f} ${p}`).join('; ')}`);
        }
        if (!mayManage(request)) return refuse(reply);
        const outcome = await removeMember(ctx.db, request.accountId, request.params.userId);
        if (outcome === 'not-found') return sendError(reply, 404, 'Member not found');
        if (outcome === 'last-owner') return sendError(reply, 409, 'The last owner of an account cannot be removed');
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/v1/accounts/me/api-keys',
      {
        schema: {
          tags,
          summary: 'List API keys',
          description: 'User keys (of a member, acting with their role) and service keys (of the account), masked.',
          response: { 200: Type.Array(ApiKey) },
        },
      },
      async (request) => listApiKeys(ctx.db, request.accountId),
    );

    app.post(
      '/v1/accounts/me/members/:userId/api-keys',
      {
        schema: {
          tags,
          summary: "Create a member's API key",
          params: UserId,
          body: KeyBody,
          response: { 201: NewApiKey, 400: ErrorB, 403: ErrorA, 404: ErrorA },
        },
      },
      async (request, reply) => {
        if (!mayManage(request, request.params.userId)) return refuse(reply);
        const owner = await getMember(ctx.db, request.accountId, request.params.userId);
        if (!owner) return sendError(reply, 404, 'Member not found');
        return reply.code(201).send(await createApiKey(ctx.db, request.accountId, { name: request.body.name, memberId: owner.id }));
      },
    );

    app.post(
      '/v1/accounts/me/service-api-keys',
      {
        schema: {
          tags,
          summary: 'Create a service API key',
          description: 'A key of the account rather than of a member: it outlives members and has no role limits.',
          body: KeyBody,
          response: { 201: NewApiKey, 400: ErrorB, 403: ErrorA },
        },
      },
      async (request, reply) => {
        if (!mayManage(request)) return refuse(reply);
        return reply.code(201).send(await createApiKey(ctx.db, request.accountId, { name: request.body.name, memberId: null }));
      },
    );

    app.delete(
      '/v1/accounts/me/api-keys/:keyId',
      {
        schema: {
          tags,
          summary: 'Revoke an API key',
          description: 'Calls made with it are refused (401) from then on.',
          params: KeyId,
          response: { 204: Type.Null(), 403: ErrorA, 404: ErrorB },
        },
      },
      async (request, reply) => {
        const key = await getApiKey(ctx.db, request.accountId, request.params.keyId);
        if (key && !mayManage(request, key.memberId ?? undefined)) return refuse(reply);
        const deleted = key ? await deleteApiKey(ctx.db, request.accountId, key.id) : false;
        if (!deleted) return sendError(reply, 404, 'API key not found', { keyId: 'not found' });
        return reply.code(204).send(null);
      },
    );
  };
