import { OutpostError } from './outpost-error.js';

/**
 * A secret is longer than the scrubber handles. Raised rather than skipping
 * the value, because a secret that is not scrubbed leaves the machine.
 */
export class SecretTooLargeError extends OutpostError {
  readonly code = 'SECRET_TOO_LARGE';
}
