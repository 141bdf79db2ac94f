import type { ServiceContext } from './context.js';
import { sendDueReminders } from './alerts/engine.js';
import { releaseGroupRuns } from './group-runs.js';
import { reportDatabaseFailure } from './db/connection-errors.js';
import { startRun } from './runs.js';
import { claimDueChecks } from './store/checks.js';
import { sweepJobs } from './store/jobs.js';

/** A sweep this long after the last one that succeeded first gives every lease one lease length. */
const SWEEP_GAP_MS = 5000;

/**
 * Each tick: start a run for every check whose time has come, re-offer jobs
 * whose lease ran out, time out what no agent took, move group runs on, send
 * alert reminders, e-mail and alerts that are due, and write pending root
 * cause analyses.
 * Ticks never overlap. A tick that fails is not retried before the next one;
 * one that fails because the database is unreachable is told to the
 * database's outage log, which logs each outage once.
 */
export class Scheduler {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  /** When a lease sweep last succeeded in this process; undefined before the first. */
  #lastSweep: number | undefined;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly tickMs: number,
  ) {}

  start(): void {
    this.#timer = setInterval(() => {
      if (!this.#running) this.#running = this.tick().finally(() => (this.#running = undefined));
    }, this.tickMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }

  async tick(): Promise<void> {
    let step = 'starting due checks';
    const metrics = this.ctx.metrics.scheduler;
    const stopTimer = metrics.tickDuration.startTimer();
    let outcome: 'ok' | 'failed' = 'ok';
    try {
      for (const check of await claimDueChecks(this.ctx.db)) {
        const started = await startRun(this.ctx, check, 'SCHEDULER');
        if ('refused' in started) this.ctx.logger.debug({ checkId: check.id }, started.refused);
        else metrics.runsStarted.inc();
      }
      step = 'lease sweep';
      // After a gap in sweeping (a start, a pause, a database outage) agents may
      // have been unable to renew: they get one lease length first.
      const gap = this.#lastSweep === undefined ? Infinity : Date.now() - this.#lastSweep;
      const graceSeconds = gap > Math.max(5 * this.tickMs, SWEEP_GAP_MS) ? this.ctx.leaseSeconds : undefined;
      const swept = await this.ctx.db.transaction((tx) => sweepJobs(tx, { graceSeconds }));
      this.#lastSweep = Date.now();
      metrics.sweeps.inc();
      metrics.lastSweep.set(this.#lastSweep / 1000);
      for (const locationId of swept.requeuedAt) this.ctx.events.emit('jobsQueued', locationId);
      for (const session of swept.completedSessions) this.ctx.events.emit('sessionCompleted', session);
      // Completions release a group run's next sessions at once; this catches any a crash or restart left held.
      step = 'releasing group runs';
      await releaseGroupRuns(this.ctx);
      step = 'alert reminders';
      await sendDueReminders(this.ctx);
      // E-mail, analyses and alerts whose retry is due, or that a restart left behind.
      this.ctx.wakeOutbox();
      this.ctx.wakeAnalyses();
      this.ctx.wakeAlerts();
    } catch (error) {
      outcome = 'failed';
      // While the database is away every tick fails: one line when it goes, one when it is back.
      if (!reportDatabaseFailure(this.ctx.db.outage, this.ctx.logger, `scheduler tick (${step})`, error)) {
        this.ctx.logger.error({ err: error, step }, 'scheduler tick failed; retrying next tick');
      }
    } finally {
      stopTimer();
      metrics.ticks.inc({ outcome });
    }
  }
}
