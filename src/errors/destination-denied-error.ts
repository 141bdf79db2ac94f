import { OutpostError } from './outpost-error.js';

/** A connection was refused before it was opened: the address is outside what the destination policy allows. */
export class DestinationDeniedError extends OutpostError {
  readonly code = 'DESTINATION_DENIED';
}
