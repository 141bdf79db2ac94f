import { OutpostError } from './outpost-error.js';

/** A host name could not be resolved. */
export class DnsError extends OutpostError {
  readonly code = 'DNS_FAILURE';
}
