import { describe, expect, it } from 'vitest';
import { sessionStatus, type ResultFlags } from '../../src/service/session-status.js';

const ok: ResultFlags = { has_errors: false, has_failures: false, is_degraded: false, is_cancelled: false, timed_out: false };
const failed = { ...ok, has_failures: true };
const errored = { ...ok, has_errors: true, has_failures: true };
const degraded = { ...ok, is_degraded: true };
const timedOut = { ...ok, has_errors: true, timed_out: true };
const cancelled = { ...ok, is_cancelled: true };

describe('session status', () => {
  it('is STARTED until a job is claimed, then PROGRESS', () => {
    expect(sessionStatus(2, [], false)).toBe('STARTED');
    expect(sessionStatus(2, [], true)).toBe('PROGRESS');
    expect(sessionStatus(2, [ok], true)).toBe('PROGRESS');
  });

  it('shows a failure or degradation while other locations still run', () => {
    expect(sessionStatus(3, [ok, failed], true)).toBe('PROGRESS_FAILED');
    expect(sessionStatus(3, [degraded, failed], true)).toBe('PROGRESS_FAILED');
    expect(sessionStatus(3, [ok, degraded], true)).toBe('PROGRESS_DEGRADED');
  });

  it('completes as FAILED, TIMED_OUT, DEGRADED or PASSED, in that precedence', () => {
    expect(sessionStatus(1, [ok], true)).toBe('PASSED');
    expect(sessionStatus(2, [ok, errored], true)).toBe('FAILED');
    expect(sessionStatus(3, [failed, timedOut, degraded], true)).toBe('FAILED');
    expect(sessionStatus(2, [timedOut, degraded], true)).toBe('TIMED_OUT');
    expect(sessionStatus(2, [ok, degraded], true)).toBe('DEGRADED');
  });

  it('is CANCELLED only when every location was cancelled', () => {
    expect(sessionStatus(2, [cancelled, cancelled], true)).toBe('CANCELLED');
    expect(sessionStatus(2, [cancelled, ok], true)).toBe('PASSED');
  });

  it('does not count a timed-out location as running-failed', () => {
    expect(sessionStatus(2, [timedOut], true)).toBe('PROGRESS');
  });
});
