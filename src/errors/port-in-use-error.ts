import { OutpostError } from './outpost-error.js';

/** The HTTP port to listen on is taken by another process. */
export class PortInUseError extends OutpostError {
  readonly code = 'PORT_IN_USE';
}
