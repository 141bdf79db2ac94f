import { describe, expect, it } from 'vitest';
import { Backoff, sleep, within } from '../../src/agent/backoff.js';

describe('backoff', () => {
  it('doubles its ceiling up to the maximum, with jitter below it', () => {
    const top = new Backoff(100, 1000, () => 1);
    expect([1, 2, 3, 4, 5, 6].map(() => top.next())).toEqual([100, 200, 400, 800, 1000, 1000]);
    const bottom = new Backoff(100, 1000, () => 0);
    expect(bottom.next()).toBe(50);
  });

  it('starts over after reset', () => {
    const backoff = new Backoff(100, 1000, () => 1);
    backoff.next();
    backoff.next();
    backoff.reset();
    expect(backoff.next()).toBe(100);
  });

  it('sleep ends early when aborted, and within gives up on slow work', async () => {
    const abort = new AbortController();
    const started = Date.now();
    const slept = sleep(10_000, abort.signal);
    abort.abort();
    await slept;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await within(20, new Promise(() => undefined))).toBeUndefined();
    expect(await within(1000, Promise.resolve(7))).toBe(7);
  });
});
