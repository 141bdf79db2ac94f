import { EventEmitter } from 'node:events';
import type { Job } from '../protocol/agent-api.js';
import { laneOfJob } from '../protocol/api-settings.js';
import type { Lane } from '../protocol/lanes.js';

/**
 * Where a job this agent holds stands:
 * - `waiting`: claimed, queued in its lane, not started;
 * - `running`: taken from the queue and running;
 * - `reporting`: finished, its result not yet accepted by the service (its
 *   lease is still renewed, so a slow post does not get it run again).
 * A job released, lost, or reported is no longer held.
 */
export type JobState = 'waiting' | 'running' | 'reporting';

/** Why a running job was stopped by the agent rather than by its own end. */
export type StopReason = 'shutdown' | 'lost';

interface Held {
  job: Job;
  lane: Lane;
  state: JobState;
  abort?: AbortController;
}

export interface LaneCounts {
  /** Claimed and not yet finished: what counts against the lane's capacity and prefetch. */
  held: number;
  running: number;
  waiting: number;
}

/**
 * The one owner of the agent's view of its jobs. Claim room, heartbeats,
 * shutdown, a Redis restart and the service saying a job is gone all read and
 * change this, never a set of their own.
 */
export class JobSupervisor {
  readonly #jobs = new Map<string, Held>();
  readonly #events = new EventEmitter();

  /** Jobs the service just leased to this agent, not started. */
  claimed(jobs: readonly Job[]): void {
    for (const job of jobs) this.#jobs.set(job.jobId, { job, lane: laneOfJob(job), state: 'waiting' });
  }

  /**
   * The job starts: its signal aborts when the agent stops it (shutdown) or the
   * service took it back. Undefined when it is no longer held: it was released
   * or lost while it waited, and must not run.
   */
  start(jobId: string): AbortSignal | undefined {
    const held = this.#jobs.get(jobId);
    if (!held || held.state !== 'waiting') return undefined;
    held.state = 'running';
    held.abort = new AbortController();
    return held.abort.signal;
  }

  /** The job ran; its result is on its way to the service. Its slot is free. */
  finished(jobId: string): void {
    const held = this.#jobs.get(jobId);
    if (!held) return;
    held.state = 'reporting';
    held.abort = undefined;
    this.#events.emit('freed');
  }

  /** The job is no longer this agent's: reported, released, or stopped and given back. */
  forget(jobId: string): void {
    const held = this.#jobs.get(jobId);
    if (!held) return;
    this.#jobs.delete(jobId);
    if (held.state !== 'reporting') this.#events.emit('freed');
  }

  /** Takes the waiting jobs out (all, or those of `ids`), for release: none of them will run here. */
  takeWaiting(ids?: readonly string[]): Job[] {
    const taken: Job[] = [];
    for (const id of ids ?? [...this.#jobs.keys()]) {
      const held = this.#jobs.get(id);
      if (held?.state !== 'waiting') continue;
      this.#jobs.delete(id);
      taken.push(held.job);
    }
    if (taken.length > 0) this.#events.emit('freed');
    return taken;
  }

  /**
   * The service says these are no longer this agent's: waiting ones are
   * dropped, running ones stopped. Answers what was dropped and stopped.
   */
  lost(ids: readonly string[]): { dropped: Job[]; stopped: Job[] } {
    const dropped = this.takeWaiting(ids);
    const stopped: Job[] = [];
    for (const id of ids) {
      const held = this.#jobs.get(id);
      if (held?.state === 'running') {
        held.abort?.abort('lost' satisfies StopReason);
        stopped.push(held.job);
      } else if (held?.state === 'reporting') {
        // Its result is already on its way; whether it counts is the service's call.
        this.#jobs.delete(id);
      }
    }
    return { dropped, stopped };
  }

  /** Stops every running job (the grace period is over); their runners end them and say so. */
  stopRunning(reason: StopReason): number {
    let stopped = 0;
    for (const held of this.#jobs.values()) {
      if (held.state !== 'running') continue;
      held.abort?.abort(reason);
      stopped += 1;
    }
    return stopped;
  }

  /** Ids by state, for a heartbeat: running and reporting jobs both started. */
  ids(): { started: string[]; waiting: string[] } {
    const started: string[] = [];
    const waiting: string[] = [];
    for (const [id, held] of this.#jobs) (held.state === 'waiting' ? waiting : started).push(id);
    return { started, waiting };
  }

  jobsIn(state: JobState): Job[] {
    return [...this.#jobs.values()].filter((held) => held.state === state).map((held) => held.job);
  }

  counts(lane: Lane): LaneCounts {
    let running = 0;
    let waiting = 0;
    for (const held of this.#jobs.values()) {
      if (held.lane !== lane) continue;
      if (held.state === 'running') running += 1;
      else if (held.state === 'waiting') waiting += 1;
    }
    return { held: running + waiting, running, waiting };
  }

  count(state: JobState): number {
    let count = 0;
    for (const held of this.#jobs.values()) if (held.state === state) count += 1;
    return count;
  }

  /** Resolves when a slot frees, after `ms` at most, or on abort; leaves no listener behind. */
  freed(signal: AbortSignal, ms = 1000): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#events.off('freed', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#events.on('freed', done);
      signal.addEventListener('abort', done);
      if (signal.aborted) done();
    });
  }
}
