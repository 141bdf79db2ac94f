import { OutpostError } from './outpost-error.js';

/** The service says the job is no longer this agent's (409). */
export class ConflictError extends OutpostError {
  readonly code = 'JOB_CONFLICT';
}
