import { OutpostError } from './outpost-error.js';

/** Configuration could not be parsed; the message names every bad variable. */
export class ConfigError extends OutpostError {
  readonly code = 'CONFIG_INVALID';
}
