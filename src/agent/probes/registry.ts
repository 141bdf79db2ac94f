/**
 * Which probe runs which check type. A lookup table, so adding TCP or DNS is
 * one line here and the dispatch code never changes.
 */
import { UnsupportedCheckTypeError } from '../../errors/index.js';
import type { CheckType } from '../../protocol/enums.js';
import type { Probe } from './probe.js';
import { urlProbe } from './url.js';

export const probes: ReadonlyMap<CheckType, Probe<unknown>> = new Map<CheckType, Probe<unknown>>([
  [urlProbe.checkType, urlProbe],
]);

/** The check types this agent can run, e.g. for the hello handshake. */
export function supportedCheckTypes(): CheckType[] {
  return [...probes.keys()];
}

/** Takes a plain string: a job may name a type this agent version has never heard of. */
export function probeFor(checkType: string): Probe<unknown> {
  const probe = (probes as ReadonlyMap<string, Probe<unknown>>).get(checkType);
  if (probe === undefined) {
    throw new UnsupportedCheckTypeError(
      `No probe for check type ${checkType}; this agent runs ${supportedCheckTypes().join(', ')}`,
    );
  }
  return probe;
}
