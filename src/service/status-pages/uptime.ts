import type { ServiceDay } from '../store/status-pages.js';

/** Days an uptime bar covers, today (UTC) included. */
export const UPTIME_DAYS = 90;
const DAY_MS = 86_400_000;

export interface UptimeDay {
  /** YYYY-MM-DD, a UTC day. */
  date: string;
  runs: number;
  passed: number;
  /** Percent of runs that passed; null on a day without runs. */
  availability: number | null;
}

export interface Uptime {
  /** Oldest first, UPTIME_DAYS of them, the last one today. */
  days: UptimeDay[];
  /** Over every run of the period; null when there was none. */
  availability: number | null;
}

/** The UTC midnight UPTIME_DAYS - 1 days before today's: where the bar starts. */
export function uptimeStart(now: Date): Date {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(today - (UPTIME_DAYS - 1) * DAY_MS);
}

const percent = (passed: number, runs: number) => (runs === 0 ? null : (100 * passed) / runs);

/** Each service's bar, from its runs per day (services without a row get days without data). */
export function uptimeByService(serviceIds: readonly string[], rows: readonly ServiceDay[], now: Date): Map<string, Uptime> {
  const start = uptimeStart(now).getTime();
  const dates = Array.from({ length: UPTIME_DAYS }, (_, index) => new Date(start + index * DAY_MS).toISOString().slice(0, 10));
  const byService = new Map<string, Map<string, ServiceDay>>();
  for (const row of rows) {
    let days = byService.get(row.serviceId);
    if (!days) byService.set(row.serviceId, (days = new Map<string, ServiceDay>()));
    days.set(row.day, row);
  }
  const result = new Map<string, Uptime>();
  for (const id of serviceIds) {
    const stored = byService.get(id);
    let runs = 0;
    let passed = 0;
    const days = dates.map((date): UptimeDay => {
      const day = stored?.get(date);
      runs += day?.runs ?? 0;
      passed += day?.passed ?? 0;
      return { date, runs: day?.runs ?? 0, passed: day?.passed ?? 0, availability: day ? percent(day.passed, day.runs) : null };
    });
    result.set(id, { days, availability: percent(passed, runs) });
  }
  return result;
}

/**
 * A percentage as people read uptime: never rounded up to 100 (99.996 is
 * "99.99"), two decimals below 100, none at 100.
 */
export function formatPercent(value: number): string {
  if (value >= 100) return '100';
  return (Math.floor(value * 100) / 100).toFixed(2);
}

/** The colour band of a day's bar: 0 (all passed) to 4 (below 90 %); 'none' without data. */
export function availabilityBand(availability: number | null): 0 | 1 | 2 | 3 | 4 | 'none' {
  if (availability === null) return 'none';
  if (availability >= 100) return 0;
  if (availability >= 99) return 1;
  if (availability >= 95) return 2;
  if (availability >= 90) return 3;
  return 4;
}
