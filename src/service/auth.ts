import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
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

/**
 * The public `checkly` CLI (and Checkly's other clients) name the account in
 * `x-checkly-account`; Outpost's own header is `x-service-account`. Either
 * one is accepted, with the same meaning.
 */
export const CHECKLY_ACCOUNT_HEADER = 'x-checkly-account';

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * True when the caller named its account the way Checkly's clients do
 * (`x-checkly-account`, and no `x-service-account`): such a caller reads the
 * answers the public `checkly` CLI expects where those differ from Outpost's
 * own (docs/api.md, "The public checkly CLI").
 */
export function speaksChecklyDialect(request: FastifyRequest): boolean {
  return header(request, CHECKLY_ACCOUNT_HEADER) !== undefined && header(request, 'x-service-account') === undefined;
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
    const serviceAccount = header(request, 'x-service-account');
    const checklyAccount = header(request, CHECKLY_ACCOUNT_HEADER);
    const headerName = serviceAccount === undefined && checklyAccount !== undefined ? CHECKLY_ACCOUNT_HEADER : 'x-service-account';
    const accountId = serviceAccount ?? checklyAccount;
    const optional = options.accountHeaderOptional?.(request) ?? false;
    if (!accountId && !optional) {
      await sendError(reply, 401, 'Missing x-service-account header: send your account id');
      return;
    }
    if (accountId && !UUID.test(accountId)) {
      await sendError(reply, 401, `The ${headerName} header must be an account id (uuid)`);
      return;
    }
    if (serviceAccount !== undefined && checklyAccount !== undefined && serviceAccount.toLowerCase() !== checklyAccount.toLowerCase()) {
      await sendError(reply, 401, `x-service-account and ${CHECKLY_ACCOUNT_HEADER} name different accounts: send one`);
      return;
    }
    const holder = await holderOfApiKey(db, key);
    if (!holder) {
      await sendError(reply, 401, 'Unknown or revoked API key');
      return;
    }
    if (accountId && accountId.toLowerCase() !== holder.accountId) {
      await sendError(reply, 403, `This API key does not grant access to the account in ${headerName}`);
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

/**
 * onSend hook of the user API: a caller speaking the Checkly dialect gets
 * every error as `{statusCode, error, message}` (shape A; a shape B answer
 * keeps its `attributes` beside them), the one error body the public
 * `checkly` CLI reads: given shape B alone it prints only "Request failed
 * with status code 400", not the reason.
 */
export async function checklyDialectErrors(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (reply.statusCode < 400 || typeof payload !== 'string' || !speaksChecklyDialect(request)) return payload;
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return payload;
  }
  if (typeof body !== 'object' || body === null || 'statusCode' in body || !('message' in body)) return payload;
  const { message, attributes } = body as { message: unknown; attributes?: unknown };
  const statusCode = reply.statusCode;
  return JSON.stringify({ statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message, ...(attributes === undefined ? {} : { attributes }) });
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
