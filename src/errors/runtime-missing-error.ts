import { OutpostError } from './outpost-error.js';

/** A job asked for a runtime this agent has not installed. */
export class RuntimeMissingError extends OutpostError {
  readonly code = 'RUNTIME_NOT_INSTALLED';
}
