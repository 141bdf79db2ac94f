import { expect } from 'vitest';
import type { Figures } from './accounting.js';
import type { World } from './world.js';

export interface NothingLost {
  triggered: number;
  /** Every session must be final (PASSED) within this long after the fault was over. */
  withinMsAfterFault: number;
  /** Sessions not final when the fault struck: only those may run twice. */
  unfinishedAtFault: number;
}

/**
 * What "nothing is lost" means in every scenario: every triggered session
 * PASSED (none TIMED_OUT because its job was given up, none still waiting),
 * all of them by the scenario's bound, and no check run again but work the
 * fault interrupted. Soft: a failing scenario reports all its figures.
 */
export function expectNothingLost(world: World, figures: Figures, bounds: NothingLost): void {
  if (figures.lost > 0 || figures.afterFaultMs === null || figures.afterFaultMs > bounds.withinMsAfterFault) {
    console.log(`[fault ${figures.scenario}] processes' last lines:\n${world.tails(15)}`);
  }
  expect.soft(figures.triggered, 'sessions triggered').toBe(bounds.triggered);
  expect.soft(figures.lost, 'lost: sessions that did not end PASSED by the deadline').toBe(0);
  expect.soft(figures.timedOut, 'sessions TIMED_OUT (their job given up: the check never ran)').toBe(0);
  expect.soft(figures.unfinished, 'sessions still unfinished at the deadline').toBe(0);
  expect
    .soft(figures.afterFaultMs ?? Number.POSITIVE_INFINITY, `all finished within ${bounds.withinMsAfterFault / 1000} s after the fault`)
    .toBeLessThanOrEqual(bounds.withinMsAfterFault);
  expect
    .soft(figures.runTwice, 'run twice: only sessions the fault caught unfinished may run again')
    .toBeLessThanOrEqual(bounds.unfinishedAtFault);
  expect.soft(figures.hitsMissing, 'sessions that ran without a request reaching the target (harness check)').toBe(0);
}
