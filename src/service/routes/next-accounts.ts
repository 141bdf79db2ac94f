import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { DEFAULT_RUNTIME_ID } from '../check-types/multistep.js';
import { entitlementsOf } from '../entitlements.js';
import { sendError } from '../http-errors.js';
import { ErrorA } from '../schemas/common.js';
import { getAccount } from '../store/accounts.js';
import { getApiKey, getMember } from '../store/members.js';

/**
 * The account and user routes every logged-in command of the public `checkly`
 * CLI calls first (`/next/accounts/{id}`, `/next/users/me`). They answer for
 * the key's own account only: a key never learns of another.
 */

const Account = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  runtimeId: Type.String({ description: 'The runtime a script check runs on when it names none' }),
  plan: Type.String(),
  planDisplayName: Type.String(),
  features: Type.Array(Type.String(), { description: 'Hosted feature flags: none in a self-hosted installation' }),
});

const User = Type.Object({
  id: Type.String({ format: 'uuid', description: "The member's id; for a service key, the key's id" }),
  name: Type.String({ description: 'The member the key belongs to; a service key is named as one' }),
  email: Type.Optional(Type.String()),
});

const tags = ['Checkly CLI'];

export const nextAccountRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const accountOf = async (request: FastifyRequest) => {
      const account = await getAccount(ctx.db, request.accountId);
      if (!account) return undefined;
      // The plan is the installation's, as GET /v1/accounts/me/entitlements tells it.
      const { plan, planDisplayName } = entitlementsOf(ctx, []);
      return {
        id: account.id,
        name: account.name,
        runtimeId: DEFAULT_RUNTIME_ID,
        plan,
        planDisplayName,
        features: [],
      };
    };

    app.get(
      '/next/accounts',
      {
        schema: {
          tags,
          summary: 'The accounts of this API key',
          description: "One: the key's own account. What `checkly switch` chooses from.",
          response: { 200: Type.Array(Account) },
        },
      },
      async (request) => {
        const account = await accountOf(request);
        return account ? [account] : [];
      },
    );

    app.get(
      '/next/accounts/:accountId',
      {
        schema: {
          tags,
          summary: 'One account',
          description: "The key's own account; any other id is a 403, as in the account header.",
          params: Type.Object({ accountId: Type.String() }),
          response: { 200: Account, 403: ErrorA, 404: ErrorA },
        },
      },
      async (request, reply) => {
        if (request.params.accountId.toLowerCase() !== request.accountId) {
          return sendError(reply, 403, 'This API key does not grant access to that account');
        }
        const account = await accountOf(request);
        return account ?? sendError(reply, 404, 'Account not found');
      },
    );

    app.get(
      '/next/users/me',
      {
        schema: {
          tags,
          summary: 'Who the API key acts as',
          description: 'A user key: its member. A service key belongs to no person: it is named as the key it is.',
          response: { 200: User, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const holder = request.keyHolder;
        if (holder.memberId) {
          const member = await getMember(ctx.db, request.accountId, holder.memberId);
          if (member) return { id: member.id, name: member.name, email: member.email };
        }
        const key = await getApiKey(ctx.db, request.accountId, holder.keyId);
        if (!key) return sendError(reply, 404, 'API key not found');
        return { id: key.id, name: `service key "${key.name}" (${key.maskedKey})` };
      },
    );
  };
