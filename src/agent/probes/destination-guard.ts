/**
 * A private location's destination policy, as its jobs carry it: checks of
 * that location open no connection (and send no ping) to an address it
 * denies. Judged on the resolved address, after any redirect, just before
 * connecting, so neither DNS nor a redirect can lead a check around it.
 */
import { DestinationDeniedError, InvalidSettingsError } from '../../errors/index.js';
import type { Job } from '../../protocol/agent-api.js';
import { DestinationPolicy, describeDenial, parseCidrList } from '../../net-policy/index.js';

/** The job's policy, undefined when it has none (or one that allows everything). */
export function jobDestinationPolicy(job: Pick<Job, 'destinationPolicy'>): DestinationPolicy | undefined {
  const lists = job.destinationPolicy;
  if (lists === undefined) return undefined;
  const allowed = parseCidrList(lists.allowed);
  const denied = parseCidrList(lists.denied);
  for (const [name, parsed] of [['allowed', allowed], ['denied', denied]] as const) {
    if ('invalid' in parsed) throw new InvalidSettingsError(`destinationPolicy.${name}: "${parsed.invalid}" is not an address range`);
  }
  if (!('cidrs' in allowed) || !('cidrs' in denied)) return undefined;
  const policy = new DestinationPolicy({ allowed: allowed.cidrs, denied: denied.cidrs });
  return policy.allowsEverything ? undefined : policy;
}

/** Throws DestinationDeniedError when the policy denies `address`; `target` names what the check was going to reach. */
export function assertDestinationAllowed(policy: DestinationPolicy | undefined, address: string, target: string): void {
  if (policy === undefined) return;
  const verdict = policy.decide(address);
  if (verdict.allowed) return;
  const via = target === address ? '' : ` (${target})`;
  throw new DestinationDeniedError(
    `Not connecting to ${address}${via}: ${describeDenial(verdict)}, which this private location's destination policy denies`,
  );
}
