import { OutpostError } from './outpost-error.js';

/** REDIS_URL is unset and no redis-server binary can be started. */
export class RedisServerMissingError extends OutpostError {
  readonly code = 'REDIS_SERVER_MISSING';
}
