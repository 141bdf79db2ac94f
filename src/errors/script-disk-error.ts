import { OutpostError } from './outpost-error.js';

/** A script check wrote more to disk than a check may; it was stopped. */
export class ScriptDiskError extends OutpostError {
  readonly code = 'SCRIPT_DISK_LIMIT';
}
