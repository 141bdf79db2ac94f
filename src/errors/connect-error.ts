import { OutpostError } from './outpost-error.js';

/** A TCP connection could not be opened. */
export class ConnectError extends OutpostError {
  readonly code = 'CONNECTION_FAILED';
}
