import { OutpostError } from './outpost-error.js';

/** Redirects looped or exceeded the limit. */
export class RedirectError extends OutpostError {
  readonly code = 'TOO_MANY_REDIRECTS';
}
