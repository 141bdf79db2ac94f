import type { CheckType } from './enums.js';

/**
 * Two lanes share an agent: uptime probes run by the hundred in-process,
 * script checks one sandbox each. Claims ask for room per lane.
 */
export type Lane = 'uptime' | 'script';

export const SCRIPT_CHECK_TYPES: readonly CheckType[] = ['MULTI_STEP', 'BROWSER', 'PLAYWRIGHT'];

export function laneOf(checkType: CheckType): Lane {
  return SCRIPT_CHECK_TYPES.includes(checkType) ? 'script' : 'uptime';
}
