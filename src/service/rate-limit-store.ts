import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Queryable } from './db/database.js';
import { countHit, readHits } from './store/rate-limit-windows.js';

type Done = (error: Error | null, result?: { current: number; ttl: number }) => void;

/**
 * @fastify/rate-limit's store kept in the database, so every instance of the
 * service counts against the same budget: a key's hits on any instance add up.
 * Fixed windows, as the plugin's own stores count; the plugin's
 * continueExceeding and exponentialBackoff (which the service does not use)
 * are not honoured. Routes with a budget of their own (a child) count apart,
 * under their method and address.
 */
export function databaseRateLimitStore(db: Queryable): FastifyRateLimitStoreCtor {
  class DatabaseStore implements FastifyRateLimitStore {
    constructor(private readonly prefix = '') {}

    incr(key: string, done: Done, timeWindow: number): void {
      countHit(db, this.prefix + key, timeWindow).then(
        ({ hits, ttlMs }) => done(null, { current: hits, ttl: ttlMs }),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    }

    read(key: string, done: Done): void {
      readHits(db, this.prefix + key).then(
        ({ hits, ttlMs }) => done(null, { current: hits, ttl: ttlMs }),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    }

    child(routeOptions: object): FastifyRateLimitStore {
      const route = (routeOptions as { routeInfo?: { method?: string | string[]; url?: string } }).routeInfo;
      const method = Array.isArray(route?.method) ? route.method.join(',') : (route?.method ?? '');
      return new DatabaseStore(`${this.prefix}${method}${route?.url ?? ''}-`);
    }
  }
  return DatabaseStore as unknown as FastifyRateLimitStoreCtor;
}
