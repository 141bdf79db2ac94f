import { OutpostError } from './outpost-error.js';

/** The server could not be reached: a TCP connection refused, or an ICMP port unreachable for UDP. */
export class ConnectError extends OutpostError {
  readonly code = 'CONNECTION_FAILED';
}
