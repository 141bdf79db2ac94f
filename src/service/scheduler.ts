import type { ServiceContext } from './context.js';
import { sendDueReminders } from './alerts/engine.js';
import { releaseGroupRuns } from './group-runs.js';
import { isDatabaseOutage, reportDatabaseFailure } from './db/connection-errors.js';
import { announceRun, createRun, type CreatedRun } from './runs.js';
import { claimDueCheck, skipDueRun, type CheckRow } from './store/checks.js';
import { sweepJobs } from './store/jobs.js';
import { takeSweepTurn } from './store/lease-sweeps.js';
import { pruneWindows } from './store/rate-limit-windows.js';

/** A sweep this long after the last one of any instance first gives every lease one lease length. */
const SWEEP_GAP_MS = 5000;
/** Runs one tick starts at most; the rest stay due for the next tick. */
const RUNS_PER_TICK = 200;
/** How often rate-limit windows that ran out are deleted (by each instance; the deletes are idempotent). */
const PRUNE_EVERY_MS = 60_000;

/**
 * Each tick: start a run for every check whose time has come, re-offer jobs
 * whose lease ran out, time out what no agent took, move group runs on, send
 * alert reminders, e-mail and alerts that are due, write pending root
 * cause analyses, and (once a minute) forget rate-limit windows that ran out.
 * Every instance of the service ticks; each step claims its work with row
 * locks, so instances share the work and never do one piece twice.
 * Ticks never overlap. A tick that fails is not retried before the next one;
 * one that fails because the database is unreachable is told to the
 * database's outage log, which logs each outage once.
 */
export class Scheduler {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  /** When a lease sweep last succeeded in this process, for /metrics; undefined before the first. */
  #lastSweep: number | undefined;
  #lastPrune = 0;

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

  /**
   * Claims the most overdue check and makes its run in one transaction, so
   * each turn of a check is run exactly once however many instances tick:
   * the row lock keeps other instances off it until the commit, and a crash
   * before the commit leaves the turn due. A run that fails for any reason
   * but the database's absence skips the turn (logged) rather than blocking
   * every later check. Undefined when nothing is due.
   */
  private async startDueRun(): Promise<{ check: CheckRow; created: CreatedRun } | undefined> {
    let claimed: CheckRow | undefined;
    try {
      const started = await this.ctx.db.transaction(async (tx) => {
        claimed = await claimDueCheck(tx);
        return claimed && { check: claimed, created: await createRun(tx, claimed, 'SCHEDULER') };
      });
      if (started) announceRun(this.ctx, started.created);
      return started;
    } catch (error) {
      if (!claimed || isDatabaseOutage(error)) throw error;
      const check = claimed;
      this.ctx.logger.error({ err: error, checkId: check.id }, 'a scheduled run could not be made; skipping this turn of the check');
      await skipDueRun(this.ctx.db, check.id);
      return { check, created: { run: { refused: 'the run could not be made' }, queuedAt: [] } };
    }
  }

  async tick(): Promise<void> {
    let step = 'starting due checks';
    const metrics = this.ctx.metrics.scheduler;
    const stopTimer = metrics.tickDuration.startTimer();
    let outcome: 'ok' | 'failed' = 'ok';
    try {
      for (let n = 0; n < RUNS_PER_TICK; n += 1) {
        const started = await this.startDueRun();
        if (!started) break;
        if ('refused' in started.created.run) this.ctx.logger.debug({ checkId: started.check.id }, started.created.run.refused);
        else metrics.runsStarted.inc();
      }
      step = 'lease sweep';
      // After a gap in sweeping by every instance (none running, a database
      // outage) agents may have been unable to renew: they get one lease
      // length first. An instance starting while others sweep gives none.
      const swept = await this.ctx.db.transaction(async (tx) => {
        const gap = (await takeSweepTurn(tx)) ?? Infinity;
        const graceSeconds = gap > Math.max(5 * this.tickMs, SWEEP_GAP_MS) ? this.ctx.leaseSeconds : undefined;
        return sweepJobs(tx, { graceSeconds });
      });
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
      if (Date.now() - this.#lastPrune >= PRUNE_EVERY_MS) {
        step = 'pruning rate-limit windows';
        await pruneWindows(this.ctx.db);
        this.#lastPrune = Date.now();
      }
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
