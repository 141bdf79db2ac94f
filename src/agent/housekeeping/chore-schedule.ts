/**
 * One chore on a cron schedule. A chore still running when its next time
 * comes is skipped, not doubled; one that throws is logged and tried again at
 * its next time; neither ever keeps a stopping agent alive.
 *
 * croner rather than node-cron: without a time zone croner reads local time
 * from Date, where node-cron formats every date it considers through
 * Intl.DateTimeFormat, whose ICU data costs every agent about 8 MB of resident
 * memory for a log line every ten minutes (docs/performance.md).
 */
import { Cron } from 'croner';
import { CRON_MODE } from '../../config/env.js';

export interface ChoreLog {
  debug(message: string): void;
  warn(message: string): void;
}

export interface ScheduledChore {
  /** No run starts after this; one under way is left to finish. */
  stop(): void;
}

export function scheduleChore(pattern: string, name: string, chore: () => Promise<void>, log: ChoreLog): ScheduledChore {
  const job = new Cron(
    pattern,
    {
      mode: CRON_MODE,
      unref: true,
      protect: () => log.debug(`${name} is still running at its next time: that time is skipped`),
      catch: (error) => log.warn(`${name} failed, trying again at its next time: ${error instanceof Error ? error.message : String(error)}`),
    },
    () => chore(),
  );
  return { stop: () => job.stop() };
}
