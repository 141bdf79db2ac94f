import { OutpostError } from './outpost-error.js';

/** ping ran but gave up without statistics, for a reason it printed. */
export class PingError extends OutpostError {
  readonly code = 'PING_FAILED';
}
