import { OutpostError } from './outpost-error.js';

/** No probe or runner is registered for the job's check type. */
export class UnsupportedCheckTypeError extends OutpostError {
  readonly code = 'UNSUPPORTED_CHECK_TYPE';
}
