/**
 * The agent's scheduled chores, on croner: clearing what jobs and engine
 * installs left on disk, pruning the dependency cache, and the periodic state
 * summary. A chore that fails is logged and tried again at its next time; a
 * chore still running when its next time comes is skipped, not doubled
 * (chore-schedule.ts).
 */
import type { Logger } from '../../logging.js';
import { ENGINE_PACKAGES, engineDirectoryName } from '../playwright-suite/engines.js';
import type { PlaywrightEngine } from '../../protocol/playwright-settings.js';
import type { AgentConfig } from '../config.js';
import type { AgentMetrics, AgentState } from '../metrics.js';
import { pruneDependencyCache, removeStaleSandboxes, removeUnusedEngines } from './stale-files.js';
import { StateSummaries } from './state-summary.js';
import { scheduleChore } from './chore-schedule.js';

export interface Housekeeping {
  /** One clean-up pass now (also the first thing done at start); resolves when it is done. */
  cleanUp(): Promise<void>;
  /** One summary line now. */
  summarize(): Promise<void>;
  stop(): Promise<void>;
}

export interface HousekeepingOptions {
  config: AgentConfig;
  logger: Logger;
  metrics: AgentMetrics;
  state: AgentState;
}

export function startHousekeeping({ config, logger, metrics, state }: HousekeepingOptions): Housekeeping {
  const log = logger.child({ task: 'housekeeping' });
  const summaries = new StateSummaries(metrics, state);
  const currentEngines = new Set(Object.keys(ENGINE_PACKAGES).map((engine) => engineDirectoryName(engine as PlaywrightEngine)));

  const cleanUp = async () => {
    // An uptime agent writes no sandboxes, engines or caches: there is nothing of its own to clear.
    if (config.mode !== 'full') return;
    try {
      const sandboxes = await removeStaleSandboxes(config.sandbox.directory);
      const engines = await removeUnusedEngines(config.sandbox.enginesDirectory, currentEngines);
      const cache = config.sandbox.dependencyCache
        ? await pruneDependencyCache(config.sandbox.dependencyCache, config.housekeeping.dependencyCacheMaxAgeMs)
        : { files: 0, bytes: 0 };
      const removed = { sandboxes, engines, cachedFiles: cache.files, cachedBytes: cache.bytes };
      if (sandboxes + engines + cache.files > 0) log.info(removed, 'removed stale files');
      else log.debug('nothing stale to remove');
    } catch (error) {
      log.warn(`clean-up failed, trying again at its next time: ${(error as Error).message}`);
    }
  };
  const summarize = async () => {
    try {
      log.info({ state: await summaries.next() }, 'state summary');
    } catch (error) {
      log.warn(`state summary failed: ${(error as Error).message}`);
    }
  };

  const chores = [
    scheduleChore(config.housekeeping.schedule, 'clean-up', cleanUp, log),
    scheduleChore(config.housekeeping.summarySchedule, 'state summary', summarize, log),
  ];
  const first = cleanUp();

  return {
    cleanUp,
    summarize,
    async stop() {
      for (const chore of chores) chore.stop();
      await first;
    },
  };
}
