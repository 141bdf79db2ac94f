import type { ServiceContext } from './context.js';
import { sendDueReminders } from './alerts/engine.js';
import { releaseGroupRuns } from './group-runs.js';
import { startRun } from './runs.js';
import { claimDueChecks } from './store/checks.js';
import { sweepJobs } from './store/jobs.js';

/**
 * Each tick: start a run for every check whose time has come, re-offer jobs
 * whose lease ran out, time out what no agent took, move group runs on, send
 * alert reminders, e-mail and alerts that are due, and write pending root
 * cause analyses.
 * Ticks never overlap.
 */
export class Scheduler {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

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
    try {
      for (const check of await claimDueChecks(this.ctx.db)) {
        const started = await startRun(this.ctx, check, 'SCHEDULER');
        if ('refused' in started) this.ctx.logger.debug({ checkId: check.id }, started.refused);
      }
      const swept = await this.ctx.db.transaction((tx) => sweepJobs(tx));
      for (const locationId of swept.requeuedAt) this.ctx.events.emit('jobsQueued', locationId);
      for (const session of swept.completedSessions) this.ctx.events.emit('sessionCompleted', session);
      // Completions release a group run's next sessions at once; this catches any a crash or restart left held.
      await releaseGroupRuns(this.ctx);
      await sendDueReminders(this.ctx);
      // E-mail, analyses and alerts whose retry is due, or that a restart left behind.
      this.ctx.wakeOutbox();
      this.ctx.wakeAnalyses();
      this.ctx.wakeAlerts();
    } catch (error) {
      this.ctx.logger.error({ err: error }, 'scheduler tick failed; retrying next tick');
    }
  }
}
