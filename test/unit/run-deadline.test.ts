import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { describeRunFailure, startRunDeadline } from '../../src/agent/probes/probe-failure.js';
import { ProbeTimeoutError } from '../../src/errors/index.js';

const noDescription = () => ({ code: 'OTHER', message: 'other' });

describe('a run deadline', () => {
  it('aborts its signal with the reason when the budget is spent, and reads as a timeout', async () => {
    const job = new AbortController();
    let stage = 'connecting';
    const deadline = startRunDeadline(job.signal, 20, () => new ProbeTimeoutError(`exceeded 20 ms while ${stage}`));
    stage = 'waiting for the answer';
    await new Promise((resolve) => deadline.signal.addEventListener('abort', resolve));
    expect(deadline.signals.deadline.aborted).toBe(true);
    expect(job.signal.aborted).toBe(false);
    expect(describeRunFailure(new Error('socket hang up'), deadline.signals, noDescription)).toMatchObject({
      code: 'TIMEOUT',
      message: 'exceeded 20 ms while waiting for the answer',
    });
    deadline.end();
  });

  it('aborts when the job is stopped, which reads as a cancellation, not a timeout', () => {
    const job = new AbortController();
    const deadline = startRunDeadline(job.signal, 60_000, () => new ProbeTimeoutError('never'));
    job.abort('lost');
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.signal.reason).toBe('lost');
    expect(deadline.signals.deadline.aborted).toBe(false);
    expect(describeRunFailure(new Error('aborted'), deadline.signals, noDescription).code).toBe('CANCELLED');
    deadline.end();
  });

  it('starts aborted for a job stopped before it began', () => {
    const job = new AbortController();
    job.abort('shutdown');
    const deadline = startRunDeadline(job.signal, 60_000, () => new ProbeTimeoutError('never'));
    expect(deadline.signal.aborted).toBe(true);
    deadline.end();
  });

  it('lets go of the job\'s signal and its timer when ended', async () => {
    const job = new AbortController();
    const deadline = startRunDeadline(job.signal, 10, () => new ProbeTimeoutError('late'));
    expect(getEventListeners(job.signal, 'abort')).toHaveLength(1);
    deadline.end();
    expect(getEventListeners(job.signal, 'abort')).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(deadline.signal.aborted).toBe(false);
  });
});
