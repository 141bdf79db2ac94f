/**
 * What to report when a probe run ends in an exception: the run's own
 * deadline, a cancellation from outside, or the error itself.
 */
import { OutpostError, ProbeTimeoutError } from '../../errors/index.js';
import type { ResultError } from '../../protocol/agent-api.js';

export interface RunSignals {
  /** Aborted by the probe's own timer when the run's budget is spent. */
  deadline: AbortSignal;
  /** The job's signal: cancellation or agent shutdown. */
  cancel: AbortSignal;
}

/**
 * Aborts are checked first: aborting tears sockets and processes down, and
 * whatever error that surfaces as is a symptom of the abort, not the cause.
 * `describe` covers errors that are not OutpostErrors.
 */
export function describeRunFailure(
  error: unknown,
  signals: RunSignals,
  describe: (error: unknown) => ResultError,
): ResultError {
  if (signals.deadline.aborted) return asTimeout(signals.deadline.reason);
  if (signals.cancel.aborted) {
    const reason: unknown = signals.cancel.reason;
    if (reason instanceof OutpostError) return reason.toJSON();
    if (reason instanceof Error && reason.name === 'TimeoutError') {
      return new ProbeTimeoutError(`The run exceeded its time budget: ${reason.message}`).toJSON();
    }
    return { code: 'CANCELLED', message: 'The run was cancelled before it finished' };
  }
  if (error instanceof OutpostError) return error.toJSON();
  return describe(error);
}

function asTimeout(reason: unknown): ResultError {
  if (reason instanceof ProbeTimeoutError) return reason.toJSON();
  return new ProbeTimeoutError(reason instanceof Error ? reason.message : String(reason)).toJSON();
}

/** The job's time budget, or `fallback` when the job gave none that makes sense. */
export function budgetMs(timeoutMs: number, fallback: number): number {
  return Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : fallback;
}

/** Microsecond precision: loopback round trips take well under 0.1 ms and must not read as 0. */
export function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
