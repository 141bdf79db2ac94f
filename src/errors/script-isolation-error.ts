import { OutpostError } from './outpost-error.js';

/** No isolation backend this agent may use can run the script: it was not started. */
export class ScriptIsolationError extends OutpostError {
  readonly code = 'SANDBOX_UNAVAILABLE';
}
