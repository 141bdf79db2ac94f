import { OutpostError } from './outpost-error.js';

/** A script check's processes used more memory than a check may; they were killed. */
export class ScriptMemoryError extends OutpostError {
  readonly code = 'SCRIPT_MEMORY_LIMIT';
}
