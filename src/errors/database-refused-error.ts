import { OutpostError } from './outpost-error.js';

/**
 * PostgreSQL answered but will not have the service: a wrong user or
 * password, or a database that does not exist. Waiting does not help.
 */
export class DatabaseRefusedError extends OutpostError {
  readonly code = 'DATABASE_REFUSED';
}
