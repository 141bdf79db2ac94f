import type { ServiceEvents } from './events.js';

/**
 * Re-check the database at least this often: another instance's news arrives
 * by NOTIFY (event-relay.ts) unless its connection was down, and a retry's
 * backoff may end on an instance that died before waking anyone.
 */
const RECHECK_MS = 1000;

/**
 * Resolves when jobs are queued at the location (by this or another
 * instance), after at most `ms` or the recheck period, or when `signal`
 * aborts — whichever comes first. Never rejects.
 */
export function waitForJobs(events: ServiceEvents, locationId: string, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      events.off('jobsQueued', onQueued);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const onQueued = (queuedAt: string) => {
      if (queuedAt === locationId) done();
    };
    const timer = setTimeout(done, Math.min(ms, RECHECK_MS));
    events.on('jobsQueued', onQueued);
    signal.addEventListener('abort', done);
    if (signal.aborted) done();
  });
}
