import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { DatabaseConnectionLostError } from '../errors/index.js';
import { isDatabaseOutage } from './db/connection-errors.js';

/** Shape A: {statusCode, error, message}. */
export function sendErrorA(reply: FastifyReply, statusCode: number, message: string): FastifyReply {
  return reply.code(statusCode).send({ statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message });
}

/** Shape B: {message, attributes}; attributes name each bad field. */
export function sendErrorB(
  reply: FastifyReply,
  statusCode: number,
  message: string,
  attributes: Record<string, unknown> = {},
): FastifyReply {
  return reply.code(statusCode).send({ message, attributes });
}

export type ErrorShape = 'A' | 'B';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The one error shape every error of this route takes (see docs/api.md). */
    errorShape?: ErrorShape;
  }
}

/**
 * One error shape per route of the user API: reads answer in shape A, writes
 * (POST, PUT, DELETE) in shape B, unless the route names its own (member
 * removal is A, as the spec shows). The agent protocol, with a contract of
 * its own, keeps one shape per status: B for a 400, A otherwise.
 */
export function routeErrorShape(
  route: { method: string; url: string | undefined; config?: { errorShape?: ErrorShape } },
  status: number,
): ErrorShape {
  if (route.config?.errorShape) return route.config.errorShape;
  if (!route.url || route.url.startsWith('/v1/agent/')) return status === 400 ? 'B' : 'A';
  return route.method === 'GET' || route.method === 'HEAD' ? 'A' : 'B';
}

export function errorShapeOf(request: FastifyRequest, status: number): ErrorShape {
  return routeErrorShape(
    { method: request.method, url: request.routeOptions.url, config: request.routeOptions.config },
    status,
  );
}

/** An error in the route's shape; in shape A the message carries what attributes would. */
export function sendError(
  reply: FastifyReply,
  statusCode: number,
  message: string,
  attributes: Record<string, unknown> = {},
): FastifyReply {
  return errorShapeOf(reply.request, statusCode) === 'A'
    ? sendErrorA(reply, statusCode, message)
    : sendErrorB(reply, statusCode, message, attributes);
}

/** "Invalid body: a must be…; b is required", from the problems by field. */
export function invalidBodyMessage(attributes: Record<string, string>): string {
  return `Invalid body: ${Object.entries(attributes)
    .map(([field, problem]) => `${field} ${problem}`)
    .join('; ')}`;
}

/** A 400 in shape B for problems found beyond the schema (rules across fields, records that must exist). */
export function sendInvalidBody(reply: FastifyReply, attributes: Record<string, string>): FastifyReply {
  return sendError(reply, 400, invalidBodyMessage(attributes), attributes);
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** "/request/url" → "request.url"; a missing property is named by itself. */
export function fieldName(error: AjvError): string {
  const path = error.instancePath.replace(/^\//, '').split('/').filter(Boolean);
  if (error.keyword === 'required' && typeof error.params.missingProperty === 'string') {
    path.push(error.params.missingProperty);
  }
  return path.join('.') || '(root)';
}

function describe(error: AjvError): string {
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'enum' || error.keyword === 'const') {
    const allowed = (error.params.allowedValues ?? [error.params.allowedValue]) as unknown[];
    return `must be one of ${allowed.map(String).join(', ')}`;
  }
  return error.message ?? 'is invalid';
}

/**
 * A union of literals fails every branch; ajv then reports one `const` error
 * per branch plus an `anyOf`. Users want one line: "must be one of …".
 */
export function collapse(errors: readonly AjvError[]): Record<string, string> {
  const byField = new Map<string, AjvError[]>();
  const names = errors.map(fieldName);
  // An object-or-null that fails inside the object also fails "must be null";
  // the error inside is the one that says what to fix.
  const explainedDeeper = new Set(
    errors
      .map((error, index) => (error.keyword === 'anyOf' ? names[index]! : undefined))
      .filter((name): name is string => name !== undefined && name !== '(root)')
      .filter((name) => names.some((other) => other.startsWith(`${name}.`))),
  );
  for (const [index, error] of errors.entries()) {
    const name = names[index]!;
    if (explainedDeeper.has(name)) continue;
    byField.set(name, [...(byField.get(name) ?? []), error]);
  }
  const attributes: Record<string, string> = {};
  for (const [name, list] of byField) {
    const consts = list.filter((e) => e.keyword === 'const').map((e) => e.params.allowedValue);
    if (consts.length > 1) attributes[name] = `must be one of ${consts.map(String).join(', ')}`;
    else attributes[name] = list.filter((e) => e.keyword !== 'anyOf').map(describe)[0] ?? describe(list[0]!);
  }
  return attributes;
}

/** Seconds a client is asked to wait before trying again while the database is away. */
const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * 503 in shape A, whatever the route's shape: the database is unreachable
 * (nothing was saved), or its connection broke while a change was being
 * committed (it may have been). Not logged here: the database's outage log
 * tells an outage once.
 */
export function sendDatabaseOutage(reply: FastifyReply, error: Error): FastifyReply {
  const write = reply.request.method !== 'GET' && reply.request.method !== 'HEAD';
  const message =
    error instanceof DatabaseConnectionLostError && write
      ? 'The connection to the database was lost while saving; the change may or may not have been made. Check before trying again'
      : 'The database is unreachable; try again shortly';
  void reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
  return sendErrorA(reply, 503, message);
}

export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error.validation) {
    const attributes = collapse(error.validation);
    const where = error.validationContext === 'body' ? 'body' : (error.validationContext ?? 'request');
    const list = Object.entries(attributes).map(([field, problem]) => `${field} ${problem}`);
    return sendError(reply, 400, `Invalid ${where}: ${list.join('; ')}`, attributes);
  }
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) {
    return sendError(reply, 400, 'The request body is not valid JSON', {});
  }
  if (isDatabaseOutage(error)) return sendDatabaseOutage(reply, error);
  const status = error.statusCode ?? 500;
  if (status >= 500) {
    request.log.error({ err: error }, 'request failed');
    return sendError(reply, 500, 'Internal error; the service log has the details');
  }
  return sendError(reply, status, error.message);
}
