import { OutpostError } from './outpost-error.js';

/** The worker thread running a probe stopped before the probe finished. */
export class ProbeThreadError extends OutpostError {
  readonly code = 'PROBE_THREAD_FAILED';
}
