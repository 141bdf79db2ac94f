import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from './db/database.js';
import { sendError, sendErrorA } from './http-errors.js';
import { holderOfApiKey, type KeyHolder } from './store/accounts.js';
import type { AgentKeys } from './agent-keys.js';
import type { PrivateLocationRow } from './store/private-locations.js';

declare module 'fastify' {
  interface FastifyRequest {
    accountId: string;
    /** Who the user API key acts as; set by userAuth. */
    keyHolder: KeyHolder;
    privateLocation: PrivateLocationRow;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

export interface UserAuthOptions {
  /** Operations where the spec does not list the account header: the key's account is used. */
  accountHeaderOptional?: (request: FastifyRequest) => boolean;
}

/**
 * `Authorization: Bearer <API key>` plus `x-service-account: <account id>`.
 * A key that belongs to another account than the one named gets 403 and
 * learns nothing about that account.
 */
export function userAuth(db: Database, options: UserAuthOptions = {}) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const key = bearer(request);
    if (!key) {
      await sendError(reply, 401, 'Missing Authorization header: send "Authorization: Bearer <API key>"');
      return;
    }
    const accountHeader = request.headers['x-service-account'];
    const accountId = Array.isArray(accountHeader) ? accountHeader[0] : accountHeader;
    const optional = options.accountHeaderOptional?.(request) ?? false;
    if (!accountId && !optional) {
      await sendError(reply, 401, 'Missing x-service-account header: send your account id');
      return;
    }
    if (accountId && !UUID.test(accountId)) {
      await sendError(reply, 401, 'The x-service-account header must be an account id (uuid)');
      return;
    }
    const holder = await holderOfApiKey(db, key);
    if (!holder) {
      await sendError(reply, 401, 'Unknown or revoked API key');
      return;
    }
    if (accountId && accountId.toLowerCase() !== holder.accountId) {
      await sendError(reply, 403, 'This API key does not grant access to the account in x-service-account');
      return;
    }
    if (holder.role === 'READ_ONLY' && !SAFE_METHODS.has(request.method)) {
      await sendError(reply, 403, 'This API key belongs to a read-only member: it may only read');
      return;
    }
    request.accountId = holder.accountId;
    request.keyHolder = holder;
  };
}

/** `Authorization: Bearer pl_…`: the private location key an agent runs with. */
export function agentAuth(keys: AgentKeys) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const key = bearer(request);
    if (!key) {
      await sendErrorA(reply, 401, 'Missing Authorization header: send "Authorization: Bearer <private location key>"');
      return;
    }
    const location = key.startsWith('pl_') ? await keys.locationFor(key) : undefined;
    if (!location) {
      await sendErrorA(reply, 401, 'Unknown or removed private location key');
      return;
    }
    request.privateLocation = location;
  };
}
