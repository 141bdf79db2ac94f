import { OutpostError } from './outpost-error.js';

/** The service refused the private location key (401/403). */
export class KeyRefusedError extends OutpostError {
  readonly code = 'KEY_REFUSED';
}
