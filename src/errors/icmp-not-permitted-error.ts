import { OutpostError } from './outpost-error.js';

/** The agent may not open ICMP sockets: its container lacks the NET_RAW capability. */
export class IcmpNotPermittedError extends OutpostError {
  readonly code = 'ICMP_NOT_PERMITTED';
}
