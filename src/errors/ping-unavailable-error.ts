import { OutpostError } from './outpost-error.js';

/** The system ping command is missing or cannot be executed. */
export class PingUnavailableError extends OutpostError {
  readonly code = 'PING_UNAVAILABLE';
}
