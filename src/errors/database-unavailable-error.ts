import { OutpostError } from './outpost-error.js';

/**
 * PostgreSQL could not be reached, or the connection went away before the
 * work was committed: nothing was saved, and trying again later is safe.
 */
export class DatabaseUnavailableError extends OutpostError {
  readonly code = 'DATABASE_UNAVAILABLE';
}
