import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { account, formatFigures, publish, type SessionOutcome } from './accounting.js';

const T0 = 1_000_000;
const session = (path: string, status: string | undefined, finalAfterMs?: number, triggeredAt = T0): SessionOutcome => ({
  path,
  status,
  triggeredAt,
  finalAt: finalAfterMs === undefined ? undefined : T0 + finalAfterMs,
});

describe('fault accounting', () => {
  it('counts every session PASSED against the hits as 0 lost, 0 run twice', () => {
    const figures = account({
      scenario: 'clean',
      sessions: [session('/c/0', 'PASSED', 1000), session('/c/0', 'PASSED', 2000), session('/c/1', 'PASSED', 1500)],
      hits: new Map([['/c/0', 2], ['/c/1', 1]]),
      faultEndAt: T0 + 500,
    });
    expect(figures).toMatchObject({
      triggered: 3,
      finished: 3,
      passed: 3,
      unfinished: 0,
      lost: 0,
      runTwice: 0,
      hitsMissing: 0,
      allFinishedMs: 2000,
      afterFaultMs: 1500,
      slowestSessionMs: 2000,
    });
  });

  it('counts a TIMED_OUT session (its job given up) and one unfinished at the deadline as lost', () => {
    const figures = account({
      scenario: 'lossy',
      sessions: [session('/c/0', 'PASSED', 1000), session('/c/1', 'TIMED_OUT', 9000), session('/c/2', 'PROGRESS'), session('/c/3', undefined)],
      hits: new Map([['/c/0', 1], ['/c/2', 1]]),
    });
    expect(figures).toMatchObject({ triggered: 4, finished: 2, passed: 1, timedOut: 1, unfinished: 2, lost: 3 });
    // Anything unfinished: there is no "all finished" time.
    expect(figures.allFinishedMs).toBeNull();
    expect(figures.slowestSessionMs).toBeNull();
  });

  it('counts FAILED, DEGRADED and CANCELLED as finished but lost', () => {
    const figures = account({
      scenario: 'statuses',
      sessions: [session('/a', 'FAILED', 1), session('/b', 'DEGRADED', 1), session('/c', 'CANCELLED', 1)],
      hits: new Map([['/a', 1], ['/b', 1]]),
    });
    expect(figures).toMatchObject({ finished: 3, passed: 0, failed: 1, other: 2, lost: 3, unfinished: 0 });
  });

  it('counts hits beyond the sessions of a path as run twice, per path, never netting one path against another', () => {
    const figures = account({
      scenario: 'twice',
      sessions: [session('/c/0', 'PASSED', 1), session('/c/0', 'PASSED', 1), session('/c/1', 'PASSED', 1), session('/c/2', 'TIMED_OUT', 1)],
      // /c/0 ran three times for two sessions; /c/2 never ran: that does not offset /c/0's extra run.
      hits: new Map([['/c/0', 3], ['/c/1', 1], ['/c/9', 4]]),
    });
    expect(figures.runTwice).toBe(1);
    expect(figures.hitsMissing).toBe(0);
  });

  it('notices a session that ran (PASSED) without any request reaching the target', () => {
    const figures = account({ scenario: 'phantom', sessions: [session('/c/0', 'PASSED', 1)], hits: new Map() });
    expect(figures.hitsMissing).toBe(1);
  });

  it('takes the slowest session from its own trigger, not from the first', () => {
    const figures = account({
      scenario: 'slowest',
      sessions: [session('/a', 'PASSED', 1000), { path: '/b', status: 'PASSED', triggeredAt: T0 + 5000, finalAt: T0 + 8000 }],
      hits: new Map([['/a', 1], ['/b', 1]]),
    });
    expect(figures.slowestSessionMs).toBe(3000);
    expect(figures.allFinishedMs).toBe(8000);
  });

  it('prints one line and writes the same figures as JSON', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fault-results-'));
    try {
      const figures = account({
        scenario: 'one line',
        sessions: [session('/c/0', 'PASSED', 2500), session('/c/1', 'PROGRESS')],
        hits: new Map([['/c/0', 2]]),
        extra: { exitMs: 4200 },
      });
      const line = formatFigures(figures);
      expect(line).not.toContain('\n');
      expect(line).toContain('triggered 2');
      expect(line).toContain('lost 1');
      expect(line).toContain('run twice 1');
      expect(line).toContain('never (unfinished)');
      expect(line).toContain('exitMs 4200');
      await publish(figures, dir);
      const written = JSON.parse(await readFile(join(dir, 'one-line.json'), 'utf8'));
      expect(written).toMatchObject({ scenario: 'one line', triggered: 2, lost: 1, runTwice: 1, extra: { exitMs: 4200 } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
