import { OutpostError } from './outpost-error.js';

/** The request an API check's setup scripts left (or its variables produced) cannot be sent: a bad URL, method or header. */
export class ApiRequestInvalidError extends OutpostError {
  readonly code = 'API_REQUEST_INVALID';
}
