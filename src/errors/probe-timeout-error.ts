import { OutpostError } from './outpost-error.js';

/** A probe did not finish within its time budget. */
export class ProbeTimeoutError extends OutpostError {
  readonly code = 'TIMEOUT';
}
