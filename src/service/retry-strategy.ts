/**
 * Retries of failed location results: which strategy a run uses, whether a
 * failure is retried, and after how long. Pure: the store applies it when it
 * records a result (src/service/store/jobs.ts), tests apply it alone.
 */

export type RetryType = 'FIXED' | 'LINEAR' | 'EXPONENTIAL' | 'NO_RETRIES';

export interface RetryStrategy {
  type: RetryType;
  baseBackoffSeconds: number;
  maxRetries: number;
  maxDurationSeconds: number;
  /** Accepted and kept; a private location's retry runs at the same location, as the first attempt did. */
  sameRegion: boolean;
  /** [] retries every failure; otherwise only failures of these kinds (NETWORK_ERROR or agent error codes). */
  onlyOn: string[];
}

/** The comparable product's defaults for fields a strategy leaves out. */
export const RETRY_DEFAULTS = { baseBackoffSeconds: 60, maxRetries: 2, maxDurationSeconds: 600 } as const;
/** At most this many retries per location, whatever a strategy asks. */
export const MAX_RETRIES = 10;
/** No run goes on retrying for longer than this (seconds since the session started). */
export const MAX_RETRY_DURATION_SECONDS = 600;
/** What the deprecated doubleCheck meant: one more try straight away. */
export const DOUBLE_CHECK: RetryStrategy = {
  type: 'FIXED',
  baseBackoffSeconds: 0,
  maxRetries: 1,
  maxDurationSeconds: MAX_RETRY_DURATION_SECONDS,
  sameRegion: false,
  onlyOn: [],
};

/**
 * Error codes the agent reports when the request never got a full answer
 * (src/errors): connection, DNS, TLS, time-outs and broken exchanges.
 */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'CONNECTION_FAILED',
  'DNS_FAILURE',
  'TLS_FAILURE',
  'HTTP_FAILURE',
  'TIMEOUT',
  'PING_FAILED',
]);

type StrategyInput = Partial<Omit<RetryStrategy, 'type'>> & { type?: string };

function normalised(input: StrategyInput): RetryStrategy | null {
  const type = (input.type ?? 'FIXED') as RetryType;
  const maxRetries = Math.min(MAX_RETRIES, Math.floor(input.maxRetries ?? RETRY_DEFAULTS.maxRetries));
  if (type === 'NO_RETRIES' || maxRetries <= 0) return null;
  return {
    type,
    baseBackoffSeconds: input.baseBackoffSeconds ?? RETRY_DEFAULTS.baseBackoffSeconds,
    maxRetries,
    maxDurationSeconds: Math.min(MAX_RETRY_DURATION_SECONDS, input.maxDurationSeconds ?? RETRY_DEFAULTS.maxDurationSeconds),
    sameRegion: input.sameRegion ?? true,
    onlyOn: input.onlyOn ?? [],
  };
}

/**
 * The strategy a run uses: the group's when it sets one (an object), the
 * check's own when the group says FALLBACK (a group stores null as FALLBACK,
 * its default) or the check is in no group. A check with no strategy but the
 * deprecated doubleCheck set retries once straight away.
 */
export function effectiveRetryStrategy(
  check: Readonly<Record<string, unknown>>,
  group?: Readonly<Record<string, unknown>>,
): RetryStrategy | null {
  if (group && group.retryStrategy !== null && typeof group.retryStrategy === 'object') {
    return normalised(group.retryStrategy);
  }
  if (check.retryStrategy !== null && typeof check.retryStrategy === 'object') return normalised(check.retryStrategy);
  return check.doubleCheck === true ? DOUBLE_CHECK : null;
}

/** Seconds to wait before retry number `retry` (1 for the first). */
export function backoffSeconds(strategy: RetryStrategy, retry: number): number {
  const base = strategy.baseBackoffSeconds;
  if (strategy.type === 'LINEAR') return base * retry;
  if (strategy.type === 'EXPONENTIAL') return base * 2 ** (retry - 1);
  return base;
}

export interface FailedAttempt {
  hasErrors: boolean;
  hasFailures: boolean;
  isCancelled: boolean;
  errorCode: string | null;
}

/** Whether the failure is of a kind the strategy's onlyOn names. */
export function matchesOnlyOn(onlyOn: readonly string[], errorCode: string | null): boolean {
  if (onlyOn.length === 0) return true;
  return onlyOn.some((kind) => (kind === 'NETWORK_ERROR' ? errorCode !== null && NETWORK_ERROR_CODES.has(errorCode) : kind === errorCode));
}

/**
 * Whether a location's result is retried, and after how many seconds.
 * `retriesSoFar` is how many retries came before this attempt; `elapsedSeconds`
 * how long ago the session started: a retry that would start past
 * maxDurationSeconds is not made.
 */
export function retryDelay(
  strategy: RetryStrategy | null,
  attempt: FailedAttempt,
  retriesSoFar: number,
  elapsedSeconds: number,
): number | undefined {
  if (!strategy) return undefined;
  if (attempt.isCancelled || !(attempt.hasErrors || attempt.hasFailures)) return undefined;
  if (retriesSoFar >= strategy.maxRetries) return undefined;
  if (!matchesOnlyOn(strategy.onlyOn, attempt.errorCode)) return undefined;
  const delay = backoffSeconds(strategy, retriesSoFar + 1);
  if (elapsedSeconds + delay > strategy.maxDurationSeconds) return undefined;
  return delay;
}
