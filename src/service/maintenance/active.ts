import type { WindowRecord } from '../store/maintenance-windows.js';

const DAY_MS = 86_400_000;

/** The start of occurrence `k` of a repeating window. */
function occurrenceStart(window: WindowRecord, k: number): number {
  const start = new Date(window.startsAt);
  const step = (window.repeatInterval ?? 1) * k;
  if (window.repeatUnit === 'MONTH') {
    const shifted = new Date(start);
    shifted.setUTCMonth(start.getUTCMonth() + step);
    return shifted.getTime();
  }
  return start.getTime() + step * (window.repeatUnit === 'WEEK' ? 7 : 1) * DAY_MS;
}

/**
 * Whether `at` falls in the window or one of its repetitions: an occurrence
 * lasts as long as the first, and none starts after repeatEndsAt.
 */
export function windowActiveAt(window: WindowRecord, at: Date): boolean {
  const first = Date.parse(window.startsAt);
  const duration = Date.parse(window.endsAt) - first;
  const now = at.getTime();
  if (now < first) return false;
  if (!window.repeatUnit) return now < first + duration;
  const until = window.repeatEndsAt ? Date.parse(window.repeatEndsAt) : Number.POSITIVE_INFINITY;
  // The last occurrence that started by now: estimated, then stepped to exactly.
  const period = (window.repeatInterval ?? 1) * (window.repeatUnit === 'WEEK' ? 7 : window.repeatUnit === 'MONTH' ? 28 : 1) * DAY_MS;
  let k = Math.max(0, Math.floor((now - first) / period));
  while (k > 0 && occurrenceStart(window, k) > now) k -= 1;
  while (occurrenceStart(window, k + 1) <= now) k += 1;
  const start = occurrenceStart(window, k);
  return start <= until && now < start + duration;
}

/** The windows among `windows` that cover a check with these tags at `at`. */
export function coveringWindows(windows: readonly WindowRecord[], tags: readonly string[], at: Date): WindowRecord[] {
  return windows.filter((window) => window.tags.some((tag) => tags.includes(tag)) && windowActiveAt(window, at));
}
