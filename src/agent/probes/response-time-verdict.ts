import type { ResultError } from '../../protocol/agent-api.js';

export interface ResponseTimeThresholds {
  degradedResponseTime: number;
  maxResponseTime: number;
}

export interface Verdict {
  hasFailures: boolean;
  isDegraded: boolean;
  error: ResultError | null;
}

/**
 * The thresholds every response-time check shares: over the maximum fails,
 * over the degraded mark degrades. A verdict reached before (a status code, an
 * rcode, a failed assertion) keeps its error; the time only adds to it.
 */
export function withResponseTime(responseTime: number, thresholds: ResponseTimeThresholds, before: Verdict): Verdict {
  const overMax = responseTime > thresholds.maxResponseTime;
  return {
    hasFailures: before.hasFailures || overMax,
    isDegraded: responseTime > thresholds.degradedResponseTime,
    error:
      before.error ??
      (overMax
        ? {
            code: 'MAX_RESPONSE_TIME',
            message: `Response time ${responseTime} ms exceeded the maximum of ${thresholds.maxResponseTime} ms`,
          }
        : null),
  };
}
