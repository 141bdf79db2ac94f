import { OutpostError } from './outpost-error.js';

/** An API check's teardown script threw (or did not load), after the request was made. */
export class ApiTeardownScriptError extends OutpostError {
  readonly code = 'API_TEARDOWN_SCRIPT_FAILED';
}
