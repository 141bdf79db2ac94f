import { describe, expect, it } from 'vitest';
import { coveringWindows, windowActiveAt } from '../../src/service/maintenance/active.js';
import type { WindowRecord } from '../../src/service/store/maintenance-windows.js';

const window = (overrides: Partial<WindowRecord> = {}): WindowRecord => ({
  id: 1,
  name: 'w',
  tags: ['db'],
  startsAt: '2026-11-02T02:00:00.000Z',
  endsAt: '2026-11-02T04:00:00.000Z',
  repeatUnit: null,
  repeatInterval: null,
  repeatEndsAt: null,
  created_at: '',
  updated_at: null,
  ...overrides,
});
const at = (iso: string) => new Date(iso);

describe('maintenance windows in time', () => {
  it('covers a one-off window from its start to just before its end', () => {
    expect(windowActiveAt(window(), at('2026-11-02T01:59:59Z'))).toBe(false);
    expect(windowActiveAt(window(), at('2026-11-02T02:00:00Z'))).toBe(true);
    expect(windowActiveAt(window(), at('2026-11-02T03:59:59Z'))).toBe(true);
    expect(windowActiveAt(window(), at('2026-11-02T04:00:00Z'))).toBe(false);
    expect(windowActiveAt(window(), at('2026-11-09T03:00:00Z'))).toBe(false);
  });

  it('repeats every n days or weeks, for as long as the first occurrence', () => {
    const weekly = window({ repeatUnit: 'WEEK', repeatInterval: 1 });
    expect(windowActiveAt(weekly, at('2026-11-09T03:00:00Z'))).toBe(true);
    expect(windowActiveAt(weekly, at('2026-11-09T05:00:00Z'))).toBe(false);
    expect(windowActiveAt(weekly, at('2026-11-10T03:00:00Z'))).toBe(false);
    const everyThreeDays = window({ repeatUnit: 'DAY', repeatInterval: 3 });
    expect(windowActiveAt(everyThreeDays, at('2026-11-05T02:30:00Z'))).toBe(true);
    expect(windowActiveAt(everyThreeDays, at('2026-11-04T02:30:00Z'))).toBe(false);
  });

  it('repeats monthly on the same day of the month, and stops after repeatEndsAt', () => {
    const monthly = window({ repeatUnit: 'MONTH', repeatInterval: 1, repeatEndsAt: '2027-01-15T00:00:00Z' });
    expect(windowActiveAt(monthly, at('2026-12-02T03:00:00Z'))).toBe(true);
    expect(windowActiveAt(monthly, at('2026-12-03T03:00:00Z'))).toBe(false);
    expect(windowActiveAt(monthly, at('2027-01-02T03:00:00Z'))).toBe(true);
    expect(windowActiveAt(monthly, at('2027-02-02T03:00:00Z'))).toBe(false);
  });

  it('covers only checks with one of its tags', () => {
    const windows = [window({ tags: ['db', 'api'] })];
    expect(coveringWindows(windows, ['api', 'web'], at('2026-11-02T03:00:00Z'))).toHaveLength(1);
    expect(coveringWindows(windows, ['web'], at('2026-11-02T03:00:00Z'))).toEqual([]);
  });
});
