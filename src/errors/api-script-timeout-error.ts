import { OutpostError } from './outpost-error.js';

/** An API check's setup or teardown script ran past its 10 s (API_SCRIPT_TIMEOUT_MS). */
export class ApiScriptTimeoutError extends OutpostError {
  readonly code = 'API_SCRIPT_TIMEOUT';
}
