import { createHash } from 'node:crypto';
import rateLimit, { type RateLimitOptions } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RateLimit } from './config.js';
import type { Queryable } from './db/database.js';
import { databaseRateLimitStore } from './rate-limit-store.js';
import { ErrorA } from './schemas/common.js';

/**
 * Analytics aggregate stored results on every call, the costliest reads the
 * API has: they get this fraction of the budget, counted apart from it.
 */
const ANALYTICS_SHARE = 5;

/**
 * Counted per API key. Authentication runs first (a scope hook, before the
 * limiter's route hook), so every counted call carries a valid key; the key
 * is hashed so no raw key is held in the limiter's memory or table.
 */
function keyOf(request: FastifyRequest): string {
  const header = request.headers.authorization ?? '';
  return createHash('sha256').update(header).digest('base64url');
}

function limitOptions(limit: RateLimit): RateLimitOptions {
  return {
    max: limit.max,
    timeWindow: limit.windowSeconds * 1000,
    keyGenerator: keyOf,
    // Thrown, then answered by the service's error handler in shape A.
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      error: 'Too Many Requests',
      message: `Rate limit reached: ${context.max} requests per ${limit.windowSeconds} s for this API key; retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} s`,
    }),
  };
}

/**
 * The user API's limit, for every route registered in `scope` afterwards.
 * Nothing when switched off. Counted in `store`'s database when given (every
 * instance on it shares the budget), else in this process's memory.
 */
export async function registerRateLimit(
  scope: FastifyInstance,
  limit: RateLimit | undefined,
  store?: Queryable,
): Promise<void> {
  if (!limit) return;
  // Every limited route may answer 429; say so in /openapi.json (in the route's error shape: see server.ts).
  scope.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, response: { ...(route.schema?.response as object | undefined), 429: ErrorA } };
  });
  await scope.register(rateLimit, {
    global: true,
    ...limitOptions(limit),
    ...(store ? { store: databaseRateLimitStore(store) } : {}),
  });
}

/** Route options for analytics: a budget of their own, a fifth of the default. */
export function analyticsRateLimit(limit: RateLimit | undefined): { rateLimit?: RateLimitOptions } {
  if (!limit) return {};
  return { rateLimit: limitOptions({ ...limit, max: Math.max(1, Math.floor(limit.max / ANALYTICS_SHARE)) }) };
}
