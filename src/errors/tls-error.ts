import { OutpostError } from './outpost-error.js';

/** The TLS handshake or certificate check failed. */
export class TlsError extends OutpostError {
  readonly code = 'TLS_FAILURE';
}
