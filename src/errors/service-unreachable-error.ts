import { OutpostError } from './outpost-error.js';

/** The service could not be reached or answered with a server error. */
export class ServiceUnreachableError extends OutpostError {
  readonly code = 'SERVICE_UNREACHABLE';
}
