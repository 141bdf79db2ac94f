import { OutpostError } from './outpost-error.js';

/** A job's settings do not fit its check type. */
export class InvalidSettingsError extends OutpostError {
  readonly code = 'INVALID_SETTINGS';
}
