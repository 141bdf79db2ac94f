import type { Logger } from '../logging.js';
import type { OutageLog } from '../outage-log.js';
import { reportDatabaseFailure } from './db/connection-errors.js';

export interface BackgroundRounds {
  /** Starts a round now, or one more after the round under way. */
  wake: () => void;
  /** Resolves when no round is under way. */
  idle: () => Promise<void>;
}

/**
 * One round at a time of work that drains a table (e-mail to send, analyses
 * to write): a wake-up during a round makes it go round once more, so work
 * queued meanwhile is not left for the scheduler's next tick. `round`
 * returns how much it did; it is called again until it does nothing.
 *
 * A round that fails because the database is unreachable is told to
 * `outage` (one line per outage, not per round) and not gone round again:
 * the scheduler's next tick wakes it. Other failures are logged each time
 * (see reportDatabaseFailure).
 */
export function backgroundRounds(
  round: () => Promise<number>,
  logger: Logger,
  what: string,
  outage?: OutageLog,
): BackgroundRounds {
  let running: Promise<void> | undefined;
  let again = false;
  const drain = async () => {
    do {
      again = false;
      while ((await round()) > 0) {
        // more may be due
      }
    } while (again);
  };
  return {
    wake: () => {
      if (running) {
        again = true;
        return;
      }
      running = drain()
        .catch((error: unknown) => {
          again = false;
          if (!outage || !reportDatabaseFailure(outage, logger, what, error)) {
            logger.error({ err: error }, `${what} failed; the next tick retries`);
          }
        })
        .finally(() => (running = undefined));
    },
    idle: async () => {
      await running;
    },
  };
}
