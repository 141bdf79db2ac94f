import { describe, expect, it } from 'vitest';
import {
  backoffSeconds,
  DOUBLE_CHECK,
  effectiveRetryStrategy,
  matchesOnlyOn,
  retryDelay,
  type RetryStrategy,
} from '../../src/service/retry-strategy.js';

const strategy = (overrides: Partial<RetryStrategy> = {}): RetryStrategy => ({
  type: 'FIXED',
  baseBackoffSeconds: 10,
  maxRetries: 3,
  maxDurationSeconds: 600,
  sameRegion: true,
  onlyOn: [],
  ...overrides,
});
const failed = { hasErrors: true, hasFailures: false, isCancelled: false, errorCode: 'CONNECTION_FAILED' };

describe('retry strategy', () => {
  it('waits the same, linearly longer, or doubling', () => {
    expect([1, 2, 3].map((n) => backoffSeconds(strategy(), n))).toEqual([10, 10, 10]);
    expect([1, 2, 3].map((n) => backoffSeconds(strategy({ type: 'LINEAR' }), n))).toEqual([10, 20, 30]);
    expect([1, 2, 3].map((n) => backoffSeconds(strategy({ type: 'EXPONENTIAL' }), n))).toEqual([10, 20, 40]);
  });

  it('retries failures up to maxRetries and within maxDurationSeconds', () => {
    expect(retryDelay(strategy(), failed, 0, 0)).toBe(10);
    expect(retryDelay(strategy(), failed, 2, 0)).toBe(10);
    expect(retryDelay(strategy(), failed, 3, 0)).toBeUndefined();
    expect(retryDelay(strategy({ maxDurationSeconds: 30 }), failed, 0, 25)).toBeUndefined();
    expect(retryDelay(null, failed, 0, 0)).toBeUndefined();
  });

  it('never retries a pass or a cancellation', () => {
    expect(retryDelay(strategy(), { ...failed, hasErrors: false }, 0, 0)).toBeUndefined();
    expect(retryDelay(strategy(), { ...failed, isCancelled: true }, 0, 0)).toBeUndefined();
  });

  it('retries only what onlyOn names: NETWORK_ERROR or an error code', () => {
    expect(matchesOnlyOn([], null)).toBe(true);
    expect(matchesOnlyOn(['NETWORK_ERROR'], 'CONNECTION_FAILED')).toBe(true);
    expect(matchesOnlyOn(['NETWORK_ERROR'], 'DNS_FAILURE')).toBe(true);
    expect(matchesOnlyOn(['NETWORK_ERROR'], 'ASSERTION_FAILED')).toBe(false);
    expect(matchesOnlyOn(['NETWORK_ERROR'], null)).toBe(false);
    expect(matchesOnlyOn(['SCRIPT_TIMEOUT'], 'SCRIPT_TIMEOUT')).toBe(true);
  });

  it('takes the group strategy, the check\'s under FALLBACK, and doubleCheck as one retry', () => {
    const own = { retryStrategy: { baseBackoffSeconds: 5, maxRetries: 1 } };
    expect(effectiveRetryStrategy(own)).toMatchObject({ type: 'FIXED', baseBackoffSeconds: 5, maxRetries: 1, maxDurationSeconds: 600 });
    expect(effectiveRetryStrategy(own, { retryStrategy: 'FALLBACK' })).toMatchObject({ baseBackoffSeconds: 5 });
    expect(effectiveRetryStrategy(own, { retryStrategy: { type: 'LINEAR', baseBackoffSeconds: 7 } })).toMatchObject({
      type: 'LINEAR',
      baseBackoffSeconds: 7,
      maxRetries: 2,
    });
    expect(effectiveRetryStrategy(own, { retryStrategy: null })).toMatchObject({ baseBackoffSeconds: 5 });
    expect(effectiveRetryStrategy({}, { retryStrategy: { type: 'NO_RETRIES' } })).toBeNull();
    expect(effectiveRetryStrategy({ retryStrategy: null, doubleCheck: true })).toEqual(DOUBLE_CHECK);
    expect(effectiveRetryStrategy({ retryStrategy: null, doubleCheck: false })).toBeNull();
    expect(effectiveRetryStrategy({ retryStrategy: { type: 'NO_RETRIES' }, doubleCheck: true })).toBeNull();
    expect(effectiveRetryStrategy({ retryStrategy: { maxRetries: 50 } })!.maxRetries).toBe(10);
  });
});
