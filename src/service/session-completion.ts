import type { ServiceEvents } from './events.js';
import type { Queryable } from './db/database.js';
import { FINAL_STATUSES } from './session-status.js';
import { getSessionRow, type SessionRow } from './store/sessions.js';

/** Read the session again at least this often: a completion on another instance may go untold (see event-relay.ts). */
const RECHECK_MS = 1000;

export type SessionWait = { finished: SessionRow } | { running: SessionRow } | { missing: true };

/** Resolves when the session completes (on any instance that tells: see event-relay.ts), after `ms`, or when `signal` aborts. Never rejects. */
function nextCompletion(events: ServiceEvents, sessionId: string, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      events.off('sessionFinished', onCompleted);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const onCompleted = (finished: string) => {
      if (finished === sessionId) done();
    };
    const timer = setTimeout(done, ms);
    events.on('sessionFinished', onCompleted);
    signal.addEventListener('abort', done);
    if (signal.aborted) done();
  });
}

/**
 * Waits up to `ms` for the account's session to reach a final status: the
 * session as it then is, finished or still running, or missing when the
 * account has no such session.
 */
export async function waitForSessionEnd(
  db: Queryable,
  events: ServiceEvents,
  accountId: string,
  sessionId: string,
  ms: number,
  signal: AbortSignal,
): Promise<SessionWait> {
  const deadline = Date.now() + ms;
  for (;;) {
    const session = await getSessionRow(db, accountId, sessionId);
    if (!session) return { missing: true };
    if (FINAL_STATUSES.has(session.status)) return { finished: session };
    const left = deadline - Date.now();
    if (left <= 0 || signal.aborted) return { running: session };
    await nextCompletion(events, sessionId, Math.min(left, RECHECK_MS), signal);
  }
}
