import { OutpostError } from './outpost-error.js';

/** A name server's answer could not be used: malformed, cut short, or not an answer to the query sent. */
export class DnsResponseError extends OutpostError {
  readonly code = 'DNS_RESPONSE_INVALID';
}
