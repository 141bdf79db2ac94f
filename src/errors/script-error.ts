import { OutpostError } from './outpost-error.js';

/** A script check could not run to a verdict: it crashed, exited early or did not load. */
export class ScriptError extends OutpostError {
  readonly code = 'SCRIPT_ERROR';
}
