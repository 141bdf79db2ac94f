import type { SessionStatus } from '../protocol/enums.js';

export interface ResultFlags {
  has_errors: boolean;
  has_failures: boolean;
  is_degraded: boolean;
  is_cancelled: boolean;
  timed_out: boolean;
}

/**
 * A session's status from its location results so far.
 *
 * Running: STARTED until an agent takes a job, then PROGRESS, PROGRESS_FAILED
 * once any location failed, PROGRESS_DEGRADED once any was degraded.
 * Complete: FAILED beats TIMED_OUT (a location that ran and failed is a
 * verdict; one that never ran is not), TIMED_OUT beats DEGRADED, then PASSED.
 * CANCELLED when every location was cancelled.
 *
 * `results` are the FINAL results only: an attempt a retry follows
 * (resultType ATTEMPT) is no verdict, so a location being retried counts as
 * still running and the session shows PROGRESS, not PROGRESS_FAILED.
 */
export function sessionStatus(totalLocations: number, results: readonly ResultFlags[], claimed: boolean): SessionStatus {
  const failed = results.some((r) => (r.has_failures || r.has_errors) && !r.timed_out && !r.is_cancelled);
  const degraded = results.some((r) => r.is_degraded);
  if (results.length < totalLocations) {
    if (failed) return 'PROGRESS_FAILED';
    if (degraded) return 'PROGRESS_DEGRADED';
    return claimed || results.length > 0 ? 'PROGRESS' : 'STARTED';
  }
  if (results.length > 0 && results.every((r) => r.is_cancelled)) return 'CANCELLED';
  if (failed) return 'FAILED';
  if (results.some((r) => r.timed_out)) return 'TIMED_OUT';
  if (degraded) return 'DEGRADED';
  return 'PASSED';
}

export const FINAL_STATUSES: ReadonlySet<SessionStatus> = new Set(['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED']);
