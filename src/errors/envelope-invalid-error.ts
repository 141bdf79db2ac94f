import { OutpostError } from './outpost-error.js';

/** An error-event envelope an agent sent could not be read. */
export class EnvelopeInvalidError extends OutpostError {
  readonly code = 'ENVELOPE_INVALID';
}
