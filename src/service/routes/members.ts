import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { speaksChecklyDialect } from '../auth.js';
import type { ServiceContext } from '../context.js';
import { collapse, sendError } from '../http-errors.js';
import { DateTimeSchema, ErrorA, ErrorB } from '../schemas/common.js';
import type { MemberRole } from '../store/accounts.js';
import {
  changeMemberRole,
  createApiKey,
  createMember,
  deleteApiKey,
  getApiKey,
  getMember,
  listApiKeys,
  listMembers,
  removeMember,
  type MemberRecord,
} from '../store/members.js';

const ROLES = ['OWNER', 'ADMIN', 'READ_WRITE', 'READ_ONLY'] as const;

const Member = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  name: Type.String(),
  role: Type.Enum(ROLES),
  created_at: Type.String(),
});

/**
 * A member as the public `checkly` CLI reads it (`checkly members`): Outpost
 * has members only (no invitations), all active, with no SSO, MFA or support
 * memberships; a role change is not timed, so `updatedAt` is `createdAt`.
 */
const ChecklyMember = Type.Object({
  type: Type.Literal('member'),
  accountId: Type.String({ format: 'uuid' }),
  userId: Type.String({ format: 'uuid' }),
  name: Type.String(),
  email: Type.String(),
  role: Type.Enum(ROLES),
  status: Type.Literal('ACTIVE'),
  createdAt: DateTimeSchema,
  updatedAt: DateTimeSchema,
  isSupportMembership: Type.Boolean(),
  ssoEnabled: Type.Boolean(),
  mfaEnabled: Type.Boolean(),
});
const ChecklyMemberPage = Type.Object(
  {
    members: Type.Array(ChecklyMember),
    length: Type.Integer({ description: 'Members on this page' }),
    nextId: Type.Union([Type.String(), Type.Null()], { description: 'Pass as nextId for the next page; null on the last' }),
  },
  { description: 'Answered to a caller that names its account in x-checkly-account (the public checkly CLI)' },
);

function checklyMember(accountId: string, member: MemberRecord) {
  return {
    type: 'member' as const,
    accountId,
    userId: member.id,
    name: member.name,
    email: member.email,
    role: member.role,
    status: 'ACTIVE' as const,
    createdAt: member.created_at,
    updatedAt: member.created_at,
    isSupportMembership: false,
    ssoEnabled: false,
    mfaEnabled: false,
  };
}

const ListQuery = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 254, description: 'Part of the name or address, without case' })),
  type: Type.Optional(Type.Enum(['member', 'invite'], { description: 'There are no invitations: invite lists none' })),
  role: Type.Optional(Type.Enum([...ROLES, 'READ_RUN'], { description: 'READ_RUN is no Outpost role: it lists none' })),
  status: Type.Optional(Type.Enum(['ACTIVE', 'PENDING', 'EXPIRED'], { description: 'Every member is ACTIVE' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'At most this many, from nextId on' })),
  nextId: Type.Optional(Type.String({ format: 'uuid', description: 'The member to start from: nextId of the page before' })),
});

const RoleBody = Type.Object({ role: Type.Enum(ROLES) });

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
      {
        schema: {
          tags,
          summary: 'List account members',
          description:
            'Oldest first, filtered by the query. A caller that names its account in x-checkly-account gets the page the public checkly CLI reads.',
          querystring: ListQuery,
          response: { 200: Type.Union([Type.Array(Member), ChecklyMemberPage]) },
        },
      },
      async (request) => {
        const { search, type, role, status, limit, nextId } = request.query;
        const needle = search?.trim().toLowerCase();
        const matching = (await listMembers(ctx.db, request.accountId)).filter(
          (member) =>
            (type === undefined || type === 'member') &&
            (status === undefined || status === 'ACTIVE') &&
            (role === undefined || member.role === role) &&
            (!needle || member.name.toLowerCase().includes(needle) || member.email.toLowerCase().includes(needle)),
        );
        // A nextId that is no member's (removed since) ends the list rather than starting it over.
        const at = nextId === undefined ? 0 : matching.findIndex((member) => member.id === nextId.toLowerCase());
        const from = at < 0 ? matching.length : at;
        const page = matching.slice(from, limit === undefined ? undefined : from + limit);
        const next = matching[from + page.length];
        if (!speaksChecklyDialect(request)) return page;
        return {
          members: page.map((member) => checklyMember(request.accountId, member)),
          length: page.length,
          nextId: next?.id ?? null,
        };
      },
    );

    app.patch(
      '/v1/accounts/me/members/:userId',
      {
        schema: {
          tags,
          summary: "Change a member's role",
          description:
            'Takes an owner, an admin or a service key; making or unmaking an owner takes an owner or a service key. The last owner stays one (409).',
          params: UserId,
          body: RoleBody,
          response: { 200: Type.Union([Member, ChecklyMember]), 400: ErrorB, 403: ErrorB, 404: ErrorB, 409: ErrorB },
        },
      },
      async (request, reply) => {
        if (!mayManage(request)) return refuse(reply);
        const role: MemberRole = request.body.role;
        const target = await getMember(ctx.db, request.accountId, request.params.userId);
        if (!target) return sendError(reply, 404, 'Member not found', { userId: 'not found' });
        const holder = request.keyHolder;
        if ((role === 'OWNER' || target.role === 'OWNER') && holder.kind !== 'SERVICE' && holder.role !== 'OWNER') {
          return sendError(reply, 403, 'Making or unmaking an owner takes an owner or a service key');
        }
        const outcome = await changeMemberRole(ctx.db, request.accountId, target.id, role);
        if (outcome === 'not-found') return sendError(reply, 404, 'Member not found', { userId: 'not found' });
        if (outcome === 'last-owner') {
          return sendError(reply, 409, 'The last owner of an account stays one: make another member an owner first', {
            role: 'the last owner stays OWNER',
          });
        }
        return speaksChecklyDialect(request) ? checklyMember(request.accountId, outcome.updated) : outcome.updated;
      },
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
