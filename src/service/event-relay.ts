import { randomUUID } from 'node:crypto';
import type { Logger } from '../logging.js';
import type { Database } from './db/database.js';
import { reportDatabaseFailure } from './db/connection-errors.js';
import type { ServiceEvents } from './events.js';
import { notifyAll } from './store/notifications.js';

/** The NOTIFY channel every instance of the service speaks on. */
export const EVENTS_CHANNEL = 'outpost_events';
/** PostgreSQL refuses payloads of 8000 bytes and more; this leaves room for the envelope. */
const MAX_PAYLOAD_CHARS = 7000;
/**
 * Finished sessions are gathered this long before they go out (queued jobs
 * go at once, and take them along): result batches finish sessions many times
 * a second, and every NOTIFY is a statement. Their waiters elsewhere only
 * hear of them this much later; those also look at the database every second.
 */
const SESSIONS_FINISHED_WINDOW_MS = 100;

/** What one NOTIFY carries: who sent it, and ids only (every instance reads the rest from the database). */
interface Envelope {
  from: string;
  jobsQueued?: string[];
  sessionsFinished?: string[];
}

export interface EventRelay {
  close(): Promise<void>;
}

/**
 * Tells the other service instances on the same database what woke waiters
 * here (jobs queued at a location, a session finished), and tells this
 * instance's waiters what the others said, through LISTEN/NOTIFY: a job
 * queued by instance A wakes a long poll held by instance B at once. What
 * happens within one event-loop turn goes out as one statement; sessions
 * finished, within SESSIONS_FINISHED_WINDOW_MS.
 *
 * Only wake-ups travel: `sessionCompleted`, whose follow-ups (alerts, group
 * runs) must happen once, stays with the instance that completed the
 * session. A notification lost (the listening connection was down) costs
 * latency only: waiters read the database again every second anyway.
 */
export async function relayEvents(db: Database, events: ServiceEvents, logger: Logger): Promise<EventRelay> {
  const self = randomUUID();
  const jobsQueued = new Set<string>();
  const sessionsFinished = new Set<string>();
  let flushing: Promise<void> | undefined;
  let immediate: NodeJS.Immediate | undefined;
  let timer: NodeJS.Timeout | undefined;
  // Set while emitting what another instance said, so it is not sent back out.
  let relaying = false;

  const flush = async () => {
    const payloads = envelopes(self, [...jobsQueued], [...sessionsFinished]);
    jobsQueued.clear();
    sessionsFinished.clear();
    try {
      await notifyAll(db, EVENTS_CHANNEL, payloads);
    } catch (error) {
      // Waiters elsewhere find the news on their next look at the database.
      if (!reportDatabaseFailure(db.outage, logger, 'telling other instances of queued jobs', error)) {
        logger.warn({ err: error }, 'telling other instances of queued jobs failed; they find them by polling');
      }
    }
  };
  const send = () => {
    clearImmediate(immediate);
    clearTimeout(timer);
    immediate = timer = undefined;
    flushing = (flushing ?? Promise.resolve()).then(flush);
  };
  // Queued jobs go out at the end of the turn: a long poll elsewhere may be waiting for them.
  const sendNow = () => {
    if (immediate) return;
    clearTimeout(timer);
    timer = undefined;
    immediate = setImmediate(send);
  };
  const sendSoon = () => {
    if (immediate || timer) return;
    timer = setTimeout(send, SESSIONS_FINISHED_WINDOW_MS);
    timer.unref();
  };
  const onJobsQueued = (locationId: string) => {
    if (relaying) return;
    jobsQueued.add(locationId);
    sendNow();
  };
  const onSessionFinished = (sessionId: string) => {
    if (relaying) return;
    sessionsFinished.add(sessionId);
    sendSoon();
  };

  const stop = await db.listen(EVENTS_CHANNEL, (payload) => {
    const envelope = parse(payload);
    if (!envelope || envelope.from === self) return;
    relaying = true;
    try {
      for (const locationId of envelope.jobsQueued ?? []) events.emit('jobsQueued', locationId);
      for (const sessionId of envelope.sessionsFinished ?? []) events.emit('sessionFinished', sessionId);
    } finally {
      relaying = false;
    }
  });
  events.on('jobsQueued', onJobsQueued);
  events.on('sessionFinished', onSessionFinished);

  return {
    async close() {
      events.off('jobsQueued', onJobsQueued);
      events.off('sessionFinished', onSessionFinished);
      await stop();
      // What this instance did last still goes out.
      if (immediate || timer) send();
      await flushing;
    },
  };
}

/** Ids split over as many payloads as keep each under PostgreSQL's limit. */
function envelopes(from: string, jobsQueued: string[], sessionsFinished: string[]): string[] {
  const out: string[] = [];
  let current: Envelope = { from };
  let size = JSON.stringify(current).length;
  const add = (key: 'jobsQueued' | 'sessionsFinished', id: string) => {
    const cost = JSON.stringify(id).length + key.length + 6;
    if (size + cost > MAX_PAYLOAD_CHARS) {
      out.push(JSON.stringify(current));
      current = { from };
      size = JSON.stringify(current).length;
    }
    (current[key] ??= []).push(id);
    size += cost;
  };
  for (const id of jobsQueued) add('jobsQueued', id);
  for (const id of sessionsFinished) add('sessionsFinished', id);
  if (current.jobsQueued || current.sessionsFinished) out.push(JSON.stringify(current));
  return out;
}

function parse(payload: string): Envelope | undefined {
  try {
    const value = JSON.parse(payload) as unknown;
    if (typeof value !== 'object' || value === null || typeof (value as Envelope).from !== 'string') return undefined;
    const envelope = value as Envelope;
    const ids = (list: unknown) => (Array.isArray(list) ? list.filter((id): id is string => typeof id === 'string') : []);
    return { from: envelope.from, jobsQueued: ids(envelope.jobsQueued), sessionsFinished: ids(envelope.sessionsFinished) };
  } catch {
    return undefined;
  }
}
