/**
 * The agent's shutdown, in the order that loses nothing: stop taking jobs,
 * give back what has not started, let running jobs finish within the grace
 * period (stopping them when it is spent), flush results, say goodbye, then
 * close every part. Each step is bounded, so the whole fits in the grace
 * period whatever the service, Redis or the jobs do; what the service does
 * not take back goes back at lease expiry, and the log says so.
 */
import type { Logger } from '../logging.js';
import type { Job } from '../protocol/agent-api.js';
import { sleep, within } from './backoff.js';
import type { JobSupervisor } from './job-supervisor.js';

export interface DrainParts {
  graceMs: number;
  logger: Logger;
  supervisor: JobSupervisor;
  /** Stops claiming; resolves when no claim is under way. */
  stopClaiming(): Promise<unknown>;
  /** Pauses the lanes; resolves when no new job can start. */
  pauseLanes(): Promise<unknown>;
  /** Drops jobs that have not started from the lanes. */
  forget(jobs: readonly Job[]): Promise<unknown>;
  /** Tells the service this agent is going: it releases every job of this agent's but `running`; answers how many it released. */
  goodbye(running: string[], reason: string, signal: AbortSignal): Promise<number>;
  /** Sends the results still held, for at most `ms`. */
  flushResults(ms: number): Promise<void>;
  /** The lease the service gave, for what the log says of jobs left to it. */
  leaseSeconds(): number;
}

/** A part closed after the drain, in order, each given at most `withinMs`. */
export interface Closer {
  /** Whatever it returns is awaited. */
  close(): unknown;
  withinMs: number;
}

export async function shutDown(parts: DrainParts, closers: readonly Closer[]): Promise<void> {
  await drain(parts);
  for (const closer of closers) await within(closer.withinMs, Promise.resolve(closer.close()));
}

async function drain(parts: DrainParts): Promise<void> {
  const { logger, supervisor } = parts;
  const deadline = Date.now() + parts.graceMs;
  const left = () => Math.max(0, deadline - Date.now());
  // A goodbye gets a second even when the grace period is spent: it saves the other agents a lease of waiting.
  const bounded = (ms: number) => AbortSignal.timeout(Math.max(1000, Math.min(ms, left())));
  logger.info({ graceMs: parts.graceMs }, 'shutting down: no new jobs; running jobs may finish');
  await within(Math.min(2000, left()), parts.stopClaiming());
  await within(Math.min(2000, left()), parts.pauseLanes());

  // What has not started goes back at once, and so does whatever a claim this
  // agent stopped waiting for had leased: goodbye releases every job of this
  // agent's but the running ones.
  const waiting = supervisor.takeWaiting();
  void parts.forget(waiting);
  const running = supervisor.ids().started;
  const released = await parts.goodbye(running, 'agent shutting down', bounded(3000)).catch(() => undefined);
  if (released !== undefined) logger.info({ released, running: running.length }, `released ${released} jobs that had not started`);
  else if (waiting.length > 0) logger.warn({ jobs: waiting.length }, `the service did not take back ${waiting.length} waiting jobs; they go back at lease expiry`);

  // Running jobs may finish within the grace period, less what the last steps need.
  const reserve = Math.min(3000, parts.graceMs / 4);
  const drained = await waitUntil(() => supervisor.count('running') === 0, left() - reserve);
  if (!drained) {
    const stopped = supervisor.stopRunning('shutdown');
    logger.warn({ jobs: stopped }, `grace period over: stopping ${stopped} running jobs; the service offers them again`);
    await waitUntil(() => supervisor.count('running') === 0, Math.min(2000, left()));
  }
  await parts.flushResults(Math.min(left(), 10_000));

  // Jobs stopped, and results the service did not take: offered again now, not at lease expiry.
  const unfinished = supervisor.ids();
  const said = await parts.goodbye([], 'agent stopped', bounded(2000)).catch(() => undefined);
  const remaining = unfinished.started.length + unfinished.waiting.length;
  if (said === undefined && remaining > 0) {
    logger.warn({ jobs: remaining }, `the service did not answer the goodbye; jobs of this agent's go back at lease expiry (${parts.leaseSeconds()} s)`);
  }
}

export async function waitUntil(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() >= deadline) return false;
    await sleep(Math.min(50, deadline - Date.now()));
  }
  return true;
}
