import { OutpostError } from './outpost-error.js';

/** A script check ran past its time budget; its whole process group was killed. */
export class ScriptTimeoutError extends OutpostError {
  readonly code = 'SCRIPT_TIMEOUT';
}
