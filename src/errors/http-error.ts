import { OutpostError } from './outpost-error.js';

/** The HTTP exchange failed after the connection was made. */
export class HttpError extends OutpostError {
  readonly code = 'HTTP_FAILURE';
}
