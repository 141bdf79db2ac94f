import { OutpostError } from './outpost-error.js';

/** An API check's setup script threw (or did not load): the request was never made. */
export class ApiSetupScriptError extends OutpostError {
  readonly code = 'API_SETUP_SCRIPT_FAILED';
}
