import { OutpostError } from './outpost-error.js';

/** The embedded redis-server started but never became ready. */
export class RedisStartError extends OutpostError {
  readonly code = 'REDIS_START_FAILED';
}
