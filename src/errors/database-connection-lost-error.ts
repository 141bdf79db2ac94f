import { OutpostError } from './outpost-error.js';

/**
 * The connection to PostgreSQL went away while a statement or COMMIT was on
 * its way: the change may or may not have been saved, so it is not repeated.
 */
export class DatabaseConnectionLostError extends OutpostError {
  readonly code = 'DATABASE_CONNECTION_LOST';
}
