import { OutpostError } from './outpost-error.js';

/** The service answered with a body that does not match the agent protocol. */
export class ProtocolError extends OutpostError {
  readonly code = 'PROTOCOL_VIOLATION';
}
