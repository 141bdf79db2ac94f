import { OutpostError } from './outpost-error.js';

/** A runtime id that no runtime record has; the message lists the ones there are. */
export class UnknownRuntimeError extends OutpostError {
  readonly code = 'RUNTIME_UNKNOWN';
}
