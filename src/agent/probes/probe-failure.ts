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

/** A run's time budget joined with the job's own signal. */
export interface RunDeadline {
  /** Aborts when the budget is spent or the job is stopped, whichever comes first. */
  signal: AbortSignal;
  /** Which of the two it was, for describeRunFailure. */
  signals: RunSignals;
  /** Stops the timer and lets go of the job's signal; in a finally. */
  end(): void;
}

/**
 * Starts a run's deadline. Not AbortSignal.any: on Node 20 every call builds a
 * signal followed through weak references, and a probe pays that once per
 * check (about 3 % of a busy agent's CPU in a profile). `reason` is called
 * when the budget is spent, so it can say where the run had got to.
 */
export function startRunDeadline(cancel: AbortSignal, ms: number, reason: () => Error): RunDeadline {
  const deadline = new AbortController();
  const either = new AbortController();
  const onCancel = (): void => either.abort(cancel.reason);
  const timer = setTimeout(() => {
    const error = reason();
    deadline.abort(error);
    either.abort(error);
  }, ms);
  if (cancel.aborted) onCancel();
  else cancel.addEventListener('abort', onCancel, { once: true });
  return {
    signal: either.signal,
    signals: { deadline: deadline.signal, cancel },
    end() {
      clearTimeout(timer);
      cancel.removeEventListener('abort', onCancel);
    },
  };
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
