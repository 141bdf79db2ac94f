export const QUICK_RANGES = [
  'last24Hours',
  'last7Days',
  'last30Days',
  'thisWeek',
  'thisMonth',
  'lastWeek',
  'lastMonth',
] as const;
export type QuickRange = (typeof QUICK_RANGES)[number];

const DAY = 86_400_000;

/** Weeks start on Monday, months on the 1st, both at 00:00 UTC. */
export function quickRange(range: QuickRange, now: Date): { from: Date; to: Date } {
  const startOfDay = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const startOfWeek = startOfDay - ((now.getUTCDay() + 6) % 7) * DAY;
  const startOfMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  switch (range) {
    case 'last24Hours':
      return { from: new Date(now.getTime() - DAY), to: now };
    case 'last7Days':
      return { from: new Date(now.getTime() - 7 * DAY), to: now };
    case 'last30Days':
      return { from: new Date(now.getTime() - 30 * DAY), to: now };
    case 'thisWeek':
      return { from: new Date(startOfWeek), to: now };
    case 'thisMonth':
      return { from: new Date(startOfMonth), to: now };
    case 'lastWeek':
      return { from: new Date(startOfWeek - 7 * DAY), to: new Date(startOfWeek) };
    case 'lastMonth':
      return { from: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)), to: new Date(startOfMonth) };
  }
}

/**
 * A point in time as users send it: unix seconds (the spec's description),
 * unix milliseconds, or an ISO 8601 date. Undefined when it is none of those.
 */
export function parseInstant(text: string): Date | undefined {
  if (/^\d+(\.\d+)?$/.test(text)) {
    const value = Number(text);
    // Ten digits of seconds reach 2286; anything longer is milliseconds.
    return storable(new Date(value >= 1e11 ? value : value * 1000));
  }
  const parsed = Date.parse(text);
  return Number.isNaN(parsed) ? undefined : storable(new Date(parsed));
}

/** Years 1 to 9999: a Date past them is invalid, or one PostgreSQL refuses. */
function storable(date: Date): Date | undefined {
  const year = date.getUTCFullYear();
  return Number.isFinite(date.getTime()) && year >= 1 && year <= 9999 ? date : undefined;
}
