import { afterEach, describe, expect, it, vi } from 'vitest';
import { scheduleChore, type ScheduledChore } from '../../src/agent/housekeeping/chore-schedule.js';

const EVERY_SECOND = '* * * * * *';
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function recordingLog() {
  const lines: { level: 'debug' | 'warn'; message: string }[] = [];
  return {
    lines,
    debug: (message: string) => lines.push({ level: 'debug', message }),
    warn: (message: string) => lines.push({ level: 'warn', message }),
  };
}

describe('a chore on a cron schedule', () => {
  const scheduled: ScheduledChore[] = [];
  afterEach(() => {
    for (const chore of scheduled.splice(0)) chore.stop();
    vi.restoreAllMocks();
  });

  it('runs at each time of its schedule, and at none after it is stopped', async () => {
    let runs = 0;
    const chore = scheduleChore(EVERY_SECOND, 'counting', async () => void (runs += 1), recordingLog());
    scheduled.push(chore);
    await sleep(2300);
    expect(runs).toBeGreaterThanOrEqual(2);
    chore.stop();
    const stoppedAt = runs;
    await sleep(1300);
    expect(runs).toBe(stoppedAt);
  });

  it('skips a time that comes while the run before is still going, and says so', async () => {
    const log = recordingLog();
    let started = 0;
    let release = (): void => undefined;
    const held = new Promise<void>((done) => (release = done));
    scheduled.push(
      scheduleChore(EVERY_SECOND, 'slow chore', async () => {
        started += 1;
        await held;
      }, log),
    );
    try {
      // At least two more of its times pass while the first run is held.
      await sleep(3200);
      expect(started).toBe(1);
      expect(log.lines).toContainEqual({ level: 'debug', message: 'slow chore is still running at its next time: that time is skipped' });
    } finally {
      release();
    }
    // Once it is done, the next time runs it again.
    await sleep(1300);
    expect(started).toBeGreaterThanOrEqual(2);
  });

  it('logs a run that fails and runs again at the next time', async () => {
    const log = recordingLog();
    let runs = 0;
    scheduled.push(
      scheduleChore(EVERY_SECOND, 'failing chore', async () => {
        runs += 1;
        throw new Error('disk on fire');
      }, log),
    );
    await sleep(2300);
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(log.lines.filter((line) => line.level === 'warn')).toContainEqual({
      level: 'warn',
      message: 'failing chore failed, trying again at its next time: disk on fire',
    });
  });

  it('keeps no process alive', async () => {
    const { execFileSync } = await import('node:child_process');
    // A process with only a scheduled chore left exits at once.
    const started = Date.now();
    execFileSync(process.execPath, [
      '--import',
      'tsx',
      '-e',
      `import('${new URL('../../src/agent/housekeeping/chore-schedule.ts', import.meta.url).pathname}').then((m) => m.scheduleChore('*/10 * * * *', 'idle', async () => {}, console))`,
    ], { timeout: 10_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('reads local time without Intl, whose ICU data would cost every agent megabytes', async () => {
    const formatter = vi.spyOn(Intl, 'DateTimeFormat');
    scheduled.push(scheduleChore('*/10 * * * *', 'summary', async () => {}, recordingLog()));
    scheduled.push(scheduleChore('15 3 * * MON-FRI', 'clean-up', async () => {}, recordingLog()));
    expect(formatter).not.toHaveBeenCalled();
  });
});
