import type { ServiceEvents } from './events.js';

/** Re-check the database at least this often, for jobs queued by another service instance. */
const RECHECK_MS = 1000;

/**
 * Resolves when jobs are queued at the location, after at most `ms`, or when
 * `signal` aborts — whichever comes first. Never rejects.
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
